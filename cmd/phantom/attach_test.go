package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/pty"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// instance is a Phantom started with `phantom up` in an isolated
// environment, stopped with `phantom down` when the test ends.
type instance struct {
	env *testenv.Env
	tc  terminalv1.TerminalServiceClient
}

func startPhantom(t testing.TB) *instance {
	t.Helper()
	return startPhantomWith(t, `{"shell":"/bin/bash"}`)
}

// startPhantomWith is startPhantom with config.json's body and extra
// variables for the daemons' environment.
func startPhantomWith(t testing.TB, configJSON string, vars ...string) *instance {
	t.Helper()
	env := testenv.New(t)
	env.Vars = append(env.Vars, vars...)
	if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	writeSettings(t, env.Layout.Config, configJSON)
	in := &instance{env: env}
	if out, err := in.run("up"); err != nil {
		t.Fatalf("phantom up: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := in.run("down"); err != nil {
			t.Errorf("phantom down: %v\n%s", err, out)
		}
	})
	cc, err := daemon.Dial(env.Layout.DaemonAddr("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	in.tc = terminalv1.NewTerminalServiceClient(cc)
	return in
}

func (in *instance) run(args ...string) ([]byte, error) {
	cmd := exec.Command(phantomBin, args...)
	cmd.Env = in.env.Vars
	cmd.Dir = in.env.Home
	return cmd.CombinedOutput()
}

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// tabs lists the tabs.
func (in *instance) list(t testing.TB) []*terminalv1.Terminal {
	t.Helper()
	resp, err := in.tc.ListTerminals(tctx(t), &terminalv1.ListTerminalsRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTerminals()
}

// client is `phantom attach` running on a PTY the test owns; what it draws
// is fed into a screen.Screen of the same size.
type client struct {
	t       testing.TB
	ptm     *os.File
	cmd     *exec.Cmd
	mu      sync.Mutex
	scr     *screen.Screen
	raw     bytes.Buffer
	readEOF chan struct{}
	waited  chan struct{}
	waitErr error
}

// attach starts `phantom attach args...` on a cols x rows terminal.
func (in *instance) attach(t testing.TB, cols, rows int, extraEnv []string, args ...string) *client {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.SetSize(ptm, cols, rows); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(phantomBin, append([]string{"attach"}, args...)...)
	cmd.Env = append(append(slicesClone(in.env.Vars), "TERM=xterm-256color", "COLORTERM="), extraEnv...)
	cmd.Dir = in.env.Home
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	c := &client{t: t, ptm: ptm, cmd: cmd, readEOF: make(chan struct{}), waited: make(chan struct{}),
		scr: screen.New(screen.Options{Cols: cols, Rows: rows, Scrollback: -1})}
	go func() {
		defer close(c.readEOF)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptm.Read(buf)
			c.mu.Lock()
			c.scr.Write(buf[:n])
			c.raw.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { c.waitErr = cmd.Wait(); close(c.waited) }()
	t.Cleanup(func() {
		select {
		case <-c.waited:
		default:
			cmd.Process.Kill()
			<-c.waited
		}
		ptm.Close()
		<-c.readEOF
	})
	return c
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// send types s into the client's terminal.
func (c *client) send(s string) {
	c.t.Helper()
	if _, err := c.ptm.Write([]byte(s)); err != nil {
		c.t.Fatalf("type %q: %v", s, err)
	}
}

// row is the text of row y as the client shows it.
func (c *client) row(y int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return rowText(c.scr.Row(y))
}

func rowText(cells []screen.Cell) string {
	var b strings.Builder
	for _, cl := range cells {
		b.WriteString(cl.String())
	}
	return strings.TrimRight(b.String(), " ")
}

// text is the whole screen as the client shows it.
func (c *client) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, rows := c.scr.Size()
	var lines []string
	for y := range rows {
		lines = append(lines, rowText(c.scr.Row(y)))
	}
	return strings.Join(lines, "\n")
}

// status is the client's last row.
func (c *client) status() string {
	c.mu.Lock()
	_, rows := c.scr.Size()
	c.mu.Unlock()
	return c.row(rows - 1)
}

// waitFor polls until cond holds on the client's screen.
func (c *client) waitFor(what string, cond func(text string) bool) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if cond(c.text()) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("timed out waiting for %s; the client shows:\n%s", what, c.text())
}

func (c *client) waitText(s string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%q on screen", s), func(text string) bool { return strings.Contains(text, s) })
}

func (c *client) waitStatus(what string, cond func(status string) bool) {
	c.t.Helper()
	c.waitFor("status line "+what, func(string) bool { return cond(c.status()) })
}

// resize changes the client's terminal size (the client gets SIGWINCH).
func (c *client) resize(cols, rows int) {
	c.t.Helper()
	c.mu.Lock()
	c.scr.Resize(cols, rows)
	c.mu.Unlock()
	if err := pty.SetSize(c.ptm, cols, rows); err != nil {
		c.t.Fatal(err)
	}
}

// wait waits for the client to exit and returns its status and all it
// wrote.
func (c *client) wait() (int, string) {
	c.t.Helper()
	select {
	case <-c.waited:
	case <-time.After(15 * time.Second):
		c.t.Fatalf("attach did not exit; it shows:\n%s", c.text())
	}
	<-c.readEOF
	c.mu.Lock()
	defer c.mu.Unlock()
	var ee *exec.ExitError
	if errors.As(c.waitErr, &ee) {
		return ee.ExitCode(), c.raw.String()
	}
	if c.waitErr != nil {
		c.t.Fatal(c.waitErr)
	}
	return 0, c.raw.String()
}

const prefix = "\x1c"

func TestAttachEndToEnd(t *testing.T) {
	in := startPhantom(t)
	t1 := in.list(t)[0].GetId()
	g, err := in.tc.CreateGroup(tctx(t), &terminalv1.CreateGroupRequest{Name: "grp", Color: "green"})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: in.env.Home, Name: "second", GroupId: g.GetGroup().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	t2 := r2.GetTerminal().GetId()

	c := in.attach(t, 100, 30, nil)
	// The status line: both tabs in order, the first focused, the group in
	// its colour (ANSI256 71 for a client without truecolor).
	c.waitStatus("with both tabs", func(s string) bool {
		return strings.Contains(s, "1:") && strings.Contains(s, "2:second") && strings.Contains(s, "grp")
	})
	if s := c.status(); !strings.Contains(s, "*") || strings.Contains(s, "second*") {
		t.Errorf("status line %q: want the first tab marked focused", s)
	}
	c.mu.Lock()
	var green bool
	for _, cl := range c.scr.Row(29) {
		if cl.Style.Bg == screen.IndexedColor(71) {
			green = true
		}
	}
	c.mu.Unlock()
	if !green {
		t.Errorf("status line has no cell in the group's colour (ANSI256 71)")
	}

	// Typing reaches the tab.
	c.send("echo hello-$((6*7))\r")
	c.waitText("hello-42")

	// prefix+n: the next tab.
	c.send(prefix + "n")
	c.waitStatus("with tab 2 focused", func(s string) bool { return strings.Contains(s, "second*") })
	c.waitFor("the first tab's text gone", func(s string) bool { return !strings.Contains(s, "hello-42") })
	c.send("echo in-$((1+1))-second\r")
	c.waitText("in-2-second")
	// prefix+1: back to the first.
	c.send(prefix + "1")
	c.waitText("hello-42")
	// prefix+2 by number.
	c.send(prefix + "2")
	c.waitText("in-2-second")

	// An agent focuses a tab: the client follows.
	if _, err := in.tc.FocusTerminal(tctx(t), &terminalv1.FocusTerminalRequest{TerminalId: t1}); err != nil {
		t.Fatal(err)
	}
	c.waitText("hello-42")
	c.waitFor("tab 2 no longer focused", func(string) bool { return !strings.Contains(c.status(), "second*") })

	// Resize: the tab's program sees the client's size minus the status
	// line.
	c.resize(90, 20)
	c.send("clear; stty size\r")
	c.waitText("19 90")

	// Detach: exit 0, the tabs keep running. First let the shell finish
	// drawing its prompt, so that what is compared after re-attach is the
	// settled screen, not one caught between "19 90" and the prompt.
	eventually(t, "the shell back at its prompt", func() (bool, string) {
		for _, tm := range in.list(t) {
			if tm.GetId() == t1 {
				return tm.GetIdle(), fmt.Sprint(tm)
			}
		}
		return false, "tab gone"
	})
	var before string
	c.waitFor("the screen to settle", func(s string) bool {
		settled := s == before
		before = s
		time.Sleep(100 * time.Millisecond)
		return settled
	})
	c.send(prefix + "d")
	code, out := c.wait()
	if code != 0 || !strings.Contains(out, "detached") {
		t.Fatalf("detach: exit %d, output ends %q", code, tail(out, 200))
	}
	for _, tm := range in.list(t) {
		if tm.GetExited() {
			t.Errorf("tab %s exited after detach", tm.GetId())
		}
	}
	_ = t2

	// Attach again: the same screen.
	c2 := in.attach(t, 90, 20, nil)
	c2.waitText("19 90")
	c2.waitFor("the same screen as before detach", func(s string) bool {
		return areaOf(s) == areaOf(before)
	})
	c2.send(prefix + "d")
	if code, _ := c2.wait(); code != 0 {
		t.Fatalf("second detach: exit %d", code)
	}
}

// areaOf drops the status line from a screen's text.
func areaOf(s string) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:len(lines)-1], "\n")
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func TestAttachScrollback(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send("for i in $(seq 1 200); do echo line-$i; done\r")
	c.waitText("line-200")
	c.send(prefix + "[")
	c.waitStatus("in scroll mode", func(s string) bool { return strings.Contains(s, "scroll") })
	c.send("\x1b[5~")
	c.waitFor("earlier lines", func(s string) bool { return strings.Contains(s, "line-170\n") && !strings.Contains(s, "line-200") })
	c.send("\x1b[5~\x1b[5~")
	c.waitText("line-130\n")
	c.send("q")
	c.waitText("line-200")
	c.waitStatus("out of scroll mode", func(s string) bool { return !strings.Contains(s, "scroll") })
	c.send(prefix + "d")
	if code, _ := c.wait(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
}

func TestAttachRefusedInsideTab(t *testing.T) {
	cmd := exec.Command(phantomBin, "attach")
	cmd.Env = append(os.Environ(), "PHANTOM_TAB_ID=t7")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("attach inside a tab: err %v, want a non-zero exit", err)
	}
	if !strings.Contains(string(out), "inside Phantom tab t7") {
		t.Errorf("attach inside a tab said %q", out)
	}
}

func TestAttachFullScreenProgram(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send("printf 'alpha\\nbeta\\ngamma\\n' > f.txt; vim -u NONE -N f.txt\r")
	c.waitFor("vim showing the file", func(s string) bool {
		return c.row(0) == "alpha" && c.row(1) == "beta" && c.row(2) == "gamma" && strings.HasPrefix(c.row(3), "~")
	})
	// vim's own last line sits just above the status line.
	c.waitFor("vim's message line", func(string) bool { return strings.Contains(c.row(22), "f.txt") })
	c.send("ggOzeta\x1b")
	c.waitFor("the inserted line", func(string) bool { return c.row(0) == "zeta" && c.row(1) == "alpha" })
	c.send(":q!\r")
	c.waitFor("vim gone", func(s string) bool { return !strings.Contains(s, "zeta") })
	c.send("echo back-$((2+3))\r")
	c.waitText("back-5")
	c.send(prefix + "d")
	if code, _ := c.wait(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
}

func TestAttachCloseTabs(t *testing.T) {
	in := startPhantom(t)
	if _, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: in.env.Home, Name: "two"}); err != nil {
		t.Fatal(err)
	}
	c := in.attach(t, 80, 24, nil)
	c.waitStatus("with two tabs", func(s string) bool { return strings.Contains(s, "2:two") })
	// Rename the first tab with prefix+, .
	c.send(prefix + ",")
	c.waitStatus("the rename prompt", func(s string) bool { return strings.Contains(s, "rename tab") })
	c.send("alpha\r")
	c.waitStatus("the new name", func(s string) bool { return strings.Contains(s, "1:alpha*") })
	// prefix+c opens a third tab, focused.
	c.send(prefix + "c")
	c.waitStatus("a third tab, focused", func(s string) bool {
		return strings.Contains(s, "3:") && strings.Contains(s, "*") && !strings.Contains(s, "alpha*")
	})
	// Close them one by one: the client moves to a neighbour, then exits.
	for n := 3; n > 1; n-- {
		c.send(prefix + "xy") // x asks; y closes
		c.waitStatus(fmt.Sprintf("%d tabs", n-1), func(s string) bool { return !strings.Contains(s, fmt.Sprintf("%d:", n)) })
	}
	c.send(prefix + "s")
	c.waitStatus("no sheet", func(s string) bool { return strings.Contains(s, "no permission sheet waiting") })
	c.send(prefix + "xy") // x asks; y closes
	code, out := c.wait()
	if code != 0 || !strings.Contains(out, "no tabs left") {
		t.Fatalf("closing the last tab: exit %d, output ends %q", code, tail(out, 200))
	}
}
