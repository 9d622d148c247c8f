package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// formatStat renders st the way the kernel prints /proc/<pid>/stat, with
// zeros for the fields ParseStat ignores.
func formatStat(st Stat) string {
	// Fields 9..21 (13 of them) sit between tpgid and starttime.
	return fmt.Sprintf("%d (%s) %c %d %d %d %d %d %s%d 0 0 0\n",
		st.PID, st.Comm, st.State, st.PPID, st.PGRP, st.Session, st.TTYNr, st.TPGID,
		strings.Repeat("0 ", 13), st.StartTime)
}

// A line captured from a real bash on this kernel (6.18).
const realBash = "4112 (bash) S 4100 4112 4112 34816 4130 4194560 1404 7203 0 3 3 1 12 9 20 0 1 0 5077 9400320 1376 18446744073709551615 94857446866944 94857447786493 140735286417232 0 0 0 65536 3686404 1266761467 1 0 0 17 1 0 0 0 0 0 94857448023280 94857448070828 94857467076608 140735286423197 140735286423202 140735286423202 140735286427630 0\n"

func TestParseStat(t *testing.T) {
	tail := " S 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123 0 0\n"
	tests := []struct {
		name    string
		in      string
		want    Stat
		wantErr string // substring; "" means success
	}{
		{name: "real bash", in: realBash,
			want: Stat{PID: 4112, Comm: "bash", State: 'S', PPID: 4100, PGRP: 4112, Session: 4112, TTYNr: 34816, TPGID: 4130, StartTime: 5077}},
		{name: "spaces in comm", in: "7 (a b c)" + tail,
			want: Stat{PID: 7, Comm: "a b c", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 4, TPGID: 5, StartTime: 123}},
		// The sudo CVE-2017-1000367 shape: the name tries to supply fields.
		{name: "forged fields in comm", in: "7 (x) R 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 999)" + tail,
			want: Stat{PID: 7, Comm: "x) R 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 999", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 4, TPGID: 5, StartTime: 123}},
		{name: "close paren in comm", in: "7 ())" + tail,
			want: Stat{PID: 7, Comm: ")", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 4, TPGID: 5, StartTime: 123}},
		{name: "open paren in comm", in: "7 (((()" + tail,
			want: Stat{PID: 7, Comm: "(((", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 4, TPGID: 5, StartTime: 123}},
		{name: "newline in comm", in: "7 (a\nb) \n)" + tail,
			want: Stat{PID: 7, Comm: "a\nb) \n", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 4, TPGID: 5, StartTime: 123}},
		{name: "empty comm", in: "7 ()" + tail,
			want: Stat{PID: 7, Comm: "", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 4, TPGID: 5, StartTime: 123}},
		{name: "negative tpgid", in: "7 (x) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 123\n",
			want: Stat{PID: 7, Comm: "x", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 0, TPGID: -1, StartTime: 123}},
		{name: "max starttime", in: "7 (x) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551615",
			want: Stat{PID: 7, Comm: "x", State: 'S', PPID: 1, PGRP: 2, Session: 3, TTYNr: 0, TPGID: -1, StartTime: 1<<64 - 1}},

		{name: "empty", in: "", wantErr: "no '('"},
		{name: "no close paren", in: "7 (abc S 1 2 3", wantErr: "no ')'"},
		{name: "close before open", in: "7 )x( S", wantErr: "no ')'"},
		{name: "no pid", in: "(x)" + tail, wantErr: "want \"<pid> (\""},
		{name: "no space before paren", in: "7(x)" + tail, wantErr: "want \"<pid> (\""},
		{name: "pid not numeric", in: "7a (x)" + tail, wantErr: "bad pid"},
		{name: "pid negative", in: "-7 (x)" + tail, wantErr: "bad pid"},
		{name: "pid zero", in: "0 (x)" + tail, wantErr: "bad pid"},
		{name: "pid huge", in: "99999999999999999999999 (x)" + tail, wantErr: "bad pid"},
		{name: "no space after comm", in: "7 (x)S 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "want a space"},
		{name: "truncated", in: "7 (x) S 1 2 3 4 5 0 0", wantErr: "truncated"},
		{name: "truncated at comm", in: "7 (x)", wantErr: "want a space"},
		{name: "state two letters", in: "7 (x) SS 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "bad state"},
		{name: "state not a letter", in: "7 (x) ) 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "truncated"},
		{name: "state digit", in: "7 (x) 1 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "bad state"},
		{name: "ppid not numeric", in: "7 (x) S a 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "bad ppid"},
		{name: "ppid plus sign", in: "7 (x) S +1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "bad ppid"},
		{name: "session hex", in: "7 (x) S 1 2 0x3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "bad session"},
		{name: "session huge", in: "7 (x) S 1 2 99999999999999999999 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "bad session"},
		{name: "tpgid lone minus", in: "7 (x) S 1 2 3 4 - 0 0 0 0 0 0 0 0 0 20 0 1 0 123", wantErr: "bad tpgid"},
		{name: "starttime negative", in: "7 (x) S 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 -123", wantErr: "bad starttime"},
		{name: "starttime plus", in: "7 (x) S 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 +123", wantErr: "bad starttime"},
		{name: "starttime overflow", in: "7 (x) S 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551616", wantErr: "bad starttime"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseStat succeeded with %+v, want error containing %q", got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %q does not contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseStat: %v", err)
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(realBash))
	f.Add([]byte("7 (a) b) S 1 2 3 4 5 0 0 0 0 0 0 0 0 0 20 0 1 0 123\n"))
	f.Add([]byte("7 () S 1 2 3 4 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551615"))
	f.Add([]byte("1 (x\n) Z 0 0 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStat(b)
		if err != nil {
			return
		}
		again, err := ParseStat([]byte(formatStat(st)))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", formatStat(st), err)
		}
		if again != st {
			t.Fatalf("round trip: %+v != %+v", again, st)
		}
	})
}

func TestReadStatSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PID != os.Getpid() || st.PPID != os.Getppid() {
		t.Errorf("pid/ppid = %d/%d, want %d/%d", st.PID, st.PPID, os.Getpid(), os.Getppid())
	}
	sid, _ := getsid(0)
	if st.Session != sid {
		t.Errorf("session = %d, want %d", st.Session, sid)
	}
	if st.PGRP != syscall.Getpgrp() {
		t.Errorf("pgrp = %d, want %d", st.PGRP, syscall.Getpgrp())
	}
	if st.State != 'R' && st.State != 'S' {
		t.Errorf("state = %c", st.State)
	}
	if st.StartTime == 0 {
		t.Errorf("starttime 0")
	}
}

func getsid(pid int) (int, error) {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(sid), nil
}

func startSleep(t *testing.T, setsid bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "5")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestReadStatChild(t *testing.T) {
	self, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cmd := startSleep(t, true)
	pid := cmd.Process.Pid
	var st Stat
	// Right after fork the child may still be running our code (comm is the
	// test binary's); wait for exec to finish so Comm is "sleep".
	for deadline := time.Now().Add(5 * time.Second); ; {
		st, err = ReadStat(pid)
		if err != nil {
			t.Fatal(err)
		}
		if st.Comm == "sleep" || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if st.Comm != "sleep" {
		t.Errorf("comm = %q", st.Comm)
	}
	if st.Session != pid || st.PGRP != pid {
		t.Errorf("session/pgrp = %d/%d, want %d (setsid)", st.Session, st.PGRP, pid)
	}
	if st.PPID != os.Getpid() {
		t.Errorf("ppid = %d, want %d", st.PPID, os.Getpid())
	}
	if st.TTYNr != 0 || st.TPGID != -1 {
		t.Errorf("tty_nr/tpgid = %d/%d, want 0/-1 after setsid", st.TTYNr, st.TPGID)
	}
	if st.StartTime < self.StartTime {
		t.Errorf("child starttime %d < parent's %d", st.StartTime, self.StartTime)
	}
	stats, err := Default.AllStats()
	if err != nil {
		t.Fatal(err)
	}
	m := StatMap(stats)
	if !IsDescendant(m, pid, os.Getpid()) {
		t.Errorf("child not a descendant of the test")
	}
	if self.PPID > 0 && !IsDescendant(m, pid, self.PPID) {
		t.Errorf("child not a descendant of the test's parent")
	}
	if IsDescendant(m, os.Getpid(), pid) {
		t.Errorf("test is a descendant of its child")
	}

	args, err := Default.Cmdline(pid)
	if err != nil || !reflect.DeepEqual(args, []string{"sleep", "5"}) {
		t.Errorf("cmdline = %q, %v", args, err)
	}
	exe, err := Default.Exe(pid)
	if err != nil || filepath.Base(exe) != "sleep" {
		t.Errorf("exe = %q, %v", exe, err)
	}

	cmd.Process.Kill()
	cmd.Wait()
	if _, err := ReadStat(pid); !IsVanished(err) {
		t.Errorf("stat of a reaped child: err = %v, want vanished", err)
	}
	if _, err := Default.SocketInodes(pid); !IsVanished(err) {
		t.Errorf("fds of a reaped child: err = %v, want vanished", err)
	}
}

func TestSocketInodesSelf(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	var want []uint64
	for _, fd := range fds {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		want = append(want, st.Ino)
	}
	got, err := Default.SocketInodes(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("inode %d not in %v", w, got)
		}
	}
}

func TestFakeFS(t *testing.T) {
	root := t.TempDir()
	mk := func(st Stat, links ...string) {
		dir := filepath.Join(root, fmt.Sprint(st.PID))
		os.MkdirAll(filepath.Join(dir, "fd"), 0o755)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(formatStat(st)), 0o644)
		for i, l := range links {
			os.Symlink(l, filepath.Join(dir, "fd", fmt.Sprint(i)))
		}
	}
	mk(Stat{PID: 1, Comm: "init", State: 'S', Session: 1, PGRP: 1, StartTime: 1})
	mk(Stat{PID: 10, Comm: "sh", State: 'S', PPID: 1, Session: 10, PGRP: 10, StartTime: 50},
		"/dev/pts/0", "socket:[1234]", "socket:[x]", "socket:[]", "pipe:[99]", "socket:[18446744073709551615]")
	mk(Stat{PID: 11, Comm: "srv", State: 'S', PPID: 10, Session: 11, PGRP: 11, StartTime: 60})
	// A stale link: pid 12's "parent" 13 is younger, i.e. 13 is a reused pid.
	mk(Stat{PID: 12, Comm: "orphan", State: 'S', PPID: 13, Session: 12, PGRP: 12, StartTime: 70})
	mk(Stat{PID: 13, Comm: "new", State: 'S', PPID: 10, Session: 10, PGRP: 10, StartTime: 80})
	// Loop (impossible in a real /proc, but must not hang).
	mk(Stat{PID: 20, Comm: "a", State: 'S', PPID: 21, StartTime: 5})
	mk(Stat{PID: 21, Comm: "b", State: 'S', PPID: 20, StartTime: 5})
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	os.MkdirAll(filepath.Join(root, "0abc"), 0o755)
	os.MkdirAll(filepath.Join(root, "99"), 0o755) // vanished: no stat file

	fsys := FS{Root: root}
	stats, err := fsys.AllStats()
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 7 {
		t.Fatalf("AllStats: %d stats, want 7: %+v", len(stats), stats)
	}
	m := StatMap(stats)
	for _, tc := range []struct {
		pid, anc int
		want     bool
	}{
		{11, 10, true}, {11, 1, true}, {10, 1, true}, {10, 10, false}, {1, 10, false},
		{12, 13, false}, {12, 10, false}, {13, 10, true},
		{20, 21, true}, {20, 1, false}, {20, 99, false},
		{404, 1, false},
	} {
		if got := IsDescendant(m, tc.pid, tc.anc); got != tc.want {
			t.Errorf("IsDescendant(%d, %d) = %v, want %v", tc.pid, tc.anc, got, tc.want)
		}
	}
	inodes, err := fsys.SocketInodes(10)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(inodes)
	if !reflect.DeepEqual(inodes, []uint64{1234, 1<<64 - 1}) {
		t.Errorf("SocketInodes = %v", inodes)
	}
	if _, err := fsys.SocketInodes(99); err == nil {
		// 99 has no fd dir.
		t.Errorf("SocketInodes(99) succeeded")
	}
	if _, err := fsys.Stat(404); !errors.Is(err, fs.ErrNotExist) || !IsVanished(err) {
		t.Errorf("Stat(404) = %v", err)
	}
	// A stat file whose pid does not match its directory.
	os.MkdirAll(filepath.Join(root, "30"), 0o755)
	os.WriteFile(filepath.Join(root, "30", "stat"), []byte(formatStat(Stat{PID: 31, State: 'S'})), 0o644)
	if _, err := fsys.Stat(30); err == nil || !strings.Contains(err.Error(), "says pid 31") {
		t.Errorf("Stat(30) = %v", err)
	}
	os.WriteFile(filepath.Join(root, "30", "stat"), nil, 0o644)
	if _, err := fsys.Stat(30); !IsVanished(err) {
		t.Errorf("empty stat: %v", err)
	}
}

func TestCmdline(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "5"), 0o755)
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"a\x00", []string{"a"}},
		{"a\x00b c\x00\x00", []string{"a", "b c", ""}},
		{"rewritten title", []string{"rewritten title"}},
	} {
		os.WriteFile(filepath.Join(root, "5", "cmdline"), []byte(tc.in), 0o644)
		got, err := FS{root}.Cmdline(5)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Cmdline(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func BenchmarkReadStat(b *testing.B) {
	pid := os.Getpid()
	for b.Loop() {
		if _, err := ReadStat(pid); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAllStats(b *testing.B) {
	for b.Loop() {
		if _, err := Default.AllStats(); err != nil {
			b.Fatal(err)
		}
	}
}
