package attach

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

func newWorkspace(t testing.TB) *workspace.Workspace {
	t.Helper()
	env := testenv.New(t)
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shell = "/bin/bash"
	w, err := workspace.New(workspace.Options{Config: cfg, Layout: env.Layout, Env: env.Vars, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	return w
}

// fakeClient runs a session in-process and feeds what it sends into a
// screen of the client's size.
type fakeClient struct {
	t    testing.TB
	in   chan Msg
	mu   sync.Mutex
	scr  *screen.Screen
	done chan struct{}
	exit Exit
	err  error
	sent int     // bytes sent by the session
	o    Options // what the session runs with, when a test set it
}

func startClient(t testing.TB, ws *workspace.Workspace, h Hello) *fakeClient {
	t.Helper()
	return startClientWith(t, Options{Workspace: ws}, h)
}

func startClientWith(t testing.TB, o Options, h Hello) *fakeClient {
	t.Helper()
	c := &fakeClient{t: t, in: make(chan Msg), done: make(chan struct{}),
		scr: screen.New(screen.Options{Cols: h.Cols, Rows: h.Rows, Scrollback: -1})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(c.done)
		c.exit, c.err = Run(ctx, o, h, c.in, func(b []byte) error {
			c.mu.Lock()
			c.scr.Write(b)
			c.sent += len(b)
			c.mu.Unlock()
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

func (c *fakeClient) send(s string) { c.in <- Msg{Input: []byte(s)} }

func (c *fakeClient) row(y int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, cl := range c.scr.Row(y) {
		b.WriteString(cl.String())
	}
	return strings.TrimRight(b.String(), " ")
}

func (c *fakeClient) text() string {
	c.mu.Lock()
	_, rows := c.scr.Size()
	c.mu.Unlock()
	var lines []string
	for y := range rows {
		lines = append(lines, c.row(y))
	}
	return strings.Join(lines, "\n")
}

func (c *fakeClient) waitFor(what string, cond func(text string) bool) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if cond(c.text()) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	c.t.Fatalf("timed out waiting for %s; the client shows:\n%s\n%s", what, c.text(), buf[:runtime.Stack(buf, true)])
}

func (c *fakeClient) waitText(s string) {
	c.t.Helper()
	c.waitFor(s, func(text string) bool { return strings.Contains(text, s) })
}

func TestSessionFullScreenProgram(t *testing.T) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	c := startClient(t, ws, Hello{Cols: 80, Rows: 24})
	c.waitText("1:")
	c.send("printf 'alpha\\nbeta\\ngamma\\n' > f.txt; vim -u NONE -N f.txt\r")
	c.waitFor("vim", func(string) bool { return c.row(0) == "alpha" && strings.Contains(c.row(22), "f.txt") })
	c.send("ggOzeta\x1b")
	c.waitFor("the inserted line", func(string) bool { return c.row(0) == "zeta" && c.row(1) == "alpha" })
	c.send(":q!\r")
	c.waitFor("vim gone", func(s string) bool { return !strings.Contains(s, "zeta") })
	c.send("\x1cd")
	<-c.done
	if c.err != nil || !c.exit.OK || !strings.Contains(c.exit.Message, "detached") {
		t.Fatalf("detach: %+v, %v", c.exit, c.err)
	}
}

// TestSessionNoLeaks checks that a detached session leaves no goroutine
// behind.
func TestSessionNoLeaks(t *testing.T) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	before := runtime.NumGoroutine()
	for range 5 {
		c := startClient(t, ws, Hello{Cols: 80, Rows: 24})
		c.waitText("1:")
		c.send("\x1cd")
		<-c.done
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d, before %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSessionSmallestClientWins attaches two clients of different sizes
// to one tab: the tab takes the smaller size, and the larger once the
// smaller detaches.
func TestSessionSmallestClientWins(t *testing.T) {
	ws := newWorkspace(t)
	tab, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	size := func() (int, int) {
		tm, err := ws.Get(tab.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Cols, tm.Rows
	}
	big := startClient(t, ws, Hello{Cols: 120, Rows: 40})
	big.waitText("1:")
	if c, r := size(); c != 120 || r != 39 {
		t.Fatalf("one client of 120x40: tab is %dx%d, want 120x39", c, r)
	}
	small := startClient(t, ws, Hello{Cols: 70, Rows: 20})
	small.waitText("1:")
	if c, r := size(); c != 70 || r != 19 {
		t.Fatalf("clients of 120x40 and 70x20: tab is %dx%d, want 70x19", c, r)
	}
	// Both see what the tab prints, and the same focus.
	small.send("stty size\r")
	small.waitText("19 70")
	big.waitText("19 70")
	small.send("\x1cd")
	<-small.done
	if c, r := size(); c != 120 || r != 39 {
		t.Fatalf("after the small client left: tab is %dx%d, want 120x39", c, r)
	}
	// A resize message from the remaining client.
	big.in <- Msg{Cols: 100, Rows: 30}
	deadline := time.Now().Add(10 * time.Second)
	for c, r := size(); c != 100 || r != 29; c, r = size() {
		if time.Now().After(deadline) {
			t.Fatalf("after a resize to 100x30: tab is %dx%d, want 100x29", c, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
