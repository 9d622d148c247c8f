package attach

// Splits: a session may show several tabs of its window at once, side by
// side and stacked, each in a pane: an entry of the status line. The
// splits belong to the window's entry, so that every client of it shows
// the same (shared.go); every pane's tab
// stays a tab (to MCP), and gets the pane's size as its view's size (a
// tab takes the smallest size among its views, as with several clients).
// The layout is a binary tree of splits with panes at the leaves; this
// file is its geometry.

// rect is a part of the tab area, in cells.
type rect struct{ x, y, w, h int }

// contains reports whether cell x, y lies in r.
func (r rect) contains(x, y int) bool { return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h }

// node is a split (two children) or a pane (a leaf).
type node struct {
	pane *pane // a leaf's pane; nil for a split
	// stacked splits top and bottom (tmux's "), else left and right (%).
	stacked bool
	ratio   float64 // the first child's share of the room
	a, b    *node
	parent  *node
	r       rect // where the node was last placed
}

// minPane is the smallest width or height a pane is given.
const minPane = 1

// place lays the subtree out in r: a split gives its first child ratio of
// the room less one cell for the border, at least minPane, and the rest to
// the second.
func (n *node) place(r rect) {
	n.r = r
	if n.pane != nil {
		return
	}
	size := r.w
	if n.stacked {
		size = r.h
	}
	room := size - 1 // the border
	first := int(float64(room)*n.ratio + 0.5)
	first = min(max(first, minPane), max(room-minPane, minPane))
	second := max(room-first, 0)
	if n.stacked {
		n.a.place(rect{r.x, r.y, r.w, first})
		n.b.place(rect{r.x, r.y + first + 1, r.w, second})
	} else {
		n.a.place(rect{r.x, r.y, first, r.h})
		n.b.place(rect{r.x + first + 1, r.y, second, r.h})
	}
}

// leaves appends the subtree's panes in order (left to right, top to
// bottom).
func (n *node) leaves(out []*node) []*node {
	if n == nil {
		return out
	}
	if n.pane != nil {
		return append(out, n)
	}
	return n.b.leaves(n.a.leaves(out))
}

// find returns the leaf showing p.
func (n *node) find(p *pane) *node {
	for _, l := range n.leaves(nil) {
		if l.pane == p {
			return l
		}
	}
	return nil
}

// split replaces leaf n with a split of n and a new leaf for p, p second;
// it returns the new split.
func (n *node) split(p *pane, stacked bool) *node {
	old := &node{pane: n.pane, parent: n}
	n.pane = nil
	n.stacked, n.ratio = stacked, 0.5
	n.a, n.b = old, &node{pane: p, parent: n}
	if old.pane != nil {
		// The leaf's pane moved to a new node: keep its pointer's home.
		old.pane.leaf = old
	}
	p.leaf = n.b
	return n
}

// remove takes leaf n out of the tree whose root is root and returns the
// new root (nil when n was the root).
func remove(root, n *node) *node {
	par := n.parent
	if par == nil {
		return nil
	}
	sib := par.a
	if sib == n {
		sib = par.b
	}
	// The sibling takes the parent's place.
	sib.parent = par.parent
	if par.parent == nil {
		return sib
	}
	if par.parent.a == par {
		par.parent.a = sib
	} else {
		par.parent.b = sib
	}
	return root
}

// Directions for moving between panes and resizing them.
type direction int

const (
	dirLeft direction = iota
	dirRight
	dirUp
	dirDown
)

// neighbour returns the pane next to from in direction d: of those whose
// edge faces from's across the border, the one overlapping it most; ties
// go to the one covering the cursor's row or column (at, in area cells).
func neighbour(leaves []*node, from *node, d direction, at int) *node {
	f := from.r
	var best *node
	bestOverlap := 0
	for _, l := range leaves {
		if l == from {
			continue
		}
		r := l.r
		var faces bool
		var lo, hi, flo, fhi int
		switch d {
		case dirLeft:
			faces, lo, hi, flo, fhi = r.x+r.w+1 == f.x, r.y, r.y+r.h, f.y, f.y+f.h
		case dirRight:
			faces, lo, hi, flo, fhi = f.x+f.w+1 == r.x, r.y, r.y+r.h, f.y, f.y+f.h
		case dirUp:
			faces, lo, hi, flo, fhi = r.y+r.h+1 == f.y, r.x, r.x+r.w, f.x, f.x+f.w
		case dirDown:
			faces, lo, hi, flo, fhi = f.y+f.h+1 == r.y, r.x, r.x+r.w, f.x, f.x+f.w
		}
		overlap := min(hi, fhi) - max(lo, flo)
		if !faces || overlap <= 0 {
			continue
		}
		covers := at >= lo && at < hi
		if best == nil || covers && !bestCovers(best, d, at) || overlap > bestOverlap && covers == bestCovers(best, d, at) {
			best, bestOverlap = l, overlap
		}
	}
	return best
}

// bestCovers reports whether n spans position at across direction d.
func bestCovers(n *node, d direction, at int) bool {
	if d == dirLeft || d == dirRight {
		return at >= n.r.y && at < n.r.y+n.r.h
	}
	return at >= n.r.x && at < n.r.x+n.r.w
}

// resize moves the border of the nearest split above leaf n that runs
// across direction d by cells, towards d; it reports whether one did.
func resize(n *node, d direction, cells int) bool {
	stacked := d == dirUp || d == dirDown
	for c := n; c.parent != nil; c = c.parent {
		p := c.parent
		if p.stacked != stacked {
			continue
		}
		size := p.r.w
		if stacked {
			size = p.r.h
		}
		room := size - 1
		if room < 2*minPane {
			return false
		}
		delta := float64(cells) / float64(room)
		if d == dirLeft || d == dirUp {
			delta = -delta
		}
		first := int(float64(room)*p.ratio+0.5) + int(delta*float64(room)+copySign(0.5, delta))
		first = min(max(first, minPane), room-minPane)
		p.ratio = float64(first) / float64(room)
		return true
	}
	return false
}

func copySign(v, sign float64) float64 {
	if sign < 0 {
		return -v
	}
	return v
}

// borders returns the cells of the area that are borders: for each
// split, the column (or row) between its children, within its rect.
func borders(n *node, out []rect) []rect {
	if n == nil || n.pane != nil {
		return out
	}
	if n.stacked {
		out = append(out, rect{n.r.x, n.a.r.y + n.a.r.h, n.r.w, 1})
	} else {
		out = append(out, rect{n.a.r.x + n.a.r.w, n.r.y, 1, n.r.h})
	}
	return borders(n.b, borders(n.a, out))
}
