// Package procfs reads the few parts of Linux /proc that Phantom needs:
// /proc/<pid>/stat (session, process group, parent, start time), the socket
// inodes a process holds open, its executable and its command line.
//
// It is deliberately small and strict, because its answers are used for
// decisions that matter: the port tracker attributes listening sockets to
// tabs with it, and the gateway uses it to check who is on the other end of
// a Unix socket.
//
// Two facts about /proc shape the API:
//
//   - /proc is not a snapshot. Processes appear and vanish while it is being
//     walked, so every walk here skips a process that disappears between
//     readdir and open (ENOENT, ESRCH) instead of failing the whole walk.
//   - A pid is only a name, and names are reused. A pid read from one file may
//     denote a different process by the time another file is read. The start
//     time (field 22 of stat) together with the pid identifies a process for
//     the lifetime of the system; compare it whenever two reads must be about
//     the same process. IsDescendant uses it to refuse parent links that can
//     only come from a reused pid.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stat is the part of /proc/<pid>/stat that Phantom uses. Field numbers in
// the comments are those of proc(5).
type Stat struct {
	PID       int    // (1) process id
	Comm      string // (2) command name, without the parentheses; may contain any byte but NUL
	State     byte   // (3) one of "RSDZTtWXxKPI"; always an ASCII letter
	PPID      int    // (4) parent pid; 0 for init and kthreadd
	PGRP      int    // (5) process group id
	Session   int    // (6) session id
	TTYNr     int    // (7) controlling terminal device number, 0 if none
	TPGID     int    // (8) foreground process group of the controlling terminal, -1 if none
	StartTime uint64 // (22) start time in clock ticks since boot
}

// statFieldsAfterComm is how many fields ParseStat needs after the comm
// field: state (3) through starttime (22).
const statFieldsAfterComm = 22 - 2

// ParseStat parses the contents of a /proc/<pid>/stat file.
//
// The command name is the only free-form field and it may contain spaces,
// parentheses and even newlines (a program can name itself anything with
// prctl(PR_SET_NAME) or by its file name). Splitting the line on spaces, or
// ending the name at the first ')', lets a process forge the fields after it
// (sudo, CVE-2017-1000367). The name therefore runs from the first '(' to
// the LAST ')': nothing after it is under the process's control.
func ParseStat(b []byte) (Stat, error) {
	var st Stat
	open := bytes.IndexByte(b, '(')
	if open < 0 {
		return st, errors.New("procfs: stat: no '(' before the command name")
	}
	closing := bytes.LastIndexByte(b, ')')
	if closing < open {
		return st, errors.New("procfs: stat: no ')' after the command name")
	}
	if open < 2 || b[open-1] != ' ' {
		return st, errors.New("procfs: stat: want \"<pid> (\" at the start")
	}
	pid, err := parseDecimalInt(b[:open-1])
	if err != nil || pid <= 0 {
		return st, fmt.Errorf("procfs: stat: bad pid %q", truncate(b[:open-1]))
	}
	st.PID = pid
	st.Comm = string(b[open+1 : closing])

	rest := b[closing+1:]
	if len(rest) == 0 || rest[0] != ' ' {
		return st, fmt.Errorf("procfs: stat %d: want a space after the command name", pid)
	}
	fields := bytes.Fields(rest)
	if len(fields) < statFieldsAfterComm {
		return st, fmt.Errorf("procfs: stat %d: truncated: %d fields after the command name, want at least %d",
			pid, len(fields), statFieldsAfterComm)
	}
	if len(fields[0]) != 1 || !isASCIILetter(fields[0][0]) {
		return st, fmt.Errorf("procfs: stat %d: bad state %q", pid, truncate(fields[0]))
	}
	st.State = fields[0][0]

	ints := []struct {
		dst  *int
		name string
		idx  int // index in fields; field number minus 3
	}{
		{&st.PPID, "ppid", 1},
		{&st.PGRP, "pgrp", 2},
		{&st.Session, "session", 3},
		{&st.TTYNr, "tty_nr", 4},
		{&st.TPGID, "tpgid", 5},
	}
	for _, f := range ints {
		v, err := parseDecimalInt(fields[f.idx])
		if err != nil {
			return st, fmt.Errorf("procfs: stat %d: bad %s %q: %v", pid, f.name, truncate(fields[f.idx]), err)
		}
		*f.dst = v
	}
	startField := fields[22-3]
	st.StartTime, err = strconv.ParseUint(string(startField), 10, 64)
	if err != nil || startField[0] == '+' {
		return st, fmt.Errorf("procfs: stat %d: bad starttime %q", pid, truncate(startField))
	}
	return st, nil
}

// parseDecimalInt accepts an optional '-' and decimal digits only (no '+',
// no underscores, no base prefixes), which is what the kernel prints.
func parseDecimalInt(b []byte) (int, error) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return 0, errors.New("not a number")
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, errors.New("not a decimal number")
		}
	}
	v, err := strconv.ParseInt(string(b), 10, strconv.IntSize)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return int(v), nil
}

func isASCIILetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// truncate keeps error messages short when the input is hostile or garbage.
func truncate(b []byte) string {
	const max = 32
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// FS is a procfs mount. Tests can point Root at a directory laid out like
// /proc (numeric directories holding "stat", "fd/<n>" symlinks, ...).
type FS struct {
	Root string
}

// Default is the real /proc.
var Default = FS{Root: "/proc"}

// ReadStat reads /proc/<pid>/stat from Default.
func ReadStat(pid int) (Stat, error) { return Default.Stat(pid) }

func (p FS) path(pid int, elem ...string) string {
	return filepath.Join(append([]string{p.Root, strconv.Itoa(pid)}, elem...)...)
}

// Stat reads and parses <Root>/<pid>/stat. If the process does not exist
// (or vanished while being read) the error satisfies IsVanished.
func (p FS) Stat(pid int) (Stat, error) {
	b, err := os.ReadFile(p.path(pid, "stat"))
	if err != nil {
		return Stat{}, err
	}
	if len(b) == 0 {
		// A task that is torn down between open and read can yield an empty
		// read; report it as gone rather than as a parse error.
		return Stat{}, &vanishedError{pid}
	}
	st, err := ParseStat(b)
	if err != nil {
		return Stat{}, err
	}
	if st.PID != pid {
		return Stat{}, fmt.Errorf("procfs: %s says pid %d", p.path(pid, "stat"), st.PID)
	}
	return st, nil
}

// vanishedError reports a stat file that read empty: the process is gone.
type vanishedError struct{ pid int }

func (e *vanishedError) Error() string {
	return fmt.Sprintf("procfs: stat of pid %d read empty: process vanished", e.pid)
}
func (e *vanishedError) Unwrap() error { return fs.ErrNotExist }

// IsVanished reports whether err means the process no longer exists: its
// /proc directory disappeared (ENOENT) or the task died while being read
// (ESRCH). Walks skip such processes instead of failing.
func IsVanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// Pids lists the numerically named directories under Root, i.e. the thread
// group ids of the processes visible to us. The list is stale as soon as it
// is returned.
func (p FS) Pids() ([]int, error) {
	f, err := os.Open(p.Root)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '1' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// AllStats reads the stat of every process under Root. Processes that exit
// during the walk are skipped: /proc is not a snapshot, so the result mixes
// moments and callers must tolerate a parent that is missing or a pid whose
// PPID names an already-reused pid (see IsDescendant).
func (p FS) AllStats() ([]Stat, error) {
	pids, err := p.Pids()
	if err != nil {
		return nil, err
	}
	stats := make([]Stat, 0, len(pids))
	for _, pid := range pids {
		st, err := p.Stat(pid)
		if err != nil {
			if IsVanished(err) {
				continue
			}
			return nil, err
		}
		stats = append(stats, st)
	}
	return stats, nil
}

// StatMap indexes stats by pid.
func StatMap(stats []Stat) map[int]Stat {
	m := make(map[int]Stat, len(stats))
	for _, st := range stats {
		m[st.PID] = st
	}
	return m
}

// SocketInodes returns the inode numbers of the sockets process pid has open,
// found by reading the fd symlinks <Root>/<pid>/fd/* ("socket:[12345]").
//
// An error is returned only for the fd directory itself: the process vanished
// (IsVanished) or belongs to another user (fs.ErrPermission). A single fd
// that is closed between readdir and readlink is skipped: that race is
// normal in a process that is running.
func (p FS) SocketInodes(pid int) ([]uint64, error) {
	dir := p.path(pid, "fd")
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	// readlinkat relative to the directory fd saves a path lookup per fd.
	// (Control rather than f.Fd(): Fd would cost an fcntl to switch the
	// descriptor to blocking mode.)
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var inodes []uint64
	buf := make([]byte, 64)
	cerr := rc.Control(func(dfd uintptr) {
		for _, name := range names {
			n, err := unix.Readlinkat(int(dfd), name, buf)
			if err != nil || n >= len(buf) {
				// Vanished or unreadable fd, or a target longer than any
				// "socket:[N]" can be: not a socket we can use.
				continue
			}
			if ino, ok := parseSocketLink(buf[:n]); ok {
				inodes = append(inodes, ino)
			}
		}
	})
	if cerr != nil {
		return nil, cerr
	}
	return inodes, nil
}

// parseSocketLink parses "socket:[12345]".
func parseSocketLink(b []byte) (uint64, bool) {
	const prefix = "socket:["
	if len(b) < len(prefix)+2 || string(b[:len(prefix)]) != prefix || b[len(b)-1] != ']' {
		return 0, false
	}
	digits := b[len(prefix) : len(b)-1]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(string(digits), 10, 64)
	return v, err == nil
}

// Exe returns the target of <Root>/<pid>/exe: the path of the executable
// the process is running (with " (deleted)" appended by the kernel if the file
// was removed). Reading another user's exe needs privileges.
func (p FS) Exe(pid int) (string, error) {
	return os.Readlink(p.path(pid, "exe"))
}

// Cmdline returns the process's argument vector from <Root>/<pid>/cmdline.
// It is empty for kernel threads and zombies. The process can rewrite this
// memory at will, so it is informative only: never base a security decision
// on it.
func (p FS) Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(p.path(pid, "cmdline"))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return []string{}, nil
	}
	// Arguments are NUL-terminated; a process that overwrote its argv may
	// leave the last one unterminated.
	s := strings.TrimSuffix(string(b), "\x00")
	return strings.Split(s, "\x00"), nil
}

// IsDescendant reports whether pid is a strict descendant of ancestor,
// following PPID links through stats.
//
// It is loop-safe (a chain longer than len(stats) stops), and it refuses a
// link from a child to a "parent" that started after the child: a parent is
// always older than its child, so such a link means that the parent pid was
// reused between the reads of the walk. A pid missing from stats ends the
// chain, except that a direct PPID match with a missing ancestor still counts
// (the snapshot said so and there is nothing to contradict it).
func IsDescendant(stats map[int]Stat, pid, ancestor int) bool {
	if pid == ancestor || ancestor <= 0 {
		return false
	}
	cur, ok := stats[pid]
	if !ok {
		return false
	}
	for steps := 0; steps <= len(stats); steps++ {
		ppid := cur.PPID
		if ppid <= 0 || ppid == cur.PID {
			return false
		}
		parent, ok := stats[ppid]
		if ok && parent.StartTime > cur.StartTime {
			return false // pid reuse: this "parent" is younger than its child
		}
		if ppid == ancestor {
			return true
		}
		if !ok {
			return false
		}
		cur = parent
	}
	return false
}
