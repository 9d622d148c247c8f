package attach

import (
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

func wsLeaf(tab string) *workspace.LayoutNode { return &workspace.LayoutNode{Tab: tab} }

func wsSplit(a, b *workspace.LayoutNode) *workspace.LayoutNode {
	return &workspace.LayoutNode{Ratio: 0.5, A: a, B: b}
}

// TestEntryPlace: a tab's place as labels show it, "entry" or
// "entry.pane".
func TestEntryPlace(t *testing.T) {
	es := []workspace.Entry{
		{Root: wsSplit(wsLeaf("t1"), wsSplit(wsLeaf("t2"), wsLeaf("t4"))), Focused: "t1"},
		workspace.EntryLeaf("t3"),
	}
	tests := []struct{ tab, want string }{
		{"t1", "1.1"}, {"t2", "1.2"}, {"t4", "1.3"}, {"t3", "2"}, {"t9", "?"},
	}
	for _, tt := range tests {
		if got := entryPlace(es, tt.tab); got != tt.want {
			t.Errorf("entryPlace(%s) = %q, want %q", tt.tab, got, tt.want)
		}
	}
}

// TestStatusLineEntries: the status line numbers entries, each shown by
// its focused pane's tab, with its pane count when it has several.
func TestStatusLineEntries(t *testing.T) {
	tabs := []workspace.Terminal{{ID: "t2", Title: "edit", Idle: true}, {ID: "t3", Title: "logs", Idle: true}}
	tests := []struct {
		name    string
		panes   []string
		focused string
		want    []string
		not     []string
	}{
		{"a split first", []string{"2", ""}, "t2", []string{"1:edit[2]*", "2:logs "}, []string{"3:"}},
		{"a zoomed split, the other focused", []string{"3Z", ""}, "t3", []string{"1:edit[3Z] ", "2:logs*"}, nil},
		{"no marks", nil, "t2", []string{"1:edit*", "2:logs "}, []string{"["}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := StatusLine(StatusInfo{Window: "main", Tabs: tabs, Panes: tt.panes, Focused: tt.focused}, 80)
			line := cellsText(cells)
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("status %q lacks %q", line, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(line, n) {
					t.Errorf("status %q shows %q", line, n)
				}
			}
		})
	}
}

func cellsText(cells []screen.Cell) string {
	var b strings.Builder
	for _, c := range cells {
		b.WriteString(c.String())
	}
	return b.String()
}

// entriesText is es as "t1|t2* t3": each entry's tabs joined by |, its
// focused one starred, Z for a zoomed entry.
func entriesText(es []workspace.Entry) string {
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

// TestSessionEntries: each status-line entry keeps its own split. A split
// adds a pane to the shown entry, c a new entry at the end; prefix N, n
// and p move between entries, and coming back shows the split as it was
// (its zoom too); ! breaks the focused pane out into an entry after it.
func TestSessionEntries(t *testing.T) {
	ws := newWorkspace(t)
	win := ws.Windows()[0].ID
	t1, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := startClient(t, ws, Hello{Cols: 81, Rows: 24})
	c.waitText("1:")
	split := func() bool { return strings.ContainsRune(c.row(5), '│') }
	entries := func(what, want string) {
		t.Helper()
		c.waitFor(what, func(string) bool {
			es, _ := ws.Entries(win)
			return entriesText(es) == want
		})
	}

	c.send("\x1c%")
	c.waitFor("the split", func(string) bool { return split() })
	t2 := ws.Windows()[0].FocusedTab
	entries("one entry of two panes", t1.ID+"|"+t2+"*")
	c.waitFor("one entry with two panes on the status line", func(string) bool {
		s := c.row(23)
		return strings.Contains(s, "[2]*") && !strings.Contains(s, "2:")
	})

	c.send("\x1cc")
	c.waitFor("a second entry", func(string) bool { return strings.Contains(c.row(23), "2:") })
	t3 := ws.Windows()[0].FocusedTab
	entries("a new entry at the end", t1.ID+"|"+t2+"* "+t3+"*")
	c.waitFor("the new entry full screen", func(string) bool { return !split() })

	steps := []struct {
		keys  string
		split bool
		tab   string
	}{
		{"\x1c1", true, t2},
		{"\x1cn", false, t3},
		{"\x1cp", true, t2},
		{"\x1cn", false, t3},
		{"\x1cn", true, t2}, // wraps around
	}
	for _, st := range steps {
		c.send(st.keys)
		c.waitFor("prefix "+st.keys[1:], func(string) bool {
			return split() == st.split && ws.Windows()[0].FocusedTab == st.tab
		})
	}

	// The focus moves to the left pane; the entry keeps it.
	c.send("\x1c\x1b[D")
	c.waitFor("the left pane focused", func(string) bool { return ws.Windows()[0].FocusedTab == t1.ID })
	c.send("\x1c2")
	c.waitFor("entry 2", func(string) bool { return !split() })
	c.send("\x1c1")
	c.waitFor("entry 1 with its left pane focused", func(string) bool {
		return split() && ws.Windows()[0].FocusedTab == t1.ID
	})

	// A focus from elsewhere (phantom focus, an agent's focus_terminal)
	// and the chooser show the entry holding the tab, that pane focused.
	c.send("\x1c2")
	c.waitFor("entry 2", func(string) bool { return !split() })
	if _, err := ws.Focus(t2); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the focused tab's entry, split", func(string) bool { return split() && ws.Windows()[0].FocusedTab == t2 })
	c.send("\x1c2")
	c.waitFor("entry 2", func(string) bool { return !split() })
	c.send("\x1cw")
	c.waitText("1.1:")
	c.send("\x1b[A\x1b[A\r") // the first tab: t1, pane 1 of entry 1 (the row above it is the window)
	c.waitFor("the chosen tab's entry, split", func(string) bool { return split() && ws.Windows()[0].FocusedTab == t1.ID })

	// Zoom is the entry's.
	c.send("\x1cz")
	entries("entry 1 zoomed", t1.ID+"*|"+t2+"Z "+t3+"*")
	c.waitFor("zoomed", func(string) bool { return !split() })
	c.send("\x1c2")
	c.waitFor("entry 2", func(string) bool { return ws.Windows()[0].FocusedTab == t3 })
	c.send("\x1c1")
	c.waitFor("entry 1 still zoomed", func(string) bool { return ws.Windows()[0].FocusedTab == t1.ID && !split() })
	c.send("\x1cz")
	c.waitFor("unzoomed", func(string) bool { return split() })

	// Break the left pane out: an entry of its own after entry 1, shown.
	c.send("\x1c!")
	entries("the pane broken out", t2+"* "+t1.ID+"* "+t3+"*")
	c.waitFor("the broken-out pane full screen, entry 2", func(string) bool {
		return !split() && ws.Windows()[0].FocusedTab == t1.ID && strings.Contains(c.row(23), "3:")
	})
	c.send("\x1c1")
	c.waitFor("entry 1 now one pane", func(string) bool { return !split() && ws.Windows()[0].FocusedTab == t2 })

	// The chooser lists the tabs in the entries' order.
	c.send("\x1cw")
	c.waitFor("the chooser in entry order", func(s string) bool {
		i, j, k := strings.Index(s, "("+t2+")"), strings.Index(s, "("+t1.ID+")"), strings.Index(s, "("+t3+")")
		return i >= 0 && i < j && j < k
	})
}
