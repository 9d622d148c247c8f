package attach

import "github.com/phantom-dev/phantom/terminald/workspace"

// The layout belongs to the window (workspace.WindowLayout), as in tmux:
// every client of a window shows the same splits, and a client attaching
// later finds them. A session keeps its own tree of panes (layout.go,
// panes.go), hands it to the workspace after each change of its own
// (publishLayout), and rebuilds it when another client changed the
// window's (syncLayout). Focus stays per client, following the window's
// focused tab as before.

// exportLayout is the session's tree as the window's layout.
func (s *session) exportLayout() workspace.WindowLayout {
	if s.root == nil || s.root.pane != nil {
		return workspace.WindowLayout{} // one pane: no splits
	}
	return workspace.WindowLayout{Root: exportNode(s.root), Zoomed: s.zoomed}
}

func exportNode(n *node) *workspace.LayoutNode {
	if n.pane != nil {
		return &workspace.LayoutNode{Tab: n.pane.tabID}
	}
	return &workspace.LayoutNode{Stacked: n.stacked, Ratio: n.ratio, A: exportNode(n.a), B: exportNode(n.b)}
}

// publishLayout hands the session's tree to the window when it differs
// from what the window last had.
func (s *session) publishLayout() {
	l := s.exportLayout()
	if l.Equal(s.shared) {
		return
	}
	s.shared = l
	s.ws.SetWindowLayout(s.winID, l)
}

// syncLayout reads the window's layout and, when another client changed
// it, shows it: panes of tabs already shown are kept (with their views),
// others are opened or closed.
func (s *session) syncLayout() {
	l, changed := s.ws.WindowLayout(s.winID)
	s.layoutCh = changed
	if l.Equal(s.shared) {
		return
	}
	s.shared = l
	if l.Root == nil {
		// One pane: keep the focused one (refresh shows the window's
		// focused tab in it).
		if s.root != nil && s.root.pane == nil && s.fp != nil {
			for _, lf := range s.root.leaves(nil) {
				if lf.pane != s.fp {
					lf.pane.close()
				}
			}
			s.root = &node{pane: s.fp}
			s.fp.leaf = s.root
		}
		s.zoomed = false
		s.relayout()
		return
	}
	old := map[string]*pane{}
	for _, lf := range s.root.leaves(nil) {
		old[lf.pane.tabID] = lf.pane
	}
	// The tree first, with stand-ins at the leaves, so that each new
	// pane's view opens at its place's size: a tab opened at a wrong size
	// would be resized (and its program signalled) twice.
	root := importNode(l.Root, nil)
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
	for _, lf := range root.leaves(nil) {
		if s.fp == nil || lf.pane.tabID == s.tabID {
			s.fp = lf.pane
		}
	}
	if s.fp != prev {
		s.leaveCopy()
	}
	s.tabID = ""
	if s.fp != nil {
		s.tabID = s.fp.tabID
	}
	s.zoomed = l.Zoomed && root != nil && root.pane == nil
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
