package editor

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEditorFor(t *testing.T) {
	tests := []struct {
		name   string
		caller Caller
		info   TabInfo
		want   which
	}{
		{"unsandboxed tab: the window's editor", Caller{TabID: "t1"}, TabInfo{Window: "w1"}, which{window: "w1"}},
		{"sandboxed tab: its own editor", Caller{TabID: "t2"}, TabInfo{Window: "w1", Sandboxed: true}, which{window: "w1", owner: "t2"}},
		{"another sandboxed tab of the window: another editor", Caller{TabID: "t3"}, TabInfo{Window: "w1", Sandboxed: true}, which{window: "w1", owner: "t3"}},
		{"sandboxed tab of another window", Caller{TabID: "t2"}, TabInfo{Window: "w2", Sandboxed: true}, which{window: "w2", owner: "t2"}},
		{"the directory does not matter", Caller{TabID: "t1", Dir: "/elsewhere"}, TabInfo{Window: "w1", Dir: "/x"}, which{window: "w1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := editorFor(tt.caller, tt.info)
			if got != tt.want {
				t.Fatalf("editorFor(%+v, %+v) = %+v, want %+v", tt.caller, tt.info, got, tt.want)
			}
			if got.sandboxed() != tt.info.Sandboxed {
				t.Fatalf("editor %+v sandboxed = %v, want %v like its caller's tab", got, got.sandboxed(), tt.info.Sandboxed)
			}
		})
	}
}

// A sandboxed tab never drives the window's editor, the human's: it gets
// an editor of its own, sandboxed, on its own socket.
func TestManagerSandboxedCallerGetsItsOwnEditor(t *testing.T) {
	m, f, dir := newTestManager(t)
	ctx := ctxT(t)
	sock := filepath.Join(dir, "w1.sock")
	human := f.run("w1", Command("nvim", sock))
	waitListening(t, sock)
	if s, err := m.Lookup(ctx, Caller{TabID: "agent-1"}); err != nil || s == nil || s.TerminalID != human {
		t.Fatalf("unsandboxed Lookup = %+v, %v; want the human's editor in %s", s, err, human)
	}
	if s, err := m.Lookup(ctx, Caller{TabID: "boxed-1"}); err != nil || s != nil {
		t.Fatalf("sandboxed Lookup = %+v, %v; want none (the human's editor is not its)", s, err)
	}
	s, err := m.Ensure(ctx, Caller{TabID: "boxed-1"})
	if err != nil || !s.Started || s.TerminalID == human {
		t.Fatalf("sandboxed Ensure = %+v, %v; want a fresh editor, not the human's in %s", s, err, human)
	}
	l := f.opened[len(f.opened)-1]
	if want := filepath.Join(dir, "w1", "boxed-1", "nvim.sock"); !l.Sandbox || l.Socket != want {
		t.Fatalf("Launch = %+v; want sandboxed, listening on %s", l, want)
	}
	other, err := m.Ensure(ctx, Caller{TabID: "boxed-2"})
	if err != nil || other.TerminalID == s.TerminalID || other.TerminalID == human {
		t.Fatalf("another sandboxed tab's Ensure = %+v, %v; want an editor of its own", other, err)
	}
	again, err := m.Ensure(ctx, Caller{TabID: "boxed-1"})
	if err != nil || again.Started || again.TerminalID != s.TerminalID {
		t.Fatalf("second sandboxed Ensure = %+v, %v; want the same editor", again, err)
	}
}

// After a restart editord finds a sandboxed tab's editor again on its
// socket; the human's editor linked there is not adopted.
func TestManagerAdoptsOnlySandboxedEditors(t *testing.T) {
	_, f, dir := newTestManager(t)
	ctx := ctxT(t)
	sbx := filepath.Join(dir, "w1", "boxed-1", "nvim.sock")
	if err := os.MkdirAll(filepath.Dir(sbx), 0o700); err != nil {
		t.Fatal(err)
	}
	human := filepath.Join(dir, "w1.sock")
	f.run("w1", Command("nvim", human))
	waitListening(t, human)
	if err := os.Symlink(human, sbx); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{Terminals: f, Socket: func(w string) string { return filepath.Join(dir, w+".sock") },
		SandboxedSocket: func(w, tab string) string { return filepath.Join(dir, w, tab, "nvim.sock") }})
	t.Cleanup(m.Close)
	if s, err := m.Lookup(ctx, Caller{TabID: "boxed-1"}); err != nil || s != nil {
		t.Fatalf("Lookup through a link to the human's editor = %+v, %v; want none", s, err)
	}
	if _, err := os.Lstat(sbx); !os.IsNotExist(err) {
		t.Fatalf("the link to the human's editor is still there: %v", err)
	}
	tab := f.runBoxed("w1", true, Command("nvim", sbx))
	waitListening(t, sbx)
	restarted := NewManager(Options{Terminals: f, Socket: func(w string) string { return filepath.Join(dir, w+".sock") },
		SandboxedSocket: func(w, tab string) string { return filepath.Join(dir, w, tab, "nvim.sock") }})
	t.Cleanup(restarted.Close)
	s, err := restarted.Lookup(ctx, Caller{TabID: "boxed-1"})
	if err != nil || s == nil || s.TerminalID != tab || s.Started {
		t.Fatalf("Lookup after a restart = %+v, %v; want the sandboxed editor in %s, adopted", s, err, tab)
	}
}
