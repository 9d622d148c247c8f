package workspace

import (
	"slices"
	"sync"
)

// A window's layout is how attach shows its tabs: side by side and
// stacked, in panes. It lives with the window, as in tmux, not with one
// client: a client that attaches later, or a second client of the same
// window, shows the same splits, and the state blob the holder keeps
// carries it across `phantom upgrade`. The workspace only keeps it; the
// attach sessions make and draw it.

// LayoutNode is a split of two nodes, or a leaf showing one tab.
type LayoutNode struct {
	// Tab is a leaf's tab; empty for a split.
	Tab string `json:"tab,omitempty"`
	// Stacked splits top and bottom, else left and right.
	Stacked bool `json:"stacked,omitempty"`
	// Ratio is the first child's share of the room.
	Ratio float64 `json:"ratio,omitempty"`
	// A and B are a split's children, left or top first.
	A *LayoutNode `json:"a,omitempty"`
	B *LayoutNode `json:"b,omitempty"`
}

// WindowLayout is a window's panes.
type WindowLayout struct {
	// Root is the tree of splits; nil when the window shows one tab.
	Root *LayoutNode `json:"root,omitempty"`
	// Zoomed says the focused tab's pane fills the window.
	Zoomed bool `json:"zoomed,omitempty"`
}

// Equal reports whether l and o lay out the same tabs the same way.
func (l WindowLayout) Equal(o WindowLayout) bool {
	return l.Zoomed == o.Zoomed && l.Root.equal(o.Root)
}

func (n *LayoutNode) equal(o *LayoutNode) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.Tab == o.Tab && n.Stacked == o.Stacked && n.Ratio == o.Ratio && n.A.equal(o.A) && n.B.equal(o.B)
}

// Tabs lists the tabs the layout shows, left to right, top to bottom.
func (n *LayoutNode) Tabs(out []string) []string {
	switch {
	case n == nil:
	case n.Tab != "":
		out = append(out, n.Tab)
	default:
		out = n.B.Tabs(n.A.Tabs(out))
	}
	return out
}

// keep is the subtree without the leaves whose tab keep rejects (closed,
// or moved to another window), or a second leaf of one tab: the sibling of
// a removed leaf takes its parent's place.
func (n *LayoutNode) keep(keep func(tab string) bool, seen map[string]bool) *LayoutNode {
	switch {
	case n == nil:
		return nil
	case n.Tab != "":
		if !keep(n.Tab) || seen[n.Tab] {
			return nil
		}
		seen[n.Tab] = true
		return &LayoutNode{Tab: n.Tab}
	}
	a, b := n.A.keep(keep, seen), n.B.keep(keep, seen)
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &LayoutNode{Stacked: n.Stacked, Ratio: n.Ratio, A: a, B: b}
}

// layouts are the windows' layouts, with a signal of their changes.
type layouts struct {
	mu      sync.Mutex
	m       map[string]WindowLayout // by window id
	changed chan struct{}           // closed and replaced at each change
}

// watch is the current change signal; called with ls.mu held.
func (ls *layouts) watch() chan struct{} {
	if ls.changed == nil {
		ls.changed = make(chan struct{})
	}
	return ls.changed
}

// set stores window id's layout and reports whether it changed.
func (ls *layouts) set(id string, l WindowLayout) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m[id].Equal(l) {
		return false
	}
	if ls.m == nil {
		ls.m = map[string]WindowLayout{}
	}
	if l.Root == nil {
		delete(ls.m, id)
	} else {
		ls.m[id] = l
	}
	close(ls.watch())
	ls.changed = nil
	return true
}

// saved is window id's layout for the state blob; nil when it has none.
func (ls *layouts) saved(id string) *WindowLayout {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l, ok := ls.m[id]; ok {
		return &l
	}
	return nil
}

// WindowLayout returns window id's layout, without the tabs that closed
// or left the window since it was set, and a channel closed at the next
// change of any window's layout.
func (w *Workspace) WindowLayout(id string) (WindowLayout, <-chan struct{}) {
	w.mu.Lock()
	var tabs []string
	if win, err := w.windowLocked(id); err == nil {
		tabs = slices.Clone(win.tabs)
	}
	w.mu.Unlock()
	ls := &w.layouts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.m[id]
	l.Root = l.Root.keep(func(tab string) bool { return slices.Contains(tabs, tab) }, map[string]bool{})
	if l.Root == nil || l.Root.Tab != "" {
		l = WindowLayout{} // one tab or none: no splits
	}
	return l, ls.watch()
}

// SetWindowLayout stores window id's layout for every client of the
// window and for the next terminald.
func (w *Workspace) SetWindowLayout(id string, l WindowLayout) {
	if l.Root != nil && l.Root.Tab != "" {
		l = WindowLayout{}
	}
	if w.layouts.set(id, l) {
		w.requestSave()
	}
}
