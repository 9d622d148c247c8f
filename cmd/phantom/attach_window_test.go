package main

// Windows in attach, through a real outer terminal (outer_test.go):
// prefix ( and ) switch windows, prefix w is a tree of windows and tabs,
// tabs opened from a tab land in its window, windows close (CLI, prefix
// &) and tabs move between windows (CLI, prefix .).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// windowsWorld makes window main with tab "editor" in ~/proj-main and
// window ci with tab "build" in ~/proj-ci, each printing its marker
// (MAIN-TEXT, CI-TEXT) and then sleeping; it returns the tab ids. (Window
// main has the shell tab phantom up opens, too.)
func windowsWorld(t *testing.T, in *instance) (editor, build string) {
	t.Helper()
	for _, d := range []string{"proj-main", "proj-ci"} {
		if err := os.Mkdir(filepath.Join(in.env.Home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	mustPhantom(t, in.env, "window", "new", "ci")
	editor = strings.TrimSpace(mustPhantom(t, in.env, "new", "--name", "editor", "--dir", filepath.Join(in.env.Home, "proj-main"),
		"--", "sh", "-c", "echo MAIN-TEXT; exec sleep 1000"))
	build = strings.TrimSpace(mustPhantom(t, in.env, "new", "--window", "ci", "--name", "build", "--dir", filepath.Join(in.env.Home, "proj-ci"),
		"--", "sh", "-c", "echo CI-TEXT; exec sleep 1000"))
	return editor, build
}

// statusEnds waits for the outer terminal's status line to end with the
// window name.
func (o *outer) statusEnds(name string) {
	o.t.Helper()
	eventually(o.t, "window "+name+" on the status line", func() (bool, string) {
		s := o.status()
		return strings.HasSuffix(strings.TrimRight(s, " "), " "+name), o.screen()
	})
}

// windowOf is the window tab id is in, "" when it is gone.
func (in *instance) windowOf(t *testing.T, id string) string {
	t.Helper()
	for _, tm := range in.list(t) {
		if tm.GetId() == id {
			return tm.GetWindowId()
		}
	}
	return ""
}

// TestAttachWindowsSwitch: prefix ) and ( switch the client between two
// windows (each one's tab text and name on the status line), the tree of
// prefix w shows both windows with their tabs' directories and programs,
// Enter on the other window's tab goes there, and the detach message
// names the window.
func TestAttachWindowsSwitch(t *testing.T) {
	in := startPhantom(t)
	windowsWorld(t, in)
	o := in.attachOuter(t, 100, 30, nil, "editor")
	o.waitText("MAIN-TEXT")
	o.statusEnds("main")

	o.prefix(")")
	o.waitText("CI-TEXT")
	o.statusEnds("ci")
	if s := o.screen(); strings.Contains(s, "MAIN-TEXT") || !strings.Contains(o.status(), "1:build") {
		t.Fatalf("after prefix ), the client shows:\n%s", s)
	}
	o.prefix(")") // wraps around
	o.waitText("MAIN-TEXT")
	o.statusEnds("main")
	o.prefix("(")
	o.waitText("CI-TEXT")
	o.prefix("(")
	o.waitText("MAIN-TEXT")
	o.statusEnds("main")

	o.prefix("w")
	o.waitText("▾ main (w1)  2 tabs  *")
	o.waitText("▸ ci (w2)  1 tab")
	o.waitFor("the editor's directory and program", func(s string) bool {
		return strings.Contains(s, "2:editor") && strings.Contains(s, "~/proj-main") && strings.Contains(s, "sleep")
	})
	o.keys("j", "l") // to ci, open it
	o.waitText("▾ ci (w2)")
	o.waitFor("build's directory", func(s string) bool { return strings.Contains(s, "1:build") && strings.Contains(s, "~/proj-ci") })
	o.keys("j", "Enter")
	o.waitText("CI-TEXT")
	o.statusEnds("ci")

	// phantom upgrade: the client reconnects to the window it showed
	// (ci), not to the one it was started on; the tree marks it.
	if out, err := in.run("upgrade"); err != nil {
		t.Fatalf("phantom upgrade: %v\n%s", err, out)
	}
	eventually(t, "the client back on ci after the upgrade", func() (bool, string) {
		o.prefix("w")
		defer o.keys("Escape")
		s := o.screen()
		return strings.Contains(s, "▾ ci (w2)  1 tab  *") && strings.Contains(s, "▸ main (w1)"), s
	})
	o.statusEnds("ci")

	o.prefix("d")
	eventually(t, "the detach message", func() (bool, string) {
		done, _ := o.exited()
		s := o.tmux("capture-pane", "-p", "-S", "-50", "-t", "0")
		return done && strings.Contains(s, "[detached from window ci (w2)]"), s
	})
}

// TestAttachWindowsNewTabInCallersWindow: `phantom new` typed into a tab
// of window ci opens its tab in ci, and so does an agent's
// create_terminal from a tab of ci (--window is refused there); the
// human outside Phantom still opens in the first window.
func TestAttachWindowsNewTabInCallersWindow(t *testing.T) {
	in := startPhantom(t)
	mustPhantom(t, in.env, "window", "new", "ci")
	a := newAttacker(t, in.env, "ci-shell", "--window", "ci")
	if r := a.run(shellCmd(phantomBin, "new", "--name", "cli-in-ci")); r.code != 0 {
		t.Fatalf("phantom new inside a tab of ci: %v", r)
	}
	// Inside a tab, --window is the human's (as windows' names are).
	if r := a.run(shellCmd(phantomBin, "new", "--window", "w1", "--name", "elsewhere")); !refused(r) {
		t.Errorf("phantom new --window w1 inside a tab of ci: want a refusal, got %v", r)
	}
	run := a.agent("tester", map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"name": "mcp-in-ci"}})
	r := resultOf(t, waitStep(t, run.read, 0))
	if r.IsError {
		t.Fatalf("create_terminal: %s", r.text())
	}
	var out struct {
		Terminal struct {
			WindowID string `json:"window_id"`
		} `json:"terminal"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out.Terminal.WindowID != "w2" {
		t.Errorf("create_terminal from a tab of ci answered %s, want window_id w2", b)
	}
	outside := strings.TrimSpace(mustPhantom(t, in.env, "new", "--name", "outside"))
	byName := map[string]string{}
	for _, tm := range in.list(t) {
		byName[tm.GetName()] = tm.GetWindowId()
	}
	for name, want := range map[string]string{"cli-in-ci": "w2", "mcp-in-ci": "w2", "outside": "w1"} {
		if byName[name] != want {
			t.Errorf("tab %s opened in window %q, want %s (tabs: %v; %s)", name, byName[name], want, byName, outside)
		}
	}
}

// TestAttachWindowsCloseAndMove: `phantom window close` closes a window
// and its tabs, and its attached client moves to another window; the
// last window is refused; prefix & closes the client's window after y;
// `phantom window move` and prefix . move a tab, which keeps its id and
// scrollback and shows in the other window.
func TestAttachWindowsCloseAndMove(t *testing.T) {
	in := startPhantom(t)
	editor, build := windowsWorld(t, in)
	logs := strings.TrimSpace(mustPhantom(t, in.env, "new", "--name", "logs", "--", "sh", "-c", "seq -f 'logline-%g' 1 300; exec sleep 1000"))
	onCI := in.attachOuter(t, 100, 30, nil, "ci")
	onCI.waitText("CI-TEXT")
	onMain := in.attachOuter(t, 100, 30, nil, "editor")
	onMain.waitText("MAIN-TEXT")

	// From the CLI: ci closes, its client moves to main.
	if out := mustPhantom(t, in.env, "window", "close", "ci"); !strings.Contains(out, "closed window ci (w2) and its tab") {
		t.Errorf("phantom window close ci printed %q", out)
	}
	onCI.waitText("window ci (w2) was closed; this is window main (w1)")
	onCI.statusEnds("main")
	if w := in.windowOf(t, build); w != "" {
		t.Errorf("tab %s of the closed window is in window %q", build, w)
	}
	if r := phantom(t, in.env, "window", "close", "main"); r.code == 0 || !strings.Contains(r.stderr, "only window") {
		t.Errorf("closing the last window: %v", r)
	}

	// From the CLI: the logs tab moves to a new window ops, keeping its
	// id and scrollback; a client of ops shows it.
	mustPhantom(t, in.env, "window", "new", "ops")
	mustPhantom(t, in.env, "window", "move", "main:logs", "ops")
	if w := in.windowOf(t, logs); w != "w3" {
		t.Fatalf("tab %s is in window %q after the move, want w3", logs, w)
	}
	onOps := in.attachOuter(t, 100, 30, nil, "ops")
	onOps.waitText("logline-300")
	onOps.statusEnds("ops")
	if !strings.Contains(onOps.status(), "1:logs") {
		t.Errorf("ops' status line: %q", onOps.status())
	}
	if out := mustPhantom(t, in.env, "read", logs, "-n", "400"); !strings.Contains(out, "logline-1\n") {
		t.Errorf("the moved tab lost its scrollback: %q", out[:min(len(out), 200)])
	}
	onMain.waitFor("logs gone from main's status line", func(string) bool { return !strings.Contains(onMain.status(), "logs") })

	// From attach: prefix . moves the editor to ops; the client stays in
	// main, showing the shell, and ops' client shows a second tab.
	onMain.prefix(".")
	onMain.waitText("to window (name or id")
	onMain.literal("ops")
	onMain.keys("Enter")
	onMain.waitText("to window ops (w3)")
	onMain.statusEnds("main")
	if w := in.windowOf(t, editor); w != "w3" {
		t.Errorf("tab %s is in window %q after prefix ., want w3", editor, w)
	}
	onOps.waitFor("the editor as ops' second tab", func(string) bool { return strings.Contains(onOps.status(), "2:editor") })
	// The shell was main's last tab: moved, the client follows it.
	onMain.prefix(".")
	onMain.literal("w3")
	onMain.keys("Enter")
	onMain.statusEnds("ops")
	onMain.waitFor("ops' three tabs", func(string) bool { return strings.Contains(onMain.status(), "3:") })

	// From attach: prefix & closes ops after y; its clients move to main,
	// which is empty (its tabs left), so each gets a new tab there.
	onOps.prefix("&")
	onOps.waitText("close window ops (w3) and its 3 tabs? y/n")
	onOps.keys("y")
	onOps.waitText("window ops (w3) was closed; this is window main (w1)")
	onMain.statusEnds("main")
	for _, id := range []string{editor, logs} {
		if w := in.windowOf(t, id); w != "" {
			t.Errorf("tab %s of closed window ops is in window %q", id, w)
		}
	}
	var wins []string
	resp, err := in.tc.ListWindows(tctx(t), &terminalv1.ListWindowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range resp.GetWindows() {
		wins = append(wins, w.GetId())
	}
	if strings.Join(wins, ",") != "w1" {
		t.Errorf("windows left: %v, want w1", wins)
	}
}
