package attach

import (
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// threePanes is a client of a window whose one entry is split in three
// panes, left to right (prefix % twice), with the tab ids in that order;
// the last pane has the focus.
func threePanes(t *testing.T) (*fakeClient, *workspace.Workspace, string, []string) {
	t.Helper()
	ws := newWorkspace(t)
	win := ws.Windows()[0].ID
	first, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := startClient(t, ws, Hello{Cols: 120, Rows: 24})
	c.waitText("1:")
	tabs := []string{first.ID}
	for range 2 {
		c.send(prefix + "%")
		eventually(t, "a new pane", func() bool {
			f := ws.Windows()[0].FocusedTab
			return f != tabs[len(tabs)-1] && f != ""
		})
		tabs = append(tabs, ws.Windows()[0].FocusedTab)
	}
	c.waitFor("three panes", func(string) bool {
		es, _ := ws.Entries(win)
		return entriesText(es) == tabs[0]+"|"+tabs[1]+"|"+tabs[2]+"*"
	})
	return c, ws, win, tabs
}

// TestSwapPane checks prefix { and }: the focused pane swaps places with
// the previous and next pane of the entry, wrapping around, and keeps the
// focus; with one pane it says there is nothing to swap.
func TestSwapPane(t *testing.T) {
	c, ws, win, tabs := threePanes(t)
	a, b, cc := tabs[0], tabs[1], tabs[2]
	steps := []struct {
		key, want string
	}{
		{"{", a + "|" + cc + "*|" + b},
		{"{", cc + "*|" + a + "|" + b},
		{"{", b + "|" + a + "|" + cc + "*"}, // wraps to the end
		{"}", cc + "*|" + a + "|" + b},      // wraps to the start
		{"}", a + "|" + cc + "*|" + b},
		{"}", a + "|" + b + "|" + cc + "*"},
	}
	for _, st := range steps {
		c.send(prefix + st.key)
		c.waitFor(st.want, func(string) bool {
			es, _ := ws.Entries(win)
			return entriesText(es) == st.want && ws.Windows()[0].FocusedTab == cc
		})
	}
	c.send(prefix + "c" + prefix + "}")
	c.waitFor("nothing to swap", func(string) bool { return strings.Contains(c.status(), "only one pane: nothing to swap") })
}

// TestLastPane checks prefix ;: back to the entry's pane focused before,
// and again; it is the entry's, so it holds after visiting another entry,
// and a pane closed since is no last pane.
func TestLastPane(t *testing.T) {
	c, ws, _, tabs := threePanes(t)
	focused := func(what, id string) {
		t.Helper()
		c.waitFor(what, func(string) bool { return ws.Windows()[0].FocusedTab == id })
	}
	steps := []struct {
		keys, want, what string
	}{
		{";", tabs[1], "the pane before"},
		{";", tabs[2], "back again"},
		{"Left", tabs[1], "the pane to the left"},
		{"Left", tabs[0], "the first pane"},
		{";", tabs[1], "the pane focused before the first"},
	}
	for _, st := range steps {
		k := st.keys
		if k == "Left" {
			k = "\x1b[D"
		}
		c.send(prefix + k)
		focused(st.what, st.want)
	}
	c.send(prefix + "c")
	c.waitFor("a second entry", func(string) bool { return strings.Contains(c.status(), "2:") })
	c.send(prefix + ";")
	c.waitFor("no last pane in the new entry", func(string) bool { return strings.Contains(c.status(), "no last pane in this entry") })
	c.send(prefix + "1")
	focused("the first entry again", tabs[1])
	c.send(prefix + ";")
	focused("its last pane, remembered", tabs[0])
	if err := ws.Close(tabs[1]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pane closed", func() bool { _, err := ws.Get(tabs[1]); return err != nil })
	c.send(prefix + "1" + prefix + ";")
	c.waitFor("no last pane once it closed", func(string) bool { return strings.Contains(c.status(), "no last pane in this entry") })
}

// TestLastSession checks prefix L (tmux's switch-client -l): the window
// this client showed before, and again back; none before the first
// switch.
func TestLastSession(t *testing.T) {
	ws, _, _ := twoWindows(t)
	c := startClient(t, ws, Hello{Cols: 80, Rows: 24})
	c.waitText("MARK-main-1")
	c.send(prefix + "L")
	c.waitFor("no last window", func(string) bool { return strings.Contains(c.status(), "no last window") })
	for _, st := range []struct{ key, mark, window string }{
		{")", "MARK-ci", "ci"},
		{"L", "MARK-main-1", "main"},
		{"L", "MARK-ci", "ci"},
		{"L", "MARK-main-1", "main"},
	} {
		c.send(prefix + st.key)
		c.waitFor(st.window, func(text string) bool {
			return strings.Contains(text, st.mark) && strings.HasSuffix(c.status(), st.window)
		})
	}
}

// TestRenameSession checks prefix $ and :rename-session: the window's
// new name on the status line and in the workspace; an empty name keeps
// the old one.
func TestRenameSession(t *testing.T) {
	ws, _, _ := twoWindows(t)
	c := startClient(t, ws, Hello{Cols: 80, Rows: 24})
	c.waitText("MARK-main-1")
	main := ws.Windows()[0].ID
	tests := []struct {
		keys, name, msg string
	}{
		{prefix + "$\x15build\r", "build", ""},
		{prefix + ":rename-session ops deploy\r", "ops deploy", ""},
		{prefix + "$\x15\r", "ops deploy", "keeps its name"},
	}
	for _, tt := range tests {
		c.send(tt.keys)
		c.waitFor(tt.name, func(string) bool {
			w, _ := windowByID(ws, main)
			if tt.msg != "" {
				return w.Name == tt.name && strings.Contains(c.status(), tt.msg)
			}
			return w.Name == tt.name && strings.HasSuffix(c.status(), tt.name)
		})
	}
	c.send(prefix + "$")
	c.waitFor("the prompt with the name", func(string) bool {
		return strings.Contains(c.status(), "rename window "+main+": ops deploy")
	})
}

// windowByID is window id of ws.
func windowByID(ws *workspace.Workspace, id string) (workspace.Window, bool) {
	for _, w := range ws.Windows() {
		if w.ID == id {
			return w, true
		}
	}
	return workspace.Window{}, false
}
