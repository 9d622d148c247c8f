package attach

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// The window holds entries, as a tmux session holds windows: the status
// line lists them, and each has its own layout of panes, each pane one
// tab (workspace.Entry). The entries belong to the window: every client
// of it shows the same, and a client attaching later finds them. A
// session shows one entry, the one holding the window's focused tab, as
// its own tree of panes (layout.go, panes.go); it hands the entry to the
// workspace after each change of its own (publishLayout), rebuilds it
// when another client changed it (syncLayout), and switches to another
// entry when the window's focus moves to a tab of it (show). Focus stays
// per client, following the window's focused tab as before.

// curEntry is the index in s.entries of the entry the session shows: the
// one holding its focused tab, else one holding a tab of its panes; -1
// when none does (the panes' tabs closed or left).
func (s *session) curEntry() int {
	if i := workspace.EntryOf(s.entries, s.tabID); i >= 0 && s.tabID != "" {
		return i
	}
	for _, l := range s.root.leaves(nil) {
		if i := workspace.EntryOf(s.entries, l.pane.tabID); i >= 0 {
			return i
		}
	}
	return -1
}

// exportEntry is the session's tree as an entry.
func (s *session) exportEntry() workspace.Entry {
	e := workspace.Entry{Root: exportNode(s.root), Zoomed: s.zoomed && s.root != nil && s.root.pane == nil}
	if s.fp != nil {
		e.Focused = s.fp.tabID
	}
	return e
}

func exportNode(n *node) *workspace.LayoutNode {
	switch {
	case n == nil:
		return nil
	case n.pane != nil:
		return &workspace.LayoutNode{Tab: n.pane.tabID}
	}
	return &workspace.LayoutNode{Stacked: n.stacked, Ratio: n.ratio, A: exportNode(n.a), B: exportNode(n.b)}
}

// publishLayout hands the session's tree to the window, as the entry it
// shows, when it differs from what the window last had: a tab the tree
// took from another entry (the chooser's split) leaves that one.
func (s *session) publishLayout() {
	if s.root == nil {
		return
	}
	i := s.curEntry()
	if i < 0 {
		i = len(s.entries) // none of its tabs in an entry yet: a new one
	}
	es := workspace.PlaceEntry(s.entries, i, s.exportEntry(), false)
	if slices.EqualFunc(es, s.entries, workspace.Entry.Equal) {
		return
	}
	s.entries = es
	s.orderTabs()
	s.ws.SetEntries(s.winID, es)
}

// orderTabs puts s.tabs in the entries' order, pane by pane, as the tab
// chooser lists them: its numbers ("1.2:", "2:") then read in order.
func (s *session) orderTabs() {
	rank := map[string]int{}
	for _, e := range s.entries {
		for _, t := range e.Tabs() {
			rank[t] = len(rank)
		}
	}
	slices.SortStableFunc(s.tabs, func(a, b workspace.Terminal) int {
		ra, oka := rank[a.ID]
		rb, okb := rank[b.ID]
		switch {
		case oka != okb && oka:
			return -1
		case oka != okb:
			return 1
		}
		return ra - rb
	})
}

// syncLayout reads the window's entries and, when another client changed
// the one shown, shows it as it is now.
func (s *session) syncLayout() {
	es, changed := s.ws.Entries(s.winID)
	s.layoutCh = changed
	s.entries = es
	s.orderTabs()
	i := s.curEntry()
	if i < 0 {
		return // the panes' tabs are gone: refresh follows the window's focus
	}
	mine := s.exportEntry()
	if es[i].Root.Equal(mine.Root) && es[i].Zoomed == mine.Zoomed {
		return
	}
	s.showEntry(es[i], s.tabID)
}

// showEntry makes the session's tree entry e's, focused on tab focus (e's
// focused pane when e does not hold it): panes of tabs already shown are
// kept (with their views), others are opened or closed.
func (s *session) showEntry(e workspace.Entry, focus string) {
	if e.Root == nil {
		return // the workspace's entries always have panes
	}
	old := map[string]*pane{}
	for _, lf := range s.root.leaves(nil) {
		old[lf.pane.tabID] = lf.pane
	}
	// The tree first, with stand-ins at the leaves, so that each new
	// pane's view opens at its place's size: a tab opened at a wrong size
	// would be resized (and its program signalled) twice.
	root := importNode(e.Root, nil)
	root.place(rect{0, 0, s.cols, s.rows - 1})
	for _, lf := range root.leaves(nil) {
		id := lf.pane.tabID
		if p, ok := old[id]; ok {
			delete(old, id)
			lf.pane, p.leaf = p, lf
			continue
		}
		p, err := s.openPane(id, lf.r)
		if err != nil {
			// Closed meanwhile: its neighbour takes the room.
			root = remove(root, lf)
			continue
		}
		lf.pane, p.leaf = p, lf
	}
	for _, p := range old {
		p.close()
	}
	s.root = root
	prev := s.fp
	s.fp = nil
	ls := root.leaves(nil)
	for _, want := range []string{focus, e.Focused} {
		if i := slices.IndexFunc(ls, func(l *node) bool { return l.pane.tabID == want }); i >= 0 && s.fp == nil {
			s.fp = ls[i].pane
		}
	}
	if s.fp == nil && len(ls) > 0 {
		s.fp = ls[0].pane
	}
	if s.fp != prev {
		s.leaveCopy()
	}
	s.tabID = ""
	if s.fp != nil {
		s.tabID = s.fp.tabID
	}
	s.zoomed = e.Zoomed && root != nil && root.pane == nil
	s.relayout()
}

// importNode builds a tree of l, with stand-in panes that name the tabs
// at its leaves.
func importNode(l *workspace.LayoutNode, parent *node) *node {
	if l == nil {
		return nil
	}
	n := &node{parent: parent}
	if l.Tab != "" {
		n.pane = &pane{tabID: l.Tab}
		return n
	}
	n.stacked, n.ratio = l.Stacked, l.Ratio
	n.a, n.b = importNode(l.A, n), importNode(l.B, n)
	return n
}

// stepEntry shows the entry step places after (before, when negative)
// the shown one, wrapping around.
func (s *session) stepEntry(step int) {
	if n := len(s.entries); n > 0 {
		s.focus(s.entries[((max(s.curEntry(), 0)+step)%n+n)%n].Focused)
	}
}

// focusNumber shows the entry the status line numbers n (1-based).
func (s *session) focusNumber(n int) {
	if n >= 1 && n <= len(s.entries) {
		s.focus(s.entries[n-1].Focused)
		return
	}
	s.setMessage(fmt.Sprintf("no entry %d on the status line (it has %d)", n, len(s.entries)))
}

// breakPane takes the focused pane out of the entry into an entry of its
// own, right after it, and shows that (tmux's break-pane).
func (s *session) breakPane() {
	if s.fp == nil || s.fp.leaf.parent == nil {
		s.setMessage("only one pane: nothing to break out")
		return
	}
	id, i := s.fp.tabID, s.curEntry()
	s.removePane(s.fp.leaf)
	s.entries = workspace.PlaceEntry(s.entries, i+1, workspace.EntryLeaf(id), true)
	s.ws.SetEntries(s.winID, s.entries)
	s.focus(id)
}

// entryTabs are the tabs the status line shows, one an entry (its
// focused pane's), and each entry's panes (counted when several, Z when
// zoomed).
func (s *session) entryTabs() ([]workspace.Terminal, []string) {
	var tabs []workspace.Terminal
	var panes []string
	for _, e := range s.entries {
		id := e.Focused
		if slices.Contains(e.Tabs(), s.tabID) {
			id = s.tabID // the pane this client shows, should it not be the window's
		}
		t := workspace.Terminal{ID: id} // not listed yet: its id
		if k := slices.IndexFunc(s.tabs, func(t workspace.Terminal) bool { return t.ID == id }); k >= 0 {
			t = s.tabs[k]
		}
		tabs = append(tabs, t)
		mark := ""
		if n := len(e.Tabs()); n > 1 {
			mark = strconv.Itoa(n)
			if e.Zoomed {
				mark += markZoomed
			}
		}
		panes = append(panes, mark)
	}
	return tabs, panes
}

// entryPlace is where tab id sits among entries es: "2" for entry 2 of
// one pane, "1.2" for the second pane of entry 1; "?" when in none.
func entryPlace(es []workspace.Entry, id string) string {
	i := workspace.EntryOf(es, id)
	if i < 0 {
		return "?"
	}
	place := strconv.Itoa(i + 1)
	if ts := es[i].Tabs(); len(ts) > 1 {
		place += "." + strconv.Itoa(slices.Index(ts, id)+1)
	}
	return place
}
