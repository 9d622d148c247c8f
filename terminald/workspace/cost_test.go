package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// newPolledWorkspace is newWorkspace with the given poll interval; an hour
// means "never" for a test, so that whatever it sees came from output.
func newPolledWorkspace(t *testing.T, poll time.Duration) *Workspace {
	t.Helper()
	env := testenv.New(t)
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shell = "/bin/bash"
	w, err := New(Options{Config: cfg, Layout: env.Layout, Env: env.Vars, PollInterval: poll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	return w
}

// listed is tab id as List shows it.
func listed(t *testing.T, w *Workspace, id string) Terminal {
	t.Helper()
	for _, tm := range w.List() {
		if tm.ID == id {
			return tm
		}
	}
	t.Fatalf("tab %s not listed", id)
	return Terminal{}
}

// waitListed waits until List shows tab id as ok wants it.
func waitListed(t *testing.T, w *Workspace, id, what string, ok func(Terminal) bool) Terminal {
	t.Helper()
	var last Terminal
	testenv.Eventually(t, what, func() (bool, string) {
		last = listed(t, w, id)
		return ok(last), fmt.Sprintf("%+v", last)
	})
	return last
}

// TestSnapshotFollowsOutput checks that what a tab shows in the list —
// directory, title, foreground program, idleness — follows the tab
// without the poll (it runs once an hour here): from what the shell
// reports and from output.
func TestSnapshotFollowsOutput(t *testing.T) {
	w := newPolledWorkspace(t, time.Hour)
	tm, err := w.Create(CreateSpec{Directory: "/"})
	if err != nil {
		t.Fatal(err)
	}
	id := tm.ID
	waitListed(t, w, id, "the first prompt", func(tm Terminal) bool { return tm.Idle })

	dir := t.TempDir()
	if _, err := w.RunCommand(id, "cd "+dir); err != nil {
		t.Fatal(err)
	}
	waitListed(t, w, id, "the new directory", func(tm Terminal) bool { return tm.Directory == dir && tm.Idle })

	if _, err := w.RunCommand(id, `printf '\033]2;%s\007' snapshot-title`); err != nil {
		t.Fatal(err)
	}
	waitListed(t, w, id, "the new title", func(tm Terminal) bool { return tm.Title == "snapshot-title" && tm.Idle })

	// sleep prints nothing: the shell's "command started" mark comes
	// before it runs, and the snapshot still catches it.
	got, err := w.RunCommand(id, "sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	if got.Idle {
		t.Errorf("RunCommand's answer shows the tab idle")
	}
	if tm := listed(t, w, id); tm.Idle {
		t.Errorf("right after RunCommand the list shows the tab idle: %+v", tm)
	}
	waitListed(t, w, id, "sleep in the foreground", func(tm Terminal) bool { return tm.ForegroundName == "sleep" && !tm.Idle })
	if err := w.Input(id, []byte{3}); err != nil { // ^C
		t.Fatal(err)
	}
	waitListed(t, w, id, "the prompt after ^C", func(tm Terminal) bool { return tm.ForegroundName == "bash" && tm.Idle })
}

// TestSnapshotFollowsOutputWithoutIntegration checks the same for a shell
// that reports nothing (no OSC 7, no prompt marks): the directory and the
// foreground program come from /proc, read again after output.
func TestSnapshotFollowsOutputWithoutIntegration(t *testing.T) {
	if _, err := exec.LookPath("dash"); err != nil {
		t.Skip("dash not installed")
	}
	w := newPolledWorkspace(t, time.Hour)
	tm, err := w.Create(CreateSpec{Directory: "/", Command: []string{"dash", "-i"}})
	if err != nil {
		t.Fatal(err)
	}
	id := tm.ID
	waitListed(t, w, id, "the prompt", func(tm Terminal) bool { return tm.Idle && tm.ForegroundName == "dash" })
	dir := t.TempDir()
	if _, err := w.RunCommand(id, "cd "+dir); err != nil {
		t.Fatal(err)
	}
	waitListed(t, w, id, "the new directory", func(tm Terminal) bool { return tm.Directory == dir })
	if _, err := w.RunCommand(id, "echo started; cat"); err != nil {
		t.Fatal(err)
	}
	waitListed(t, w, id, "cat in the foreground", func(tm Terminal) bool { return tm.ForegroundName == "cat" && !tm.Idle })
}

// TestSnapshotFollowsPoll checks what no output shows — a program that
// execs another silently — reaches the list through the poll.
func TestSnapshotFollowsPoll(t *testing.T) {
	w := newPolledWorkspace(t, 50*time.Millisecond)
	tm, err := w.Create(CreateSpec{Directory: "/", Command: []string{"sh", "-c", "sleep 0.5; exec sleep 30"}})
	if err != nil {
		t.Fatal(err)
	}
	waitListed(t, w, tm.ID, "sh in the foreground", func(tm Terminal) bool { return tm.ForegroundName == "sh" })
	waitListed(t, w, tm.ID, "sleep, exec'd by sh, in the foreground", func(tm Terminal) bool { return tm.ForegroundName == "sleep" })
}

// TestListDoesNotComputeStatus checks that listing idle tabs only copies
// their snapshots: no ioctl, no /proc read, however many tabs.
func TestListDoesNotComputeStatus(t *testing.T) {
	w := newPolledWorkspace(t, time.Hour)
	const n = 20
	for range n {
		if _, err := w.Create(CreateSpec{Directory: "/"}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "every tab idle", func() (bool, string) {
		idle := 0
		for _, tm := range w.List() {
			if tm.Idle {
				idle++
			}
		}
		return idle == n, fmt.Sprintf("%d of %d idle", idle, n)
	})
	// Output after the prompt (bash's last redraw) may still be due.
	time.Sleep(3 * snapDelay)
	before := statusComputations.Load()
	for range 100 {
		if got := len(w.List()); got != n {
			t.Fatalf("List has %d tabs, want %d", got, n)
		}
	}
	if d := statusComputations.Load() - before; d != 0 {
		t.Errorf("100 Lists of %d idle tabs computed %d statuses, want 0", n, d)
	}
}

// TestThreadsStayFewWithManyTabs checks that terminald's threads do not
// grow with its tabs: PTY reads and program exits wait in the netpoller,
// not in a blocked thread each. It counts in a fresh process, because the
// Go runtime keeps every thread it ever started.
func TestThreadsStayFewWithManyTabs(t *testing.T) {
	if os.Getenv("PHANTOM_THREADS_CHILD") != "" {
		threadsChild(t)
		return
	}
	if testing.Short() {
		t.Skip("opens 200 tabs")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestThreadsStayFewWithManyTabs$", "-test.v")
	cmd.Env = append(os.Environ(), "PHANTOM_THREADS_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// maxThreads bounds the OS threads of a process serving 200 tabs: the
// runtime's own (GOMAXPROCS, sysmon, the poller, a few for syscalls in
// flight) and none per tab.
const maxThreads = 40

func threadsChild(t *testing.T) {
	w := newPolledWorkspace(t, 50*time.Millisecond)
	const n = 200
	var ids []string
	for range n {
		// cat waits on the terminal: the tab's reader and its exit
		// watcher both wait as long as it runs.
		tm, err := w.Create(CreateSpec{Directory: "/", Command: []string{"cat"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tm.ID)
	}
	testenv.Eventually(t, "every cat in the foreground", func() (bool, string) {
		cats := 0
		for _, tm := range w.List() {
			if tm.ForegroundName == "cat" {
				cats++
			}
		}
		return cats == n, fmt.Sprintf("%d of %d", cats, n)
	})
	time.Sleep(time.Second) // two polls, timers after output
	threads := countThreads(t)
	t.Logf("%d tabs: %d OS threads", n, threads)
	if threads >= maxThreads {
		t.Errorf("%d OS threads with %d tabs, want fewer than %d", threads, n, maxThreads)
	}
	// The exits are still seen: end half the programs with ^D.
	for _, id := range ids[:n/2] {
		if err := w.Input(id, []byte{4}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, "half the tabs exited", func() (bool, string) {
		exited := 0
		for _, tm := range w.List() {
			if tm.Exited && tm.ExitCode == 0 {
				exited++
			}
		}
		return exited == n/2, fmt.Sprintf("%d of %d", exited, n/2)
	})
}

func countThreads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}

// TestTerminalEqualSeesEveryField changes each field of a Terminal in
// turn and checks Equal notices: a field added to Terminal and not to
// Equal would let a cache serve a stale tab.
func TestTerminalEqualSeesEveryField(t *testing.T) {
	var base Terminal
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		changed := base
		f := reflect.ValueOf(&changed).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(1)
		case reflect.Slice:
			f.Set(reflect.Append(f, reflect.New(f.Type().Elem()).Elem()))
		default:
			t.Fatalf("field %s: kind %s not handled by this test", typ.Field(i).Name, f.Kind())
		}
		if base.Equal(changed) || changed.Equal(base) {
			t.Errorf("Equal does not compare field %s", typ.Field(i).Name)
		}
	}
	if !base.Equal(base) {
		t.Error("a Terminal differs from itself")
	}
}
