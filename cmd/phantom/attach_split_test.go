package main

import (
	"fmt"
	"strings"
	"testing"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// sizeCheck asks the focused pane's shell for its terminal size; the
// output line is "S<n>-<rows>x<cols>", unique per n.
func (c *client) sizeCheck(n int, rows, cols int) {
	c.t.Helper()
	c.send(fmt.Sprintf("clear; echo S%d-$(stty size | tr ' ' x)\r", n))
	c.waitText(fmt.Sprintf("S%d-%dx%d", n, rows, cols))
}

// column is the 0-based column of the first s on row y, in cells.
func (c *client) column(y int, s string) int {
	row := c.row(y)
	i := strings.Index(row, s)
	if i < 0 {
		return -1
	}
	return len([]rune(row[:i]))
}

// runeAt is the character at x, y of the client's screen.
func (c *client) runeAt(x, y int) rune {
	c.mu.Lock()
	defer c.mu.Unlock()
	row := c.scr.Row(y)
	if x >= len(row) {
		return 0
	}
	return row[x].Rune
}

// tabSizes is each tab's size as terminald reports it to MCP.
func (in *instance) tabSizes(t *testing.T) map[string]string {
	sizes := map[string]string{}
	for _, tm := range in.list(t) {
		sizes[tm.GetId()] = fmt.Sprintf("%dx%d", tm.GetRows(), tm.GetCols())
	}
	return sizes
}

// focusedTab waits until the window's focused tab is id.
func (in *instance) focusedTab(t *testing.T, id string) {
	t.Helper()
	eventually(t, id+" focused", func() (bool, string) {
		var got []string
		for _, tm := range in.list(t) {
			if tm.GetFocused() {
				got = append(got, tm.GetId())
			}
		}
		return len(got) == 1 && got[0] == id, fmt.Sprint(got)
	})
}

// TestAttachSplits: prefix % and " split the focused pane with a new tab
// in the same status-line entry (each pane's tab gets the pane's size);
// arrows move between panes, a click focuses one, Ctrl-arrows move a
// border, z zooms, x closes the pane's tab and its neighbour takes the
// room, ! breaks a pane out into an entry of its own; each pane stays a
// tab to MCP.
func TestAttachSplits(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 81, 24, nil) // a tab area of 81x23
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.sizeCheck(1, 23, 81)

	c.send(prefix + "%")
	c.waitStatus("a second pane in entry 1", func(s string) bool { return strings.Contains(s, "[2]*") && !strings.Contains(s, "2:") })
	// 80 columns less the border: 40 left, the border at 40, 40 right.
	c.waitFor("the border", func(string) bool { return c.runeAt(40, 5) == '│' })
	c.sizeCheck(2, 23, 40)
	if x := c.column(0, "S2-23x40"); x != 41 {
		t.Errorf("the new pane's output starts at column %d, want 41:\n%s", x, c.text())
	}
	c.send(prefix + `"`)
	c.waitStatus("a third pane", func(s string) bool { return strings.Contains(s, "[3]*") })
	c.sizeCheck(3, 11, 40)
	if x := c.column(12, "S3-11x40"); x != 41 {
		t.Errorf("the stacked pane's output is not at row 12, column 41:\n%s", c.text())
	}
	if n := len(in.list(t)); n != 3 {
		t.Fatalf("%d tabs, want one per pane", n)
	}

	// Move left: the first tab's pane, its size 23x40.
	c.send(prefix + "\x1b[D")
	in.focusedTab(t, "t1")
	c.sizeCheck(4, 23, 40)
	// A click in the top right pane focuses it.
	c.send(sgr(0, 60, 3, false) + sgr(0, 60, 3, true))
	in.focusedTab(t, "t2")
	c.sizeCheck(5, 11, 40)
	c.send(prefix + "\x1b[D")
	in.focusedTab(t, "t1")

	// Ctrl-Right moves the border right by two: 42 and 38 columns.
	c.send(prefix + "\x1b[1;5C")
	c.sizeCheck(6, 23, 42)
	eventually(t, "the right tabs at 38 columns", func() (bool, string) {
		sizes := in.tabSizes(t)
		n := 0
		for _, sz := range sizes {
			if strings.HasSuffix(sz, "x38") {
				n++
			}
		}
		return n == 2, fmt.Sprint(sizes)
	})

	// Zoom: the pane takes the whole area, and so does its tab.
	c.send(prefix + "z")
	c.sizeCheck(7, 23, 81)
	c.waitFor("no border while zoomed", func(s string) bool { return !strings.Contains(s, "│") })
	c.send(prefix + "z")
	c.sizeCheck(8, 23, 42)
	c.waitFor("the border back", func(s string) bool { return strings.Contains(s, "│") })

	// Close the left pane's tab: the right column takes the width.
	c.send(prefix + "xy")
	c.waitStatus("two panes left", func(s string) bool { return strings.Contains(s, "[2]*") })
	c.sizeCheck(9, 11, 81)
	c.waitFor("the stacked border across the whole width", func(string) bool {
		return strings.Count(c.row(11), "─") == 81
	})
	// Break the pane out (prefix !): an entry of its own after entry 1,
	// shown over the whole area; the other pane's tab is entry 1.
	c.send(prefix + "!")
	c.sizeCheck(10, 23, 81)
	c.waitStatus("two entries", func(s string) bool { return strings.Contains(s, "2:") && !strings.Contains(s, "[") })
	if n := len(in.list(t)); n != 2 {
		t.Errorf("%d tabs after the break, want 2 (each pane's tab an entry)", n)
	}
	c.send(prefix + "d")
	if code, _ := c.wait(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
}

// TestAttachSplitExistingTab: the tab chooser shows an existing tab in a
// split (% on the highlighted tab), and the copy mode of a pane works in
// the pane.
func TestAttachSplitExistingTab(t *testing.T) {
	in := startPhantom(t)
	if _, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: in.env.Home, Name: "other"}); err != nil {
		t.Fatal(err)
	}
	c := in.attach(t, 81, 24, []string{"PHANTOM_CLIPBOARD=on"}) // the harness does not answer the probe
	c.waitStatus("two tabs", func(s string) bool { return strings.Contains(s, "2:other") })
	c.send(prefix + "w")
	c.waitText("2:other")
	c.send("\x1b[B%")
	// It leaves its own entry for this one: one entry of two panes.
	c.waitStatus("other focused", func(s string) bool { return strings.Contains(s, "1:other[2]*") && !strings.Contains(s, "2:") })
	c.sizeCheck(1, 23, 40)
	if n := len(in.list(t)); n != 2 {
		t.Fatalf("%d tabs, want the existing one shown, no new tab", n)
	}
	c.send("seq -f 'pane-%g' 1 60\r")
	c.waitText("pane-60")
	c.send(prefix + "[?pane-3\r")
	c.send("v$y")
	c.waitRaw("the copy", osc52("pane-39"))
}
