package attach

import (
	"fmt"
	"strings"
	"testing"
)

// Layout builders for tests: leaves named by their tab id.
func leaf(id string) *node {
	n := &node{pane: &pane{tabID: id}}
	n.pane.leaf = n
	return n
}

func splitNode(stacked bool, ratio float64, a, b *node) *node {
	n := &node{stacked: stacked, ratio: ratio, a: a, b: b}
	a.parent, b.parent = n, n
	return n
}

func side(a, b *node) *node  { return splitNode(false, 0.5, a, b) }
func stack(a, b *node) *node { return splitNode(true, 0.5, a, b) }

// rects is where each leaf of n was placed, as "id x,y wxh".
func rects(n *node) string {
	var out []string
	for _, l := range n.leaves(nil) {
		out = append(out, fmt.Sprintf("%s %d,%d %dx%d", l.pane.tabID, l.r.x, l.r.y, l.r.w, l.r.h))
	}
	return strings.Join(out, "; ")
}

func byID(n *node, id string) *node {
	for _, l := range n.leaves(nil) {
		if l.pane.tabID == id {
			return l
		}
	}
	return nil
}

func TestLayoutPlace(t *testing.T) {
	tests := []struct {
		name       string
		tree       func() *node
		cols, rows int
		want       string
	}{
		{"one pane", func() *node { return leaf("a") }, 80, 23, "a 0,0 80x23"},
		{"side by side", func() *node { return side(leaf("a"), leaf("b")) }, 80, 23, "a 0,0 40x23; b 41,0 39x23"},
		{"stacked", func() *node { return stack(leaf("a"), leaf("b")) }, 80, 23, "a 0,0 80x11; b 0,12 80x11"},
		{"four: two columns of two", func() *node {
			return side(stack(leaf("a"), leaf("c")), stack(leaf("b"), leaf("d")))
		}, 81, 23, "a 0,0 40x11; c 0,12 40x11; b 41,0 40x11; d 41,12 40x11"},
		{"three: one left, two right", func() *node { return side(leaf("a"), stack(leaf("b"), leaf("c"))) }, 30, 8,
			"a 0,0 15x8; b 16,0 14x4; c 16,5 14x3"},
		{"uneven ratio", func() *node { return splitNode(false, 0.25, leaf("a"), leaf("b")) }, 41, 5, "a 0,0 10x5; b 11,0 30x5"},
		{"too narrow: each keeps a column", func() *node { return splitNode(false, 0.9, leaf("a"), leaf("b")) }, 3, 2, "a 0,0 1x2; b 2,0 1x2"},
		{"small screen 30x8 area", func() *node { return stack(leaf("a"), leaf("b")) }, 30, 7, "a 0,0 30x3; b 0,4 30x3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.tree()
			n.place(rect{0, 0, tt.cols, tt.rows})
			if got := rects(n); got != tt.want {
				t.Errorf("placed %s, want %s", got, tt.want)
			}
		})
	}
}

func TestLayoutNeighbour(t *testing.T) {
	grid := func() *node { return side(stack(leaf("a"), leaf("c")), stack(leaf("b"), leaf("d"))) }
	tests := []struct {
		name, from string
		d          direction
		at         int
		want       string // "" for none
	}{
		{"right of a", "a", dirRight, 3, "b"},
		{"down from a", "a", dirDown, 3, "c"},
		{"left of a: none", "a", dirLeft, 3, ""},
		{"up from a: none", "a", dirUp, 3, ""},
		{"left of d", "d", dirLeft, 15, "c"},
		{"up from d", "d", dirUp, 50, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := grid()
			n.place(rect{0, 0, 81, 23})
			got := neighbour(n.leaves(nil), byID(n, tt.from), tt.d, tt.at)
			name := ""
			if got != nil {
				name = got.pane.tabID
			}
			if name != tt.want {
				t.Errorf("neighbour %v of %s = %q, want %q", tt.d, tt.from, name, tt.want)
			}
		})
	}
	// A tall pane beside two short ones: the cursor's row picks.
	n := side(leaf("a"), stack(leaf("b"), leaf("c")))
	n.place(rect{0, 0, 80, 23})
	for at, want := range map[int]string{2: "b", 20: "c"} {
		if got := neighbour(n.leaves(nil), byID(n, "a"), dirRight, at); got == nil || got.pane.tabID != want {
			t.Errorf("right of a at row %d: got %v, want %s", at, got, want)
		}
	}
}

func TestLayoutResize(t *testing.T) {
	tests := []struct {
		name  string
		tree  func() *node
		pane  string
		d     direction
		times int
		want  string
	}{
		{"a grows right", func() *node { return side(leaf("a"), leaf("b")) }, "a", dirRight, 1, "a 0,0 42x23; b 43,0 37x23"},
		{"b moves its border left", func() *node { return side(leaf("a"), leaf("b")) }, "b", dirLeft, 2, "a 0,0 36x23; b 37,0 43x23"},
		{"stacked: up", func() *node { return stack(leaf("a"), leaf("b")) }, "b", dirUp, 1, "a 0,0 80x9; b 0,10 80x13"},
		{"never below a cell", func() *node { return side(leaf("a"), leaf("b")) }, "a", dirLeft, 50, "a 0,0 1x23; b 2,0 78x23"},
		{"the nearest split that runs that way", func() *node { return side(leaf("a"), stack(leaf("b"), leaf("c"))) }, "c", dirLeft, 1,
			"a 0,0 38x23; b 39,0 41x11; c 39,12 41x11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.tree()
			area := rect{0, 0, 80, 23}
			n.place(area)
			for range tt.times {
				if !resize(byID(n, tt.pane), tt.d, resizeStep) {
					t.Fatalf("resize %v refused", tt.d)
				}
				n.place(area)
			}
			if got := rects(n); got != tt.want {
				t.Errorf("after resize: %s, want %s", got, tt.want)
			}
		})
	}
	// No split runs that way: refused.
	n := side(leaf("a"), leaf("b"))
	n.place(rect{0, 0, 80, 23})
	if resize(byID(n, "a"), dirUp, 2) {
		t.Errorf("resize up in a side-by-side split was taken")
	}
}

func TestLayoutSplitAndRemove(t *testing.T) {
	area := rect{0, 0, 80, 23}
	root := leaf("a")
	p := &pane{tabID: "b"}
	root.split(p, false)
	root.place(area)
	if got, want := rects(root), "a 0,0 40x23; b 41,0 39x23"; got != want {
		t.Fatalf("after split: %s, want %s", got, want)
	}
	c := &pane{tabID: "c"}
	p.leaf.split(c, true)
	root.place(area)
	if got, want := rects(root), "a 0,0 40x23; b 41,0 39x11; c 41,12 39x11"; got != want {
		t.Fatalf("after the second split: %s, want %s", got, want)
	}
	// Removing b: c takes its room.
	root = remove(root, byID(root, "b"))
	root.place(area)
	if got, want := rects(root), "a 0,0 40x23; c 41,0 39x23"; got != want {
		t.Fatalf("after removing b: %s, want %s", got, want)
	}
	// Removing a: c is the root.
	root = remove(root, byID(root, "a"))
	root.place(area)
	if got, want := rects(root), "c 0,0 80x23"; got != want || root.parent != nil {
		t.Fatalf("after removing a: %s, want %s", got, want)
	}
	if remove(root, root) != nil {
		t.Errorf("removing the last pane left a tree")
	}
}

func TestBorders(t *testing.T) {
	n := side(leaf("a"), stack(leaf("b"), leaf("c")))
	n.place(rect{0, 0, 80, 23})
	got := fmt.Sprint(borders(n, nil))
	if want := "[{40 0 1 23} {41 11 39 1}]"; got != want {
		t.Errorf("borders %s, want %s", got, want)
	}
}

// TestComposeRow: the area's rows are the panes' rows side by side with a
// border between them, each tab padded to its width and the rest of its
// pane filled.
func TestComposeRow(t *testing.T) {
	mk := func(id, text string, cols, rows int) *node {
		n := leaf(id)
		n.pane.snap.Cols, n.pane.snap.Rows = cols, rows
		n.pane.lines = cellsOf(text)
		n.pane.lines[0] = n.pane.lines[0][:cols] // a tab's row is as wide as the tab
		for len(n.pane.lines) < rows {
			n.pane.lines = append(n.pane.lines, nil)
		}
		return n
	}
	tests := []struct {
		name       string
		tree       func() *node
		cols, rows int
		want       []string // the area's rows
	}{
		{"one pane, the tab as large", func() *node { return mk("a", "hello", 12, 2) }, 12, 3,
			[]string{"hello", ""}},
		{"one pane, a smaller tab", func() *node { return mk("a", "hi", 4, 1) }, 8, 3,
			[]string{"hi  ····", "········"}},
		{"side by side", func() *node { return side(mk("a", "left", 5, 2), mk("b", "right", 5, 2)) }, 11, 3,
			[]string{"left │right", "     │"}},
		{"stacked, a smaller tab below", func() *node { return stack(mk("a", "top", 6, 1), mk("b", "x", 3, 1)) }, 6, 4,
			[]string{"top", "──────", "x  ···"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.tree()
			s := &session{cols: tt.cols, rows: tt.rows, root: root, fp: root.leaves(nil)[0].pane}
			s.relayoutRects()
			visible := s.visiblePanes()
			for y, want := range tt.want {
				var b strings.Builder
				for _, c := range s.composeRow(y, visible, nil) {
					b.WriteString(c.String())
				}
				if got := strings.TrimRight(b.String(), " "); got != want {
					t.Errorf("row %d = %q, want %q", y, got, want)
				}
			}
		})
	}
}
