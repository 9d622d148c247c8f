package main

import (
	"strings"
	"testing"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// threePanes waits until c shows the layout TestAttachLayoutPerWindow
// makes at 81x24: a border down column 40, the right half stacked with a
// border across row 11.
func (c *client) threePanes(what string) {
	c.t.Helper()
	c.waitFor(what, func(string) bool {
		return c.runeAt(40, 5) == '│' && c.runeAt(60, 11) == '─' && c.runeAt(20, 11) != '─'
	})
}

// TestAttachLayoutPerWindow: splits belong to the window's entry, as in
// tmux's windows. A
// second client of the window shows the same panes, detaching and
// attaching again finds them, `phantom upgrade` keeps them (the state the
// holder keeps carries them), and closing a tab shown in a pane takes it
// out of the layout for every client.
func TestAttachLayoutPerWindow(t *testing.T) {
	in := startPhantom(t)
	a := in.attach(t, 81, 24, nil)
	a.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	a.send(prefix + "%")
	a.waitStatus("a second pane", func(s string) bool { return strings.Contains(s, "[2]*") })
	a.send(prefix + `"`)
	a.waitStatus("a third pane", func(s string) bool { return strings.Contains(s, "[3]*") })
	a.threePanes("the three panes")

	// A second client of the window sees them, and a split there shows
	// here.
	b := in.attach(t, 81, 24, nil)
	b.threePanes("the second client showing the same panes")
	b.sizeCheck(1, 11, 40)
	b.send(prefix + "z")
	a.waitFor("the other client's zoom", func(s string) bool { return !strings.Contains(s, "│") })
	b.send(prefix + "z")
	a.threePanes("the zoom undone")

	// Detach both; attach again: the same panes.
	for _, c := range []*client{a, b} {
		c.send(prefix + "d")
		if code, _ := c.wait(); code != 0 {
			t.Fatalf("detach: exit %d", code)
		}
	}
	c := in.attach(t, 81, 24, nil)
	c.threePanes("the panes after attaching again")

	// An upgrade: terminald hands the tabs (and the window's layout) to
	// the next one; the client reconnects to the same panes.
	if out, err := in.run("upgrade"); err != nil {
		t.Fatalf("phantom upgrade: %v\n%s", err, out)
	}
	c.sizeCheck(2, 11, 40)
	c.threePanes("the panes after the upgrade")

	// Close the bottom right pane's tab: the top right takes its room.
	var ids []string
	for _, tm := range in.list(t) {
		ids = append(ids, tm.GetId())
	}
	if len(ids) != 3 {
		t.Fatalf("tabs %v, want three", ids)
	}
	if _, err := in.tc.CloseTerminal(tctx(t), &terminalv1.CloseTerminalRequest{TerminalId: ids[2]}); err != nil {
		t.Fatal(err)
	}
	c.waitFor("two panes side by side", func(string) bool {
		return c.runeAt(40, 5) == '│' && c.runeAt(60, 11) != '─'
	})
	c.send(prefix + "d")
	if code, _ := c.wait(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
	d := in.attach(t, 81, 24, nil)
	d.waitFor("the closed tab's pane gone for a new client too", func(string) bool {
		return d.runeAt(40, 5) == '│' && d.runeAt(60, 11) != '─' && strings.Contains(d.status(), "[2]")
	})
}
