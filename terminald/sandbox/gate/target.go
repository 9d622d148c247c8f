package gate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// target is the Unix socket a connect names, as the sandbox sees it.
type target struct {
	// name is the address as the sandbox gave it, for the log.
	name string
	// file is an O_PATH descriptor of the socket file, -1 for an abstract
	// name; dev and ino identify that file.
	file     int
	dev, ino uint64
	// abstract is the abstract name, without its leading NUL.
	abstract string
}

func (t target) close() {
	if t.file >= 0 {
		unix.Close(t.file)
	}
}

// addr is where the supervisor connects to reach exactly t: the very
// inode it checked, through its own descriptor, so that nothing can be
// swapped in between.
func (t target) addr() unix.Sockaddr {
	if t.file < 0 {
		return &unix.SockaddrUnix{Name: "@" + t.abstract}
	}
	return &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(t.file)}
}

// resolve finds the socket that sun_path names for process pid: in the
// process's own root (its mount namespace, its symbolic links), relative
// paths from its working directory without climbing above it, never
// through /proc's magic links.
func (p Policy) resolve(pid int, sunPath []byte) (target, unix.Errno) {
	if len(sunPath) == 0 {
		return target{}, unix.EINVAL
	}
	if sunPath[0] == 0 {
		name := string(sunPath[1:])
		return target{name: "@" + name, file: -1, abstract: name}, 0
	}
	if i := bytes.IndexByte(sunPath, 0); i >= 0 {
		sunPath = sunPath[:i]
	}
	path := string(sunPath)
	base, how := "/proc/"+strconv.Itoa(pid)+"/root", uint64(unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
	if path[0] != '/' {
		base, how = "/proc/"+strconv.Itoa(pid)+"/cwd", unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS
	}
	dir, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return target{}, unix.ESRCH
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: how})
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return target{}, unix.ENOENT
	case err != nil:
		return target{}, unix.EACCES // a climb out, a magic link: refused
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(fd)
		return target{}, unix.ECONNREFUSED // as connect to a file that is no socket
	}
	return target{name: path, file: fd, dev: st.Dev, ino: st.Ino}, 0
}

// decide says whether the sandbox may connect to t, and whether the
// connection must carry a vouch line (the MCP socket).
func (p Policy) decide(t target) (vouch, ok bool) {
	if t.file >= 0 {
		if slices.ContainsFunc(p.Vouch, func(v string) bool { return sameFile(v, t) }) {
			return true, true
		}
		if slices.ContainsFunc(p.Allowed, func(a string) bool { return sameFile(a, t) }) {
			return false, true
		}
	}
	ino, found := listener(t)
	return false, found && p.holds(ino)
}

// sameFile reports whether path names the file t is.
func sameFile(path string, t target) bool {
	if path == "" {
		return false
	}
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Dev == t.dev && st.Ino == t.ino
}

// holds reports whether a process of the sandbox — Root or one of its
// descendants — has the socket with inode ino open. A process whose
// descriptors cannot be read holds nothing. The walk follows the kernel's
// lists of each thread's children, so that it reads the sandbox's
// processes only, not every process of the machine.
func (p Policy) holds(ino uint64) bool {
	children := childrenOf
	root := strconv.Itoa(p.Root)
	if _, err := os.Stat("/proc/" + root + "/task/" + root + "/children"); err != nil {
		children = scanChildren() // a kernel without the lists: read every process once
	}
	queue, seen := []int{p.Root}, map[int]bool{}
	for len(queue) > 0 && len(seen) < 1<<16 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		inodes, err := procfs.Default.SocketInodes(pid)
		if err == nil && slices.Contains(inodes, ino) {
			return true
		}
		queue = append(queue, children(pid)...)
	}
	return false
}

// childrenOf lists the children of process pid, of every one of its
// threads.
func childrenOf(pid int) []int {
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// scanChildren reads every process's parent once and answers childrenOf
// from that.
func scanChildren() func(int) []int {
	stats, _ := procfs.Default.AllStats()
	kids := map[int][]int{}
	for _, st := range stats {
		kids[st.PPID] = append(kids[st.PPID], st.PID)
	}
	return func(pid int) []int { return kids[pid] }
}
