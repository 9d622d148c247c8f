package workspace

import (
	"errors"
	"slices"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// windowTabs are the tab ids of each window, by window id.
func windowTabs(w *Workspace) map[string][]string {
	out := map[string][]string{}
	for _, win := range w.Windows() {
		out[win.ID] = win.TabIDs
	}
	return out
}

// TestMoveTab: a tab moves to another window as its last tab, leaving its
// group and its old window's layout; the old window's focus goes to a
// neighbour; the errors name what is missing.
func TestMoveTab(t *testing.T) {
	w := newWorkspace(t)
	defer w.Shutdown()
	ci := w.CreateWindow("ci")
	g, err := w.CreateGroup("backend", "", "w1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, spec := range []CreateSpec{{GroupID: g.ID}, {}, {WindowID: ci.ID}} {
		spec.Directory = "/"
		tm, err := w.Create(spec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tm.ID)
	}
	w.SetEntries("w1", []Entry{{Root: &LayoutNode{Ratio: 0.5, A: &LayoutNode{Tab: ids[0]}, B: &LayoutNode{Tab: ids[1]}}}})

	tm, err := w.MoveTab(ids[0], ci.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tm.WindowID != ci.ID || tm.GroupID != "" {
		t.Errorf("moved tab: window %q group %q, want %q and no group", tm.WindowID, tm.GroupID, ci.ID)
	}
	if got := windowTabs(w); !slices.Equal(got["w1"], ids[1:2]) || !slices.Equal(got[ci.ID], []string{ids[2], ids[0]}) {
		t.Errorf("after the move the windows hold %v", got)
	}
	if es, _ := w.Entries("w1"); len(es) != 1 || es[0].Root.Tab != ids[1] {
		t.Errorf("w1's entries after the move: %+v, want one entry of %s alone", es, ids[1])
	}
	if es, _ := w.Entries(ci.ID); len(es) != 2 || es[1].Root.Tab != ids[0] {
		t.Errorf("ci's entries after the move: %+v, want the moved tab as an entry at the end", es)
	}
	for _, win := range w.Windows() {
		if win.ID == "w1" && win.FocusedTab != ids[1] {
			t.Errorf("w1 focuses %q after its focused tab left, want %s", win.FocusedTab, ids[1])
		}
	}
	if same, err := w.MoveTab(ids[0], ci.ID); err != nil || same.WindowID != ci.ID {
		t.Errorf("moving a tab to its own window: %+v, %v", same, err)
	}

	for _, c := range []struct {
		tab, win string
		want     error
	}{
		{"t99", ci.ID, errdefs.ErrNotFound},
		{ids[1], "w99", errdefs.ErrNotFound},
		{ids[1], "", errdefs.ErrInvalidArgument},
	} {
		if _, err := w.MoveTab(c.tab, c.win); !errors.Is(err, c.want) {
			t.Errorf("MoveTab(%q, %q) = %v, want %v", c.tab, c.win, err, c.want)
		}
	}
}

// TestCloseWindow: closing a window closes its tabs (watchers see each
// close), drops its groups, and leaves the others; the last window stays.
func TestCloseWindow(t *testing.T) {
	w := newWorkspace(t)
	defer w.Shutdown()
	ci := w.CreateWindow("ci")
	if _, err := w.CreateGroup("jobs", "", ci.ID); err != nil {
		t.Fatal(err)
	}
	keep, err := w.Create(CreateSpec{Directory: "/"})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for range 2 {
		tm, err := w.Create(CreateSpec{Directory: "/", WindowID: ci.ID})
		if err != nil {
			t.Fatal(err)
		}
		gone = append(gone, tm.ID)
	}
	watch := w.Watch()
	defer watch.Stop()

	win, closed, err := w.CloseWindow(ci.ID)
	if err != nil {
		t.Fatal(err)
	}
	if win.Name != "ci" || !slices.Equal(closed, gone) {
		t.Errorf("CloseWindow = %+v, closed %v; want ci, %v", win, closed, gone)
	}
	seen := map[string]bool{}
	for len(seen) < len(gone) {
		ev := <-watch.Events()
		if ev.Kind == EventClosed {
			seen[ev.Terminal.ID] = true
		}
	}
	if got := windowTabs(w); len(got) != 1 || !slices.Equal(got["w1"], []string{keep.ID}) {
		t.Errorf("after closing ci the windows hold %v", got)
	}
	for _, g := range w.Groups() {
		if g.WindowID == ci.ID {
			t.Errorf("group %s of the closed window is left", g.ID)
		}
	}
	for _, c := range []struct {
		win  string
		want error
	}{
		{"w1", errdefs.ErrFailedPrecondition}, // the last window
		{ci.ID, errdefs.ErrNotFound},
		{"", errdefs.ErrInvalidArgument},
	} {
		if _, _, err := w.CloseWindow(c.win); !errors.Is(err, c.want) {
			t.Errorf("CloseWindow(%q) = %v, want %v", c.win, err, c.want)
		}
	}
	if _, err := w.Get(keep.ID); err != nil {
		t.Errorf("the other window's tab: %v", err)
	}
}
