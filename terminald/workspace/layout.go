package workspace

// An entry's layout is how attach shows its tabs: side by side and
// stacked, in panes (entries.go). It lives with the window, as in tmux,
// not with one client: a client that attaches later, or a second client
// of the same window, shows the same splits, and the state blob the
// holder keeps carries it across `phantom upgrade`. The workspace only
// keeps it; the attach sessions make and draw it.

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

// Equal reports whether n and o lay out the same tabs the same way.
func (n *LayoutNode) Equal(o *LayoutNode) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.Tab == o.Tab && n.Stacked == o.Stacked && n.Ratio == o.Ratio && n.A.Equal(o.A) && n.B.Equal(o.B)
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

// sibling is the first tab of the subtree beside the leaf showing tab:
// the pane that takes its room when it goes; "" when tab is the only
// pane or not shown.
func (n *LayoutNode) sibling(tab string) string {
	if n == nil || n.Tab != "" {
		return ""
	}
	for _, pair := range [2][2]*LayoutNode{{n.A, n.B}, {n.B, n.A}} {
		if pair[0] != nil && pair[0].Tab == tab {
			if ts := pair[1].Tabs(nil); len(ts) > 0 {
				return ts[0]
			}
		}
	}
	if s := n.A.sibling(tab); s != "" {
		return s
	}
	return n.B.sibling(tab)
}
