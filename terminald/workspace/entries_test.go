package workspace

import (
	"encoding/json"
	"strings"
	"testing"
)

// entriesText is es as "t1|t2* t3": each entry's tabs joined by |, its
// focused one starred, a Z for a zoomed entry.
func entriesText(es []Entry) string {
	var out []string
	for _, e := range es {
		var ts []string
		for _, t := range e.Tabs() {
			if t == e.Focused {
				t += "*"
			}
			ts = append(ts, t)
		}
		s := strings.Join(ts, "|")
		if e.Zoomed {
			s += "Z"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestNormEntries: entries are read against the window's tabs and focus.
func TestNormEntries(t *testing.T) {
	pair := Entry{Root: split(leaf("t1"), leaf("t2")), Focused: "t2", Zoomed: true}
	tests := []struct {
		name    string
		es      []Entry
		tabs    []string
		focused string
		want    string
	}{
		{"no entries: one a tab", nil, []string{"t1", "t2", "t3"}, "t1", "t1* t2* t3*"},
		{"a split and a new tab at the end", []Entry{pair}, []string{"t1", "t2", "t3"}, "t2", "t1|t2*Z t3*"},
		{"the focus moves the entry's pane", []Entry{pair}, []string{"t1", "t2"}, "t1", "t1*|t2Z"},
		{"another entry's focus leaves the split's", []Entry{pair, EntryLeaf("t3")}, []string{"t1", "t2", "t3"}, "t3", "t1|t2*Z t3*"},
		{"a closed pane: unzoomed, the other focused", []Entry{pair, EntryLeaf("t3")}, []string{"t1", "t3"}, "t3", "t1* t3*"},
		{"a closed entry goes", []Entry{EntryLeaf("t3"), pair}, []string{"t1", "t2"}, "t1", "t1*|t2Z"},
		{"a tab twice stays in the first", []Entry{EntryLeaf("t2"), pair}, []string{"t1", "t2"}, "t1", "t2* t1*"},
		{"order kept", []Entry{EntryLeaf("t3"), EntryLeaf("t1"), EntryLeaf("t2")}, []string{"t1", "t2", "t3"}, "t1", "t3* t1* t2*"},
		{"no tabs", []Entry{pair}, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := entriesText(tt.es)
			got := normEntries(tt.es, tt.tabs, tt.focused)
			if s := entriesText(got); s != tt.want {
				t.Errorf("normEntries = %q, want %q", s, tt.want)
			}
			if entriesText(tt.es) != in {
				t.Errorf("normEntries changed its input to %q", entriesText(tt.es))
			}
			for _, e := range got {
				for _, o := range tt.es {
					if e.Root == o.Root {
						t.Errorf("the result shares a node with the input")
					}
				}
			}
		})
	}
}

// TestEntriesFromLayout: an older terminald's one layout per window is
// one entry, where its first tab stood; every other tab one entry each.
func TestEntriesFromLayout(t *testing.T) {
	tests := []struct {
		name string
		tabs []string
		l    *savedLayout
		want string
	}{
		{"none", []string{"t1", "t2"}, nil, ""},
		{"the layout in the middle", []string{"t1", "t2", "t3", "t4"},
			&savedLayout{Root: split(leaf("t2"), leaf("t4")), Zoomed: true}, "t1 t2|t4Z t3"},
		{"all in it", []string{"t1", "t2"}, &savedLayout{Root: split(leaf("t1"), leaf("t2"))}, "t1|t2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Focus as the reading normalizes it: the first pane.
			got := normEntries(entriesFromLayout(tt.tabs, tt.l), tt.tabs, "")
			if tt.l == nil {
				got = entriesFromLayout(tt.tabs, tt.l)
			}
			s := strings.ReplaceAll(entriesText(got), "*", "")
			if s != tt.want {
				t.Errorf("entries %q, want %q", s, tt.want)
			}
		})
	}
}

// TestOldBlobLayoutLoads: a state blob with "layout" (one per window)
// decodes, and its layout becomes an entry.
func TestOldBlobLayoutLoads(t *testing.T) {
	blob := `{"version":1,"windows":[{"id":"w1","name":"main","tabs":["t1","t2","t3"],"focused":"t3",
		"layout":{"root":{"ratio":0.5,"a":{"tab":"t1"},"b":{"tab":"t3"}}}}]}`
	var st savedState
	if err := json.Unmarshal([]byte(blob), &st); err != nil {
		t.Fatal(err)
	}
	sw := st.Windows[0]
	got := normEntries(entriesFromLayout(sw.Tabs, sw.Layout), sw.Tabs, sw.Focused)
	if s := entriesText(got); s != "t1|t3* t2*" {
		t.Errorf("entries %q, want t1|t3* t2*", s)
	}
}

// TestEntriesStored: a window's entries are read back in line with its
// tabs, signal their change, follow the window's focus, decide the focus
// when a focused tab closes, and ride in the state blob.
func TestEntriesStored(t *testing.T) {
	w := newWorkspace(t)
	win := w.Windows()[0].ID
	var ids []string
	for range 4 {
		tm, err := w.Create(CreateSpec{Directory: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tm.ID)
	}
	name := func(s string) string { // "a|b c" with the tabs' ids
		for i, id := range ids {
			s = strings.ReplaceAll(s, string(rune('a'+i)), id)
		}
		return s
	}
	check := func(what, want string) {
		t.Helper()
		es, _ := w.Entries(win)
		if got := entriesText(es); got != name(want) {
			t.Errorf("%s: entries %q, want %q", what, got, name(want))
		}
	}
	check("new tabs", "a* b* c* d*")

	_, changed := w.Entries(win)
	w.SetEntries(win, []Entry{{Root: split(leaf(ids[0]), leaf(ids[1])), Focused: ids[0]}, EntryLeaf(ids[2])})
	select {
	case <-changed:
	default:
		t.Fatal("no change signalled")
	}
	check("a split set, a tab left out", "a*|b c* d*")

	_, changed = w.Entries(win)
	w.SetEntries(win, []Entry{{Root: split(leaf(ids[0]), leaf(ids[1])), Focused: ids[0]}, EntryLeaf(ids[2])})
	select {
	case <-changed:
		t.Fatal("the same entries signalled a change")
	default:
	}

	// The focus: the split's other pane, then another entry; the split
	// keeps its focused pane.
	for _, f := range []struct{ tab, want string }{{ids[1], "a|b* c* d*"}, {ids[3], "a|b* c* d*"}} {
		if _, err := w.Focus(f.tab); err != nil {
			t.Fatal(err)
		}
		check("focus "+f.tab, f.want)
	}

	var st savedState
	if err := json.Unmarshal(w.snapshotState(), &st); err != nil {
		t.Fatal(err)
	}
	if got := entriesText(st.Windows[0].Entries); got != name("a|b* c* d*") {
		t.Errorf("the state blob carries %q", got)
	}

	// Closing a focused pane focuses the pane beside it; closing an
	// entry's only tab focuses the next entry, or the previous.
	closes := []struct{ focus, close, want string }{
		{ids[1], ids[1], ids[0]},
		{ids[2], ids[2], ids[3]},
		{ids[3], ids[3], ids[0]},
	}
	for _, c := range closes {
		if _, err := w.Focus(c.focus); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(c.close); err != nil {
			t.Fatal(err)
		}
		if got := w.Windows()[0].FocusedTab; got != c.want {
			t.Errorf("closing %s focused %s, want %s", c.close, got, c.want)
		}
	}
	check("one tab left", "a*")
	if es, _ := w.Entries("w99"); es != nil {
		t.Errorf("no such window, yet entries %v", es)
	}
}

// TestPlaceEntry: an entry put in place or inserted takes its tabs out of
// the other entries.
func TestPlaceEntry(t *testing.T) {
	es := []Entry{{Root: split(leaf("t1"), leaf("t2")), Focused: "t2"}, EntryLeaf("t3"), EntryLeaf("t4")}
	tests := []struct {
		name   string
		i      int
		e      Entry
		insert bool
		want   string
	}{
		{"replaced", 1, Entry{Root: split(leaf("t3"), leaf("t5")), Focused: "t5"}, false, "t1|t2* t3|t5* t4*"},
		{"a pane taken from another entry", 1, Entry{Root: split(leaf("t3"), leaf("t2")), Focused: "t2"}, false, "t1* t3|t2* t4*"},
		{"an entry emptied goes", 0, Entry{Root: split(leaf("t1"), leaf("t4")), Focused: "t1"}, false, "t1*|t4 t3*"},
		{"inserted after the first", 1, EntryLeaf("t2"), true, "t1* t2* t3* t4*"},
		{"inserted past the end", 9, EntryLeaf("t5"), true, "t1|t2* t3* t4* t5*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := entriesText(es)
			if got := entriesText(PlaceEntry(es, tt.i, tt.e, tt.insert)); got != tt.want {
				t.Errorf("PlaceEntry = %q, want %q", got, tt.want)
			}
			if entriesText(es) != before {
				t.Errorf("PlaceEntry changed its input")
			}
		})
	}
}
