package workspace

import (
	"encoding/json"
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

// TestWindowLayoutStored: a window's layout is read back without tabs
// that closed, signals its change, and survives the state blob the holder
// keeps.
func TestWindowLayoutStored(t *testing.T) {
	w := newWorkspace(t)
	win := w.Windows()[0].ID
	var ids []string
	for range 2 {
		tm, err := w.Create(CreateSpec{Directory: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tm.ID)
	}
	l, changed := w.WindowLayout(win)
	if l.Root != nil {
		t.Fatalf("a new window has a layout: %+v", l)
	}
	want := WindowLayout{Root: split(leaf(ids[0]), leaf(ids[1])), Zoomed: true}
	w.SetWindowLayout(win, want)
	select {
	case <-changed:
	default:
		t.Fatal("no change signalled")
	}
	if got, _ := w.WindowLayout(win); !got.Equal(want) {
		t.Fatalf("read back %+v, want %+v", got, want)
	}

	var st savedState
	if err := json.Unmarshal(w.snapshotState(), &st); err != nil {
		t.Fatal(err)
	}
	if l := st.Windows[0].Layout; l == nil || !l.Equal(want) {
		t.Fatalf("the state blob carries %+v, want %+v", l, want)
	}

	if err := w.Close(ids[1]); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.WindowLayout(win); got.Root != nil {
		t.Fatalf("one tab left, yet a layout: %+v", got)
	}
}
