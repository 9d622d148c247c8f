package workspace

import (
	"slices"
	"testing"
)

func leaf(tab string) *LayoutNode { return &LayoutNode{Tab: tab} }

func split(a, b *LayoutNode) *LayoutNode { return &LayoutNode{Ratio: 0.5, A: a, B: b} }

// TestLayoutKeep: tabs that closed or left the window leave the layout;
// the sibling of a removed pane takes its parent's place.
func TestLayoutKeep(t *testing.T) {
	tree := split(leaf("t1"), &LayoutNode{Stacked: true, Ratio: 0.3, A: leaf("t2"), B: leaf("t3")})
	tests := []struct {
		name string
		tabs []string
		root *LayoutNode
		want []string
	}{
		{"all there", []string{"t1", "t2", "t3"}, tree, []string{"t1", "t2", "t3"}},
		{"a stacked pane gone", []string{"t1", "t2"}, tree, []string{"t1", "t2"}},
		{"the left pane gone", []string{"t2", "t3"}, tree, []string{"t2", "t3"}},
		{"one left", []string{"t3"}, tree, []string{"t3"}},
		{"none left", nil, tree, nil},
		{"a tab twice: once", []string{"t1"}, split(leaf("t1"), leaf("t1")), []string{"t1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.root.keep(func(tab string) bool { return slices.Contains(tt.tabs, tab) }, map[string]bool{})
			if tabs := got.Tabs(nil); !slices.Equal(tabs, tt.want) {
				t.Errorf("tabs %v, want %v", tabs, tt.want)
			}
		})
	}
	// The stacked split keeps its ratio when the left pane goes.
	got := tree.keep(func(tab string) bool { return tab != "t1" }, map[string]bool{})
	if !got.Stacked || got.Ratio != 0.3 {
		t.Errorf("the stacked split became %+v", got)
	}
}

// TestLayoutSibling: the pane that takes a closing pane's room.
func TestLayoutSibling(t *testing.T) {
	tree := split(leaf("t1"), &LayoutNode{Stacked: true, Ratio: 0.3, A: leaf("t2"), B: leaf("t3")})
	tests := []struct {
		root      *LayoutNode
		tab, want string
	}{
		{tree, "t1", "t2"},
		{tree, "t2", "t3"},
		{tree, "t3", "t2"},
		{tree, "t9", ""},
		{leaf("t1"), "t1", ""},
		{nil, "t1", ""},
	}
	for _, tt := range tests {
		if got := tt.root.sibling(tt.tab); got != tt.want {
			t.Errorf("sibling of %s in %v = %q, want %q", tt.tab, tt.root.Tabs(nil), got, tt.want)
		}
	}
}
