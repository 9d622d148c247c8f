package workspace

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
)

func newWorkspace(t *testing.T) *Workspace {
	t.Helper()
	env := testenv.New(t)
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shell = "/bin/bash"
	w, err := New(Options{Config: cfg, Layout: env.Layout, Env: env.Vars, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// settle waits for a count to come back down to at most want; goroutines
// and descriptors of closed tabs are released asynchronously by the runtime.
func settle(t *testing.T, what string, want int, count func() int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for count() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%s: %d, want at most %d; goroutines:\n%s", what, count(), want, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTwoHundredTabsAndNoLeaks opens 200 shell tabs at once, checks they
// all work, then shuts down and checks every shell was hung up and no
// goroutine or descriptor is left behind.
func TestTwoHundredTabsAndNoLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 200 shells")
	}
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	w := newWorkspace(t)
	const n = 200
	var leaders []int
	for i := range n {
		tm, err := w.Create(CreateSpec{Directory: "/", Name: fmt.Sprint("tab", i)})
		if err != nil {
			t.Fatalf("tab %d: %v", i, err)
		}
		w.mu.Lock()
		leaders = append(leaders, w.tabs[tm.ID].leaderPID)
		w.mu.Unlock()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		idle := 0
		list := w.List()
		for _, tm := range list {
			if tm.Idle {
				idle++
			}
		}
		if len(list) != n {
			t.Fatalf("List has %d tabs, want %d", len(list), n)
		}
		if idle == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d tabs idle", idle, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Every tab takes a command and shows its output.
	for i := range n {
		if _, err := w.RunCommand(fmt.Sprint("t", i+1), fmt.Sprintf("echo out-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		id, want := fmt.Sprint("t", i+1), fmt.Sprintf("out-%d", i)
		for {
			lines, err := w.ReadOutput(id, 5)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.Join(lines, "\n"), "\n"+want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tab %s: %q not shown; screen %q", id, want, lines)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	w.Shutdown()
	for _, pid := range leaders {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("shell %d still running after Shutdown", pid)
		}
	}
	settle(t, "goroutines", goroutines, runtime.NumGoroutine)
	settle(t, "open descriptors", fds, func() int { return openFDs(t) })
}

// TestCloseHangsUpBackgroundJobs checks that closing a tab ends even the
// processes that still hold its terminal in the background.
func TestCloseHangsUpBackgroundJobs(t *testing.T) {
	w := newWorkspace(t)
	defer w.Shutdown()
	tm, err := w.Create(CreateSpec{Directory: "/", Command: []string{"sh", "-c", "sleep 1000 & echo bg=$!; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	var bg int
	deadline := time.Now().Add(10 * time.Second)
	for bg == 0 && time.Now().Before(deadline) {
		lines, _ := w.ReadOutput(tm.ID, 5)
		for _, l := range lines {
			fmt.Sscanf(l, "bg=%d", &bg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if bg == 0 {
		t.Fatal("background job did not start")
	}
	if err := w.Close(tm.ID); err != nil {
		t.Fatal(err)
	}
	for syscall.Kill(bg, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("background sleep %d survived Close", bg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCheckCommandLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"ls -la", true},
		{"echo 'héllo 世界 🎉'", true},
		{"printf '\\n'", true},
		{"a\nb", false},
		{"a\rb", false},
		{"\x1b[A", false},
		{"tab\there", false},
		{"del\x7f", false},
		{"c1\u0085", false},
		{"bad\xffutf8", false},
		{"literal \ufffd replacement", true},
	} {
		err := checkCommandLine(tc.line)
		if (err == nil) != tc.ok {
			t.Errorf("checkCommandLine(%q) = %v, want ok=%v", tc.line, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "command") {
			t.Errorf("error %q does not name the command field", err)
		}
	}
}

func TestIsInteractiveShell(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"bash"}, true},
		{[]string{"/usr/bin/zsh", "-l"}, true},
		{[]string{"sh"}, true},
		{[]string{"fish", "--private"}, true},
		{[]string{"sh", "-c", "sleep 1"}, false},
		{[]string{"bash", "-lc", "make"}, false},
		{[]string{"make", "-C", "dir"}, false},
		{[]string{"claude"}, false},
		{[]string{"python3"}, false},
	} {
		if got := isInteractiveShell(tc.argv); got != tc.want {
			t.Errorf("isInteractiveShell(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}
