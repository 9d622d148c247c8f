package editor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTerminals plays terminald: tabs are processes it started, headless.
type fakeTerminals struct {
	t       *testing.T
	mu      sync.Mutex
	windows map[string]string // tab → window
	boxed   map[string]bool   // sandboxed tabs
	opened  []Launch          // what Launch was asked
	procs   map[int]string    // pid → tab
	cmds    map[string]*exec.Cmd
	n       int
}

func newFakeTerminals(t *testing.T) *fakeTerminals {
	f := &fakeTerminals{t: t, windows: map[string]string{"agent-1": "w1", "agent-2": "w2", "boxed-1": "w1", "boxed-2": "w1"},
		boxed: map[string]bool{"boxed-1": true, "boxed-2": true}, procs: map[int]string{}, cmds: map[string]*exec.Cmd{}}
	t.Cleanup(func() {
		for _, c := range f.cmds {
			c.Process.Kill()
			c.Wait()
		}
	})
	return f
}

func (f *fakeTerminals) Tab(_ context.Context, id string) (TabInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, ok := f.windows[id]
	if !ok {
		return TabInfo{}, os.ErrNotExist
	}
	return TabInfo{Window: w, Dir: f.t.TempDir(), Sandboxed: f.boxed[id]}, nil
}

// run starts argv headless as a new tab of window.
func (f *fakeTerminals) run(window string, argv []string) string {
	return f.runBoxed(window, false, argv)
}

// runBoxed starts argv headless as a new tab of window, marked sandboxed
// when boxed.
func (f *fakeTerminals) runBoxed(window string, boxed bool, argv []string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	tab := "editor-" + strconv.Itoa(f.n)
	args := append([]string{"--headless", "--clean"}, argv[1:]...)
	cmd := exec.Command(argv[0], args...)
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.windows[tab], f.procs[cmd.Process.Pid], f.cmds[tab], f.boxed[tab] = window, tab, cmd, boxed
	return tab
}

func (f *fakeTerminals) Launch(_ context.Context, l Launch) (string, error) {
	f.mu.Lock()
	f.opened = append(f.opened, l)
	f.mu.Unlock()
	if l.Socket != "" {
		// terminald makes the sandboxed editor's directory afresh.
		if err := os.RemoveAll(filepath.Dir(l.Socket)); err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(l.Socket), 0o700); err != nil {
			return "", err
		}
	}
	return f.runBoxed(l.Window, l.Sandbox, l.Argv), nil
}

func (f *fakeTerminals) Locate(_ context.Context, pid int, _ uint64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[pid], nil
}

// quit ends tab's editor as a human's :qa! would, and waits for it.
func (f *fakeTerminals) quit(tab string) {
	f.mu.Lock()
	c := f.cmds[tab]
	delete(f.cmds, tab)
	f.mu.Unlock()
	c.Process.Kill()
	c.Wait()
}

func newTestManager(t *testing.T) (*Manager, *fakeTerminals, string) {
	if _, err := exec.LookPath("nvim"); err != nil {
		t.Skip("nvim is not installed (scripts/setup installs Debian's neovim)")
	}
	dir := t.TempDir()
	f := newFakeTerminals(t)
	m := NewManager(Options{Terminals: f, Socket: func(w string) string { return filepath.Join(dir, w+".sock") },
		SandboxedSocket: func(w, tab string) string { return filepath.Join(dir, w, tab, "nvim.sock") }})
	t.Cleanup(m.Close)
	return m, f, dir
}

func TestManagerStartsOnePerWindowAndRestarts(t *testing.T) {
	m, f, _ := newTestManager(t)
	ctx := ctxT(t)
	if s, err := m.Lookup(ctx, Caller{TabID: "agent-1"}); err != nil || s != nil {
		t.Fatalf("Lookup before any editor = %v, %v; want none", s, err)
	}
	s1, err := m.Ensure(ctx, Caller{TabID: "agent-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !s1.Started || s1.TerminalID == "" {
		t.Fatalf("first Ensure: started %v in tab %q", s1.Started, s1.TerminalID)
	}
	again, err := m.Ensure(ctx, Caller{TabID: "agent-1"})
	if err != nil || again.Started || again.TerminalID != s1.TerminalID {
		t.Fatalf("second Ensure = %+v, %v; want the same editor", again, err)
	}
	other, err := m.Ensure(ctx, Caller{TabID: "agent-2"})
	if err != nil || other.TerminalID == s1.TerminalID {
		t.Fatalf("another window's Ensure = %+v, %v; want its own editor", other, err)
	}
	f.quit(s1.TerminalID)
	select {
	case <-s1.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end with the editor")
	}
	if s, err := m.Lookup(ctx, Caller{TabID: "agent-1"}); err != nil || s != nil {
		t.Fatalf("Lookup after the editor quit = %+v, %v; want none", s, err)
	}
	fresh, err := m.Ensure(ctx, Caller{TabID: "agent-1"})
	if err != nil || !fresh.Started || fresh.TerminalID == s1.TerminalID {
		t.Fatalf("Ensure after quit = %+v, %v; want a fresh editor", fresh, err)
	}
	if _, err := fresh.State(ctx); err != nil {
		t.Fatalf("the fresh editor does not answer: %v", err)
	}
}

func TestManagerAdopts(t *testing.T) {
	m, f, dir := newTestManager(t)
	ctx := ctxT(t)
	sock := filepath.Join(dir, "w1.sock")
	tab := f.run("w1", Command("nvim", sock))
	waitListening(t, sock)
	s, err := m.Lookup(ctx, Caller{TabID: "agent-1"})
	if err != nil || s == nil || s.TerminalID != tab || s.Started {
		t.Fatalf("Lookup = %+v, %v; want the editor in tab %s, adopted", s, err, tab)
	}
}

func TestManagerReplacesAnImpostor(t *testing.T) {
	m, f, dir := newTestManager(t)
	ctx := ctxT(t)
	// A Neovim in window w2 listening on w1's socket is not w1's editor:
	// it is not adopted, and w1 gets its own.
	sock := filepath.Join(dir, "w1.sock")
	impostor := f.run("w2", Command("nvim", sock))
	waitListening(t, sock)
	if s, err := m.Lookup(ctx, Caller{TabID: "agent-1"}); err != nil || s != nil {
		t.Fatalf("Lookup = %+v, %v; want no editor (the impostor is not adopted)", s, err)
	}
	s, err := m.Ensure(ctx, Caller{TabID: "agent-1"})
	if err != nil || !s.Started || s.TerminalID == impostor {
		t.Fatalf("Ensure = %+v, %v; want a fresh editor, not the impostor in %s", s, err, impostor)
	}
}

func TestManagerClearsADeadSocket(t *testing.T) {
	m, _, dir := newTestManager(t)
	ctx := ctxT(t)
	sock := filepath.Join(dir, "w1.sock")
	// A socket file nobody listens on: what a killed editor leaves.
	cmd := exec.Command("nvim", "--headless", "--clean", "--listen", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitListening(t, sock)
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(sock); err != nil {
		t.Skipf("nvim removed its socket even when killed: %v", err)
	}
	s, err := m.Ensure(ctx, Caller{TabID: "agent-1"})
	if err != nil || !s.Started {
		t.Fatalf("Ensure over a dead socket = %+v, %v; want a fresh editor", s, err)
	}
}

func TestManagerRefusesCallersOutsideTabs(t *testing.T) {
	m, _, _ := newTestManager(t)
	_, err := m.Ensure(ctxT(t), Caller{})
	if err == nil || !strings.Contains(err.Error(), "runs in no Phantom tab") {
		t.Fatalf("Ensure without a tab = %v; want a plain refusal", err)
	}
}

func waitListening(t *testing.T, sock string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := dialNvim(ctx, sock)
		cancel()
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nvim did not listen on %s: %v", sock, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
