package lineage

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// proc is one process of a fake /proc.
type proc struct {
	pid, ppid int
	start     uint64
	argv      []string
}

// fakeProc lays procs out like /proc under a temporary directory.
func fakeProc(t *testing.T, procs ...proc) procfs.FS {
	t.Helper()
	fs := procfs.FS{Root: t.TempDir()}
	for _, p := range procs {
		fakeProcAdd(t, fs, p)
	}
	return fs
}

const addr = "unix:///run/ph/terminald.sock"

var terminald = []string{"/usr/bin/phantom", "daemon", "terminald", "--listen", addr}

func TestLocate(t *testing.T) {
	fs := fakeProc(t,
		proc{1, 0, 1, []string{"init"}},
		proc{100, 1, 50, terminald},
		proc{200, 100, 60, []string{"bash"}},    // a tab's shell
		proc{300, 200, 70, []string{"claude"}},  // an agent in it
		proc{310, 300, 80, []string{"bash"}},    // its shell
		proc{400, 100, 90, []string{"sleep"}},   // double-forked out of its tab
		proc{500, 1, 55, []string{"bash"}},      // the human's login shell
		proc{510, 500, 95, []string{"phantom"}}, // the human's CLI
		proc{600, 1, 99, []string{"python3"}},   // a process whose parent pid was reused:
		proc{610, 600, 98, []string{"orphan?"}}, // its "parent" 600 started after it
		proc{700, 1, 10, []string{"/usr/bin/phantom", "daemon", "terminald", "--listen=unix:///run/other/terminald.sock"}},
		proc{710, 700, 11, []string{"bash"}},  // inside another instance
		proc{800, 310, 120, terminald},        // an agent's own terminald, same address
		proc{810, 800, 121, []string{"bash"}}, // still inside the real one
		proc{900, 1, 20, []string{"/usr/bin/phantom", "daemon", "gitd", "--listen", "unix:///run/ph/gitd.sock"}},
		proc{910, 900, 130, []string{"git", "worktree", "add"}}, // git run by gitd
		proc{920, 910, 131, []string{"sh", ".git/hooks/post-checkout"}},
		proc{930, 1, 132, []string{"sh"}}, // the hook's double fork: re-parented to init, outside (but see the reaper)
	)
	tree := Tree{FS: fs, IsTerminald: ByCommandLine(addr, addr)}
	tests := []struct {
		pid    int
		inside bool
		top    int
	}{
		{200, true, 200},
		{300, true, 200},
		{310, true, 200},
		{400, true, 400},
		{500, false, 0},
		{510, false, 0},
		{100, false, 0}, // terminald itself
		{710, false, 0},
		{800, true, 200},
		{810, true, 810}, // stops at the nearest terminald: still inside
		{900, false, 0},  // gitd itself
		{910, true, 910}, // what gitd runs is inside, in no tab
		{920, true, 910},
		{930, false, 0}, // gitd is a subreaper, so this cannot happen: orphans stay below it
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.pid), func(t *testing.T) {
			p, err := tree.Locate(tt.pid)
			if err != nil {
				t.Fatal(err)
			}
			if p.Inside != tt.inside || (tt.inside && p.Top.PID != tt.top) {
				t.Errorf("Locate(%d) = inside %v top %d, want inside %v top %d", tt.pid, p.Inside, p.Top.PID, tt.inside, tt.top)
			}
		})
	}
	if p, err := tree.Locate(610); err == nil {
		t.Errorf("Locate(610), whose parent is younger than it = %+v; want an error (fail closed)", p)
	}
	if _, err := tree.Locate(999); !errors.Is(err, ErrNotFound) {
		t.Errorf("Locate(missing) = %v, want ErrNotFound", err)
	}
	if _, err := tree.Locate(0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Locate(0) = %v, want ErrNotFound", err)
	}
}

func TestByCommandLine(t *testing.T) {
	tests := []struct {
		argv []string
		want bool
	}{
		{terminald, true},
		{[]string{"phantom", "daemon", "terminald", "--listen=unix:///run/ph/./terminald.sock"}, true},
		{[]string{"phantom", "daemon", "terminald"}, true}, // the default address
		{[]string{"phantom", "daemon", "terminald", "--listen", "unix:///tmp/l/terminald.sock"}, false},
		{[]string{"phantom", "daemon", "authz", "--listen", addr}, false},
		// The instance's other daemons: what they start is inside.
		{[]string{"/usr/bin/phantom", "daemon", "gitd", "--listen", "unix:///run/ph/gitd.sock"}, true},
		{[]string{"phantom", "daemon", "lspd", "--listen=unix:///run/ph/./lspd.sock"}, true},
		{[]string{"phantom", "daemon", "editord"}, true},                                      // the default address
		{[]string{"phantom", "daemon", "gitd", "--listen", "unix:///tmp/l/gitd.sock"}, false}, // another instance's
		{[]string{"phantom", "daemon", "gitd", "--listen", "unix:///run/ph/lspd.sock"}, false},
		{[]string{"phantom", "daemon", "gitd", "--listen", "tcp://127.0.0.1:7000"}, false},
		{[]string{"phantom", "daemon", "nosuch", "--listen", "unix:///run/ph/nosuch.sock"}, false},
		{[]string{"phantom", "daemon"}, false},
		{[]string{"bash", "-c", "phantom daemon terminald"}, false},
	}
	for _, tt := range tests {
		fs := fakeProc(t, proc{5, 1, 1, tt.argv})
		st, _ := fs.Stat(5)
		if got := ByCommandLine(addr, addr)(fs, st); got != tt.want {
			t.Errorf("ByCommandLine(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

// TestLocateSelf places real processes: this test is outside any
// terminald, and a child of a process treated as terminald is inside.
func TestLocateSelf(t *testing.T) {
	self, err := procfs.Default.Stat(os.Getpid())
	if err != nil {
		t.Skip("no /proc:", err)
	}
	tree := Tree{FS: procfs.Default, IsTerminald: Self(self.PPID, 0)}
	if p, err := tree.Locate(os.Getpid()); err != nil || p.Inside {
		t.Errorf("Locate(self) with a start time that does not match = %+v, %v; want outside", p, err)
	}
	parent, _ := procfs.Default.Stat(self.PPID)
	tree = Tree{FS: procfs.Default, IsTerminald: Self(parent.PID, parent.StartTime)}
	p, err := tree.Locate(os.Getpid())
	if err != nil || !p.Inside || p.Top.PID != os.Getpid() {
		t.Errorf("Locate(self) under its parent as terminald = %+v, %v; want inside, top self", p, err)
	}
}

// BenchmarkLocate is the cost of placing a process, paid once per
// connection to a daemon: this test process, walked up to init.
func BenchmarkLocate(b *testing.B) {
	tree := Tree{FS: procfs.Default, IsTerminald: ByCommandLine(addr, addr)}
	for b.Loop() {
		if _, err := tree.Locate(os.Getpid()); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHolderByCommandLine(t *testing.T) {
	tests := []struct {
		argv []string
		want bool
	}{
		{[]string{"/usr/bin/phantom", "+holder", "--terminald", addr, "--socket", "/run/ph/holder.sock"}, true},
		{[]string{"phantom", "+holder", "--terminald=unix:///run/ph/./terminald.sock"}, true},
		{[]string{"phantom", "+holder", "--terminald", "unix:///tmp/l/terminald.sock"}, false},
		{[]string{"phantom", "+holder"}, false}, // no address: no instance's
		{[]string{"phantom", "+holder", "--terminald", addr, "--background"}, false},
		{[]string{"phantom", "daemon", "holder", "--terminald", addr}, false},
		{[]string{"sh", "-c", "phantom +holder --terminald " + addr}, false},
	}
	for _, tt := range tests {
		fs := fakeProc(t, proc{5, 1, 1, tt.argv})
		st, _ := fs.Stat(5)
		if got := HolderByCommandLine(addr)(fs, st); got != tt.want {
			t.Errorf("HolderByCommandLine(%q) = %v, want %v", tt.argv, got, tt.want)
		}
		// The instance's anchors are its holder and its terminald.
		if got := ByCommandLine(addr, addr)(fs, st); got != tt.want {
			t.Errorf("ByCommandLine(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

// TestLocateUnderHolder places the processes of an instance whose tabs
// are the holder's children: a terminald restarted after a crash has none
// of them below it, and they are inside all the same, in their tabs; an
// agent's own holder or terminald does not take them out.
func TestLocateUnderHolder(t *testing.T) {
	holder := []string{"/usr/bin/phantom", "+holder", "--terminald", addr, "--socket", "/run/ph/holder.sock"}
	fs := fakeProc(t,
		proc{1, 0, 1, []string{"init"}},
		proc{90, 1, 40, holder},
		proc{100, 1, 50, terminald},            // the new terminald: no children
		proc{200, 90, 60, []string{"bash"}},    // a tab's shell
		proc{300, 200, 70, []string{"claude"}}, // an agent in it
		proc{400, 90, 80, []string{"sleep"}},   // double-forked out of its tab
		proc{500, 300, 90, holder},             // the agent's own holder
		proc{510, 500, 95, []string{"bash"}},   // its "tab"
		proc{600, 1, 99, []string{"/usr/bin/phantom", "+holder", "--terminald", addr, "--background"}},
		proc{610, 600, 100, []string{"bash"}}, // below a holder's starter only
	)
	tree := Tree{FS: fs, IsTerminald: ByCommandLine(addr, addr)}
	tests := []struct {
		pid    int
		inside bool
		top    int
	}{
		{200, true, 200},
		{300, true, 200},
		{400, true, 400},
		{90, false, 0},  // the holder itself
		{100, false, 0}, // terminald
		{500, true, 200},
		{510, true, 510}, // nearest anchor: the agent's holder; still inside
		{610, false, 0},
	}
	for _, tt := range tests {
		p, err := tree.Locate(tt.pid)
		if err != nil {
			t.Fatal(err)
		}
		if p.Inside != tt.inside || (tt.inside && p.Top.PID != tt.top) {
			t.Errorf("Locate(%d) = inside %v top %d, want inside %v top %d", tt.pid, p.Inside, p.Top.PID, tt.inside, tt.top)
		}
	}
}

// fakeProcAdd adds p to a fake /proc made by fakeProc.
func fakeProcAdd(t *testing.T, fs procfs.FS, p proc) {
	t.Helper()
	dir := filepath.Join(fs.Root, fmt.Sprint(p.pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (x) S %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", p.pid, p.ppid, p.pid, p.pid, p.start)
	os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
	os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Join(p.argv, "\x00")+"\x00"), 0o644)
}

// TestProgram: a grant records the program behind the bridge, from the
// kernel's exe (and an interpreter's script), never the name the client
// chose.
func TestProgram(t *testing.T) {
	fs := fakeProc(t,
		proc{pid: 10, ppid: 1, start: 5, argv: []string{"node", "--max-old-space-size=4096", "/opt/claude/cli.js", "--resume"}},
		proc{pid: 11, ppid: 10, start: 6, argv: []string{"phantom", "+mcp-server", "--client=claude"}},
		proc{pid: 12, ppid: 10, start: 7, argv: []string{"python3", "evil.py"}},
		proc{pid: 13, ppid: 12, start: 8, argv: []string{"phantom", "+mcp-server", "--client=claude"}},
		proc{pid: 14, ppid: 10, start: 9, argv: []string{"phantom", "+mcp-server", "--client=claude"}},
		proc{pid: 15, ppid: 1, start: 9, argv: []string{"codex"}},
	)
	link := func(pid int, exe string) {
		if err := os.Symlink(exe, filepath.Join(fs.Root, fmt.Sprint(pid), "exe")); err != nil {
			t.Fatal(err)
		}
	}
	link(10, "/usr/bin/node")
	link(11, "/usr/bin/phantom")
	link(12, "/usr/bin/python3")
	link(13, "/usr/bin/phantom")
	link(14, "/home/u/copy/phantom") // a copy of the bridge: not Phantom's own
	link(15, "/opt/codex/codex")
	os.Symlink("/home/u/proj", filepath.Join(fs.Root, "12", "cwd"))
	proc17 := proc{pid: 17, ppid: 10, start: 10, argv: []string{"phantom", "+mcp-server", "--client=claude"}}
	fakeProcAdd(t, fs, proc17)
	link(17, "/usr/bin/phantom")
	// Standard input and output: each bridge's are pipes its parent holds
	// the other ends of; 17's input is also held by 15, which speaks on it.
	fds := func(pid int, links ...string) {
		dir := filepath.Join(fs.Root, fmt.Sprint(pid), "fd")
		os.MkdirAll(dir, 0o755)
		for i, l := range links {
			os.Symlink(l, filepath.Join(dir, fmt.Sprint(i)))
		}
	}
	fds(11, "pipe:[100]", "pipe:[101]")
	fds(13, "pipe:[102]", "pipe:[103]")
	fds(14, "pipe:[104]", "pipe:[105]")
	fds(17, "pipe:[106]", "pipe:[107]")
	fds(10, "/dev/null", "pipe:[100]", "pipe:[101]", "pipe:[106]", "pipe:[107]")
	fds(12, "pipe:[102]", "pipe:[103]")
	fds(15, "pipe:[106]")
	for _, tc := range []struct {
		pid  int
		want string
	}{
		{11, "/usr/bin/node /opt/claude/cli.js"},
		{13, "/usr/bin/python3 /home/u/proj/evil.py"},
		{14, "/home/u/copy/phantom"},
		{15, "/opt/codex/codex"},
		{17, ""}, // another process speaks on the bridge's input
		{99, ""},
	} {
		if got := ClientProgram(fs, tc.pid, "/usr/bin/phantom"); got != tc.want {
			t.Errorf("ClientProgram(%d) = %q, want %q", tc.pid, got, tc.want)
		}
	}
}

// TestUnixPeer: the other end of a socket pair, as the kernel's socket
// table names it, is the peer's own descriptor link.
func TestUnixPeer(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	a, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fds[0]))
	b, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fds[1]))
	if got, ok := otherEnd(a); !ok || got != b {
		t.Errorf("otherEnd(%s) = %q, %v; want %s", a, got, ok, b)
	}
	if got, ok := otherEnd("/dev/pts/3"); ok {
		t.Errorf("otherEnd of a terminal = %q, want none", got)
	}
}

// BenchmarkClientProgram is what naming the program behind a connection
// costs at its hello: "exe" is the baseline (Program: one readlink),
// "bridge" the whole of ClientProgram for a child on pipes, whose every
// stdio holder is looked for in /proc.
func BenchmarkClientProgram(b *testing.B) {
	cmd := exec.Command("cat")
	if _, err := cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	if _, err := cmd.StdoutPipe(); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	b.Run("exe", func(b *testing.B) {
		for b.Loop() {
			Program(procfs.Default, pid)
		}
	})
	b.Run("bridge", func(b *testing.B) {
		for b.Loop() {
			if !talksOnlyTo(procfs.Default, pid, os.Getpid()) {
				b.Fatal("the test's own child does not talk only to it")
			}
		}
	})
}
