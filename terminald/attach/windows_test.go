package attach

import (
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// prefix is the default prefix key, Ctrl-\\.
const prefix = "\x1c"

// twoWindows is a workspace with window main (tabs printing MARK-main-1
// and MARK-main-2) and window ci (a tab printing MARK-ci), the tab ids
// by marker.
func twoWindows(t testing.TB) (*workspace.Workspace, workspace.Window, map[string]string) {
	t.Helper()
	ws := newWorkspace(t)
	ci := ws.CreateWindow("ci")
	ids := map[string]string{}
	for _, c := range []struct{ mark, win string }{{"main-1", ""}, {"main-2", ""}, {"ci", ci.ID}} {
		tm, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir(), WindowID: c.win,
			Command: []string{"sh", "-c", "echo MARK-" + c.mark + "; exec sleep 1000"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[c.mark] = tm.ID
	}
	return ws, ci, ids
}

// TestSessionStepWindow: prefix ) and ( go to the next and previous
// window, wrapping around; the tab area, status line and detach message
// follow the window.
func TestSessionStepWindow(t *testing.T) {
	ws, ci, _ := twoWindows(t)
	c := startClient(t, ws, Hello{Cols: 80, Rows: 24})
	c.waitText("MARK-main-1")
	for i, step := range []struct{ key, mark, window string }{
		{")", "MARK-ci", "ci"},
		{")", "MARK-main-1", "main"}, // wraps
		{"(", "MARK-ci", "ci"},       // wraps back
		{"(", "MARK-main-1", "main"},
	} {
		c.send(prefix + step.key)
		c.waitFor(step.mark, func(text string) bool {
			return strings.Contains(text, step.mark) && strings.HasSuffix(c.row(23), step.window)
		})
		if step.window == "main" && strings.Contains(c.text(), "MARK-ci") || step.window == "ci" && strings.Contains(c.text(), "MARK-main") {
			t.Fatalf("step %d: the other window's tab still shows:\n%s", i, c.text())
		}
	}
	c.send(prefix + ")")
	c.waitFor("ci", func(string) bool { return strings.HasSuffix(c.row(23), "ci") })
	c.send(prefix + "d")
	<-c.done
	if want := "detached from window ci (" + ci.ID + ")"; c.exit.Message != want {
		t.Errorf("detach message %q, want %q", c.exit.Message, want)
	}
}

// TestSessionWindowClosed: a client of a window that closes moves to
// another window and says so; prefix & asks before it closes one, and
// refuses the last.
func TestSessionWindowClosed(t *testing.T) {
	ws, ci, ids := twoWindows(t)
	c := startClient(t, ws, Hello{Target: ci.ID, Cols: 80, Rows: 24})
	c.waitText("MARK-ci")
	if _, _, err := ws.CloseWindow(ci.ID); err != nil {
		t.Fatal(err)
	}
	c.waitText("MARK-main-1")
	c.waitText("was closed")
	if _, err := ws.Get(ids["ci"]); err == nil {
		t.Errorf("tab %s of the closed window is still open", ids["ci"])
	}

	c.send(prefix + "&")
	c.waitText("the only window")
	ws.CreateWindow("spare")
	c.send(prefix + "&")
	c.waitText("close window main (w1) and its 2 tabs? y/n")
	c.send("n")
	c.waitText("kept window main (w1)")
	c.send(prefix + "&" + "y")
	c.waitText("window main (w1) was closed")
	for _, id := range []string{ids["main-1"], ids["main-2"]} {
		if _, err := ws.Get(id); err == nil {
			t.Errorf("tab %s of closed window main is still open", id)
		}
	}
}

// TestSessionMoveTab: prefix . moves the shown tab to a window by name,
// making one for a new name; the client stays, showing the neighbour, and
// follows the tab when it was the window's last.
func TestSessionMoveTab(t *testing.T) {
	ws, ci, ids := twoWindows(t)
	c := startClient(t, ws, Hello{Target: ids["main-2"], Cols: 80, Rows: 24})
	c.waitText("MARK-main-2")
	c.send(prefix + ".")
	c.waitText("move 2:")
	c.send("ci\r")
	c.waitText("moved " + ids["main-2"] + " to window ci (" + ci.ID + ")")
	c.waitText("MARK-main-1")
	if tm, _ := ws.Get(ids["main-2"]); tm.WindowID != ci.ID {
		t.Errorf("tab %s is in window %q, want %s", tm.ID, tm.WindowID, ci.ID)
	}
	c.send(prefix + "." + "w77\r")
	c.waitText("no window w77")
	c.send(prefix + "." + "ops\r")
	// It was main's last tab: the client follows it.
	c.waitText("followed " + ids["main-1"] + " to window ops")
	c.waitFor("window ops on the status line", func(string) bool { return strings.HasSuffix(c.row(23), "ops") })
	c.waitText("MARK-main-1")
}

// TestTreeChooser: the tree shows every window, the client's open with
// its tabs' directories and programs; → opens another, Enter on its tab
// switches there, x asks to close a tab.
func TestTreeChooser(t *testing.T) {
	ws, _, ids := twoWindows(t)
	c := startClient(t, ws, Hello{Cols: 100, Rows: 24})
	c.waitText("MARK-main-1")
	c.send(prefix + "w")
	c.waitText("▾ main (w1)  2 tabs  *")
	c.waitText("▸ ci (w2)  1 tab")
	c.waitText("2:")
	c.waitText("sleep")
	c.send("jj")     // main-2, then ci
	c.send("\x1b[C") // open ci
	c.send("j")      // ci's tab
	c.waitText("▾ ci (w2)")
	c.send("\r")
	c.waitText("MARK-ci")
	c.waitFor("ci on the status line", func(string) bool { return strings.HasSuffix(c.row(23), "ci") })
	c.send(prefix + "w" + "x")
	c.waitText("close tab 1:")
	c.send("y")
	// ci's last tab closed: as when prefix x closes it, the client ends.
	<-c.done
	if want := "window ci (w2) has no tabs left"; c.exit.Message != want {
		t.Errorf("exit message %q, want %q", c.exit.Message, want)
	}
	if _, err := ws.Get(ids["ci"]); err == nil {
		t.Errorf("tab %s closed from the tree is still open", ids["ci"])
	}
}

// TestTreeLineParts: the helpers of a tree row.
func TestTreeLineParts(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, c := range []struct{ in, want string }{
		{homeDir("/home/u"), "~"},
		{homeDir("/home/u/src/app"), "~/src/app"},
		{homeDir("/home/user2"), "/home/user2"},
		{cutLeft("/a/b/c", 10), "/a/b/c"},
		{cutLeft("/very/long/path/to/project", 10), "…o/project"},
		{windowLabel("w2", "ci"), "ci (w2)"},
		{windowLabel("w3", "w3"), "w3"},
		{windowLabel("w4", "\x1b[31mred"), "[31mred (w4)"},
	} {
		if c.in != c.want {
			t.Errorf("got %q, want %q", c.in, c.want)
		}
	}
	for s, want := range map[string]bool{"w1": true, "w12": true, "w": false, "wx": false, "ci": false, "t3": false} {
		if isWindowID(s) != want {
			t.Errorf("isWindowID(%q) = %v", s, !want)
		}
	}
}

// TestNextWindow: where the clients of a closed window go.
func TestNextWindow(t *testing.T) {
	win := func(id string, tabs ...string) workspace.Window { return workspace.Window{ID: id, TabIDs: tabs} }
	for _, c := range []struct {
		name  string
		order []string
		gone  string
		wins  []workspace.Window
		want  string
	}{
		{"the one after", []string{"w1", "w2", "w3"}, "w2", []workspace.Window{win("w1", "t1"), win("w3", "t3")}, "w3"},
		{"the last one: the one before", []string{"w1", "w2", "w3"}, "w3", []workspace.Window{win("w1", "t1"), win("w2", "t2")}, "w2"},
		{"an empty one skipped", []string{"w1", "w2", "w3"}, "w2", []workspace.Window{win("w1", "t1"), win("w3")}, "w1"},
		{"only empty ones", []string{"w1", "w2", "w3"}, "w2", []workspace.Window{win("w1"), win("w3")}, "w3"},
		{"one made since", []string{"w1"}, "w1", []workspace.Window{win("w4", "t4")}, "w4"},
		{"never seen", nil, "w9", []workspace.Window{win("w1"), win("w2", "t2")}, "w2"},
	} {
		if got := nextWindow(c.order, c.gone, c.wins); got != c.want {
			t.Errorf("%s: nextWindow = %s, want %s", c.name, got, c.want)
		}
	}
}

// TestSessionSwitchMovesFocusInbox: after a switch, agents' focus
// requests for the new window reach the client, and those for the old
// one no longer count it.
func TestSessionSwitchMovesFocusInbox(t *testing.T) {
	ws, ci, _ := twoWindows(t)
	f := NewFocuses()
	c := startClientWith(t, Options{Workspace: ws, Focus: f}, Hello{Cols: 80, Rows: 24})
	c.waitText("MARK-main-1")
	if f.Attached("w1") != 1 || f.Attached(ci.ID) != 0 {
		t.Fatalf("before the switch: %d clients of w1, %d of ci", f.Attached("w1"), f.Attached(ci.ID))
	}
	c.send(prefix + ")")
	c.waitText("MARK-ci")
	if f.Attached("w1") != 0 || f.Attached(ci.ID) != 1 {
		t.Errorf("after the switch: %d clients of w1, %d of ci", f.Attached("w1"), f.Attached(ci.ID))
	}
}

// FuzzTreeKeys: any bytes typed into the tree leave it consistent: no
// panic, the highlighted row within the rows, and the session on a
// window that exists.
func FuzzTreeKeys(f *testing.F) {
	for _, seed := range []string{"jjl\r", "\x1b[C\x1b[Bx", "kkkh-+l%", "j\"", "\x1b", "q", "jlj\r", "\x1c", "x"} {
		f.Add([]byte(seed))
	}
	ws, _, _ := twoWindows(f)
	f.Fuzz(func(t *testing.T, keys []byte) {
		s := &session{o: Options{Workspace: ws, Prefix: DefaultPrefix}, ws: ws, cols: 80, rows: 24,
			dirty: make(chan struct{}, 1), winID: "w1"}
		defer func() {
			for _, l := range s.root.leaves(nil) {
				l.pane.close()
			}
			s.bg.Wait()
		}()
		s.openTree()
		s.chooseKeys(keys)
		if s.mode == modeChoose {
			if rows := s.treeRows(); s.chosen < 0 || s.chosen >= len(rows) {
				t.Fatalf("row %d highlighted of %d", s.chosen, len(rows))
			}
			s.chooseBox()
		}
		if !slicesContainsWindow(ws.Windows(), s.winID) {
			t.Fatalf("the session is on window %q, which does not exist", s.winID)
		}
	})
}

func slicesContainsWindow(wins []workspace.Window, id string) bool {
	for _, w := range wins {
		if w.ID == id {
			return true
		}
	}
	return false
}

// TestSessionSwitchKeepsLayouts: a window's splits stay the window's
// while the client shows another, and come back with it.
func TestSessionSwitchKeepsLayouts(t *testing.T) {
	ws, _, ids := twoWindows(t)
	c := startClient(t, ws, Hello{Target: ids["main-1"], Cols: 81, Rows: 24})
	c.waitText("MARK-main-1")
	c.send(prefix + "%")
	split := func(string) bool { return strings.Contains(c.row(5), "│") }
	c.waitFor("the split", split)
	c.send(prefix + ")")
	c.waitText("MARK-ci")
	c.waitFor("ci unsplit", func(s string) bool { return !split(s) })
	c.send(prefix + "(")
	c.waitFor("main's split back", func(s string) bool { return split(s) && strings.Contains(s, "MARK-main-1") })
	if es, _ := ws.Entries("w1"); len(es) == 0 || es[0].Root.Tab != "" {
		t.Errorf("main lost its split: %+v", es)
	}
}

// TestTreeFollowsWindows: an open tree shows a window made, renamed or
// closed elsewhere at once, without a key.
func TestTreeFollowsWindows(t *testing.T) {
	ws, ci, _ := twoWindows(t)
	c := startClient(t, ws, Hello{Cols: 100, Rows: 24})
	c.waitText("MARK-main-1")
	c.send(prefix + "w")
	c.waitText("▸ ci (w2)")
	ops := ws.CreateWindow("ops")
	c.waitText("▸ ops (w3)  0 tabs")
	if _, err := ws.RenameWindow(ops.ID, "deploy"); err != nil {
		t.Fatal(err)
	}
	c.waitText("▸ deploy (w3)")
	if _, _, err := ws.CloseWindow(ops.ID); err != nil {
		t.Fatal(err)
	}
	c.waitFor("deploy gone", func(s string) bool {
		return !strings.Contains(s, "deploy") && strings.Contains(s, "▸ ci ("+ci.ID+")")
	})
}
