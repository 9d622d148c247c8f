package ports

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// The test binary doubles as the helper processes of the real tests.
const helperEnv = "PHANTOM_PORTS_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "listen":
		helperListen()
	case "parent":
		helperParent()
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
	os.Exit(0)
}

// helperListen listens on 127.0.0.1:0 and, if IPv6 works, [::1]:0, prints
// "ports <pid> <port>...", then on a "close" line closes its listeners and
// prints "closed"; it exits at EOF on stdin.
func helperListen() {
	var ls []net.Listener
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ls = append(ls, l)
	}
	line := fmt.Sprintf("ports %d", os.Getpid())
	for _, l := range ls {
		line += fmt.Sprintf(" %d", l.Addr().(*net.TCPAddr).Port)
	}
	fmt.Println(line)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() == "close" {
			for _, l := range ls {
				l.Close()
			}
			fmt.Println("closed")
		}
	}
}

// helperParent starts two listen helpers sharing its stdin and stdout: one
// in its session, one that leaves it with setsid. It exits at EOF on stdin,
// as do the children.
func helperParent() {
	var cmds []*exec.Cmd
	for _, setsid := range []bool{false, true} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=listen")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cmds = append(cmds, cmd)
	}
	io.Copy(io.Discard, os.Stdin)
	for _, c := range cmds {
		c.Wait()
	}
}

type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

func startHelper(t *testing.T, mode string, setsid bool) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: setsid}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return &helper{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
}

// readPorts reads one "ports <pid> <port>..." line.
func (h *helper) readPorts(t *testing.T) (pid int, ports []uint16) {
	t.Helper()
	if !h.lines.Scan() {
		t.Fatalf("helper exited: %v", h.lines.Err())
	}
	f := strings.Fields(h.lines.Text())
	if len(f) < 3 || f[0] != "ports" {
		t.Fatalf("helper said %q", h.lines.Text())
	}
	pid, _ = strconv.Atoi(f[1])
	for _, s := range f[2:] {
		p, _ := strconv.Atoi(s)
		ports = append(ports, uint16(p))
	}
	return pid, ports
}

func sorted(ps ...[]uint16) []uint16 {
	out := slices.Concat(ps...)
	slices.Sort(out)
	return slices.Compact(out)
}

// portsEventually calls Ports until check passes: a helper prints its ports
// right after listen(), but also the rest of the machine keeps changing.
func portsEventually(t *testing.T, tr *Tracker, tabs map[string]int, check func(map[string][]uint16) bool) map[string][]uint16 {
	t.Helper()
	var got map[string][]uint16
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		got, err = tr.Ports(tabs)
		if err != nil {
			t.Fatal(err)
		}
		if check(got) {
			return got
		}
	}
	t.Fatalf("Ports never satisfied the check; last answer %v", got)
	return nil
}

func TestTrackerReal(t *testing.T) {
	// A listener of the test process itself, which is in no tab.
	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	ownPort := uint16(own.Addr().(*net.TCPAddr).Port)

	// Tab a: the leader itself listens.
	a := startHelper(t, "listen", true)
	aPid, aPorts := a.readPorts(t)
	// Tab b: the leader's child listens in the session, its other child
	// listens after setsid.
	b := startHelper(t, "parent", true)
	_, b1 := b.readPorts(t)
	_, b2 := b.readPorts(t)
	// Tab c: nothing listens.
	c := exec.Command("sleep", "30")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()

	tabs := map[string]int{"a": aPid, "b": b.cmd.Process.Pid, "c": c.Process.Pid}
	want := map[string][]uint16{"a": sorted(aPorts), "b": sorted(b1, b2)}
	t.Logf("tabs %v, want %v, own port %d", tabs, want, ownPort)

	tr := NewTracker(procfs.Default)
	got, err := tr.Ports(tabs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Ports = %v, want %v", got, want)
	}
	for _, ps := range got {
		if slices.Contains(ps, ownPort) {
			t.Errorf("the test's own port %d was attributed to a tab", ownPort)
		}
	}

	// Without socket changes, a second call must not walk /proc. Other
	// programs on the machine may open or close listeners meanwhile, so
	// allow a few tries.
	cachedOK := false
	for range 20 {
		tr.Ports(tabs)
		w := tr.Walks()
		got, err = tr.Ports(tabs)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Walks() == w {
			cachedOK = true
			break
		}
	}
	if !cachedOK {
		t.Errorf("every second call walked /proc")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cached Ports = %v, want %v", got, want)
	}
	// The caller may scribble on the answer.
	got["a"][0] = 1
	if again, _ := tr.Ports(tabs); !reflect.DeepEqual(again, want) {
		t.Fatalf("cache was modified through the result: %v", again)
	}

	// A change of tabs forces a walk even without socket changes.
	w := tr.Walks()
	delete(tabs, "b")
	got, err = tr.Ports(tabs)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Walks() == w {
		t.Errorf("changing the tabs did not walk /proc")
	}
	if !reflect.DeepEqual(got, map[string][]uint16{"a": want["a"]}) {
		t.Errorf("after dropping b: %v", got)
	}

	// Closing a's listeners makes its ports disappear.
	fmt.Fprintln(a.stdin, "close")
	if !a.lines.Scan() || a.lines.Text() != "closed" {
		t.Fatalf("helper: %q %v", a.lines.Text(), a.lines.Err())
	}
	portsEventually(t, tr, tabs, func(m map[string][]uint16) bool { return len(m["a"]) == 0 })
}

// TestTrackerConcurrent hammers one Tracker from several goroutines (run
// with -race).
func TestTrackerConcurrent(t *testing.T) {
	h := startHelper(t, "listen", true)
	pid, ports := h.readPorts(t)
	tr := NewTracker(procfs.Default)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				tabs := map[string]int{"t": pid}
				if (i+j)%3 == 0 {
					tabs["x"] = os.Getpid() // varying tab sets force walks
				}
				got, err := tr.Ports(tabs)
				if err != nil {
					errs <- err
					return
				}
				if !slices.Equal(got["t"], sorted(ports)) {
					errs <- fmt.Errorf("got %v, want %v", got["t"], sorted(ports))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// fakeProc builds a directory laid out like /proc.
type fakeProc struct {
	t    testing.TB
	root string
}

func newFakeProc(t testing.TB) *fakeProc {
	// Prefer tmpfs: on a disk file system the benchmarks would measure the
	// disk file system's open(), not the tracker.
	root, err := os.MkdirTemp("/dev/shm", "fakeproc")
	if err != nil {
		root = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(root) })
	}
	return &fakeProc{t: t, root: root}
}

func (f *fakeProc) add(pid, ppid, sid int, start uint64, inodes ...uint64) {
	dir := filepath.Join(f.root, strconv.Itoa(pid))
	if err := os.MkdirAll(filepath.Join(dir, "fd"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (p%d) S %d %d %d 0 -1 %s%d 0 0\n", pid, pid, ppid, sid, sid, strings.Repeat("0 ", 13), start)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		f.t.Fatal(err)
	}
	// Every process has a few non-socket fds, as real ones do.
	targets := []string{"/dev/null", "/dev/pts/0", "pipe:[1]"}
	for _, ino := range inodes {
		targets = append(targets, fmt.Sprintf("socket:[%d]", ino))
	}
	for i, tg := range targets {
		if err := os.Symlink(tg, filepath.Join(dir, "fd", strconv.Itoa(i))); err != nil {
			f.t.Fatal(err)
		}
	}
}

func lst(port uint16, inode uint64) Listener {
	return Listener{Port: port, Addr: netip.IPv4Unspecified(), Inode: inode}
}

func TestTrackerFake(t *testing.T) {
	fp := newFakeProc(t)
	fp.add(1, 0, 1, 1)
	fp.add(100, 1, 100, 10)                 // tab A leader (shell)
	fp.add(101, 100, 100, 11, 5001)         // A: dev server in the session
	fp.add(102, 101, 102, 12, 5002)         // A: setsid'd grandchild (left the session)
	fp.add(103, 102, 103, 13, 5003)         // A: its child, in yet another session
	fp.add(104, 103, 104, 14, 5001)         // A: inherited the same socket as 101
	fp.add(200, 1, 200, 20)                 // tab B leader
	fp.add(201, 1, 200, 21, 6001)           // B: reparented to init, still in B's session
	fp.add(300, 1, 300, 30, 7001)           // no tab: unrelated listener
	fp.add(301, 100, 301, 5, 7002)          // "child" of A older than A: pid 100 was reused; not A's
	fp.add(400, 1, 399, 40, 8001)           // session 399's leader (tab C) exited
	fp.add(500, 1, 500, 50, 9001, 9002, 77) // tab D, two sockets and a non-listening one
	fp.add(600, 1, 1, 60)                   // tab F: leader did not setsid (in init's session 1)
	fp.add(601, 600, 1, 61, 9501)           // F: its child
	fp.add(602, 1, 1, 62, 9502)             // a stranger in session 1: not F's

	listeners := []Listener{lst(3000, 5001), lst(3001, 5002), lst(3002, 5003), lst(4000, 6001),
		lst(80, 7001), lst(81, 7002), lst(8000, 8001), lst(9000, 9001), lst(9000, 9002),
		lst(9501, 9501), lst(9502, 9502)}
	var dumpErr error
	tr := NewTracker(procfs.FS{Root: fp.root})
	tr.dump = func() ([]Listener, error) { return slices.Clone(listeners), dumpErr }

	tabs := map[string]int{"A": 100, "B": 200, "C": 399, "D": 500, "E": 404, "F": 600}
	want := map[string][]uint16{"A": {3000, 3001, 3002}, "B": {4000}, "C": {8000}, "D": {9000}, "F": {9501}}
	check := func(wantWalks uint64) {
		t.Helper()
		got, err := tr.Ports(tabs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Ports = %v, want %v", got, want)
		}
		if tr.Walks() != wantWalks {
			t.Fatalf("walks = %d, want %d", tr.Walks(), wantWalks)
		}
	}
	check(1)
	check(1) // cached
	// Same sockets in another order: still cached.
	slices.Reverse(listeners)
	check(1)

	// A socket change anywhere forces a walk.
	listeners = slices.DeleteFunc(listeners, func(l Listener) bool { return l.Inode == 9002 }) // D still has 9001 on port 9000
	check(2)
	check(2)
	listeners = slices.DeleteFunc(listeners, func(l Listener) bool { return l.Inode == 5003 })
	want["A"] = []uint16{3000, 3001}
	check(3)

	// A change of tabs forces a walk; an equal copy of the map does not.
	delete(tabs, "E")
	check(4)
	tabs = maps.Clone(tabs)
	check(4)

	// A dump error is returned and invalidates nothing that is wrong.
	dumpErr = errors.New("boom")
	if _, err := tr.Ports(tabs); err == nil || err.Error() != "boom" {
		t.Fatalf("err = %v", err)
	}
	dumpErr = nil
	check(4)

	// A process that exits between the stat walk and the fd walk (its fd
	// directory is gone) is skipped; 104 still holds the socket it shared.
	os.RemoveAll(filepath.Join(fp.root, "101", "fd"))
	listeners = append(listeners, lst(3003, 5004))
	want["A"] = []uint16{3000, 3001}
	check(5)

	// No tabs: no work.
	if got, err := tr.Ports(nil); err != nil || len(got) != 0 {
		t.Fatalf("Ports(nil) = %v, %v", got, err)
	}
}

func TestDumpReal(t *testing.T) {
	l4, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l4.Close()
	lns := []net.Listener{l4}
	if l6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		defer l6.Close()
		lns = append(lns, l6)
	}
	var want []Listener
	for _, l := range lns {
		sc, _ := l.(*net.TCPListener).SyscallConn()
		var st syscall.Stat_t
		sc.Control(func(fd uintptr) { err = syscall.Fstat(int(fd), &st) })
		if err != nil {
			t.Fatal(err)
		}
		ap := l.Addr().(*net.TCPAddr).AddrPort()
		want = append(want, Listener{Port: ap.Port(), Addr: ap.Addr(), Inode: st.Ino, UID: uint32(os.Getuid())})
	}
	nl, err := DumpNetlink()
	if err != nil {
		t.Fatalf("DumpNetlink: %v", err)
	}
	pr, err := DumpProc("/proc")
	if err != nil {
		t.Fatalf("DumpProc: %v", err)
	}
	d, err := Dump()
	if err != nil {
		t.Fatalf("Dump: %v", err)
	}
	for name, got := range map[string][]Listener{"netlink": nl, "proc": pr, "Dump": d} {
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %+v missing from %+v", name, w, got)
			}
		}
	}
	// Both sources should see the same sockets (modulo other programs
	// changing theirs in between, which would make this flaky on a busy
	// machine; only log it).
	sortListeners(nl)
	sortListeners(pr)
	if !slices.Equal(nl, pr) {
		t.Logf("netlink and /proc/net/tcp differ:\n%+v\n%+v", nl, pr)
	}
}
