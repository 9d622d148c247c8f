package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// splitShown reports whether the outer terminal shows a left|right split
// whose panes hold the markers of entry 1, and not entry 2's.
func splitShown(screen string) bool {
	return strings.Contains(screen, "│") && strings.Contains(screen, "left-2") &&
		strings.Contains(screen, "right-4") && !strings.Contains(screen, "full-6")
}

// fullShown reports whether it shows entry 2's one tab over the whole
// area: its marker, no border, neither pane of entry 1.
func fullShown(screen string) bool {
	return !strings.Contains(screen, "│") && strings.Contains(screen, "full-6") &&
		!strings.Contains(screen, "left-2") && !strings.Contains(screen, "right-4")
}

// TestAttachEntries: each status-line entry has its own layout, as a tmux
// window does. Entry 1 is a left|right split of two shells, entry 2 one
// tab full screen; prefix 2, n, 1 and a click on the status line move
// between them, and entry 1 comes back split with the same two tabs. The
// CLI's positions count entries, agents still see three tabs, a second
// client shows the same entries, phantom upgrade keeps them, and prefix !
// breaks a pane out into an entry of its own.
func TestAttachEntries(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 81, 24, nil)
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
	o.literal("echo left-$((1+1))")
	o.keys("Enter")
	o.waitText("left-2")
	o.prefix("%")
	o.waitFor("the split", func(s string) bool { return strings.Contains(s, "│") })
	o.literal("echo right-$((2+2))")
	o.keys("Enter")
	o.waitFor("entry 1 split, both markers", splitShown)
	if s := o.status(); !strings.Contains(s, "[2]*") || strings.Contains(s, "2:") {
		t.Fatalf("the status line shows %q, want one entry of two panes", s)
	}

	o.prefix("c")
	o.waitFor("entry 2 on the status line", func(string) bool { return strings.Contains(o.status(), "2:") })
	o.literal("echo full-$((3+3))")
	o.keys("Enter")
	o.waitFor("entry 2 full screen", fullShown)

	o.prefix("1")
	o.waitFor("prefix 1: entry 1 split again", splitShown)
	o.prefix("2")
	o.waitFor("prefix 2: entry 2 full screen", fullShown)
	o.prefix("n")
	o.waitFor("prefix n: wraps to entry 1", splitShown)
	o.prefix("n")
	o.waitFor("prefix n: entry 2", fullShown)

	// phantom focus of a pane's tab shows its entry with that pane
	// focused; back to the right pane, then to entry 2.
	for _, f := range []struct{ arg, tab string }{{"1.1", "t1"}, {"1.2", "t2"}} {
		if out, err := in.run("focus", f.arg); err != nil {
			t.Fatalf("phantom focus %s: %v\n%s", f.arg, err, out)
		}
		o.waitFor("phantom focus "+f.arg+": entry 1 split", splitShown)
		in.focusedTab(t, f.tab)
	}
	o.prefix("2")
	o.waitFor("prefix 2: entry 2 full screen", fullShown)

	// A click on entry 1 on the status line (row 24, 1-based).
	status := o.status()
	i := strings.Index(status, "1:")
	if i < 0 {
		t.Fatalf("no entry 1 on the status line %q", status)
	}
	x := utf8.RuneCountInString(status[:i]) // in cells: the line's runes are narrow
	o.bytes([]byte(sgr(0, x, 23, false) + sgr(0, x, 23, true)))
	o.waitFor("a click on 1: entry 1 split", splitShown)

	// Inside a tab, the CLI learns the entries too (ListEntries is open
	// there): phantom ls shows the panes' places.
	o.literal("phantom ls | grep -o 'w1:[0-9.]*' | tr '\\n' ' '; echo")
	o.keys("Enter")
	o.waitText("w1:1.1 w1:1.2 w1:2")

	// Positions count entries: 2 is entry 2's tab, 1 entry 1's focused
	// pane (the right one, focused by the split), 1.1 its left pane.
	reads := []struct{ arg, want, not string }{
		{"2", "full-6", "left-2"},
		{"1", "right-4", "full-6"},
		{"1.1", "left-2", "right-4"},
	}
	for _, r := range reads {
		out, err := in.run("read", r.arg)
		if err != nil || !strings.Contains(string(out), r.want) || strings.Contains(string(out), r.not) {
			t.Errorf("phantom read %s: %v\n%s\nwant %s, not %s", r.arg, err, out, r.want, r.not)
		}
	}
	if ts := in.list(t); len(ts) != 3 {
		t.Errorf("list_terminals lists %d tabs, want the three", len(ts))
	}

	// A second client shows the same entries, and follows the first.
	o2 := in.attachOuter(t, 81, 24, nil)
	o2.waitFor("the second client on entry 1, split", splitShown)
	o.prefix("2")
	o2.waitFor("the second client following to entry 2", fullShown)
	o2.prefix("1")
	o.waitFor("the first client following back to entry 1", splitShown)

	// phantom upgrade carries the entries to the next terminald: both
	// clients come back to entry 1 split, and 2 is still the full-screen
	// tab (not the second tab of the window).
	if out, err := in.run("upgrade"); err != nil {
		t.Fatalf("phantom upgrade: %v\n%s", err, out)
	}
	o.waitFor("entry 1 split after the upgrade", splitShown)
	o2.waitFor("the second client on entry 1 after the upgrade", splitShown)
	if out, err := in.run("read", "2"); err != nil || !strings.Contains(string(out), "full-6") {
		t.Errorf("after the upgrade, phantom read 2: %v\n%s\nwant full-6", err, out)
	}
	o.prefix("2")
	o.waitFor("entry 2 full screen after the upgrade", fullShown)
	o.prefix("1")
	o.waitFor("entry 1 split again", splitShown)

	// Break the focused (right) pane out: an entry of its own after
	// entry 1, shown full screen; entry 2 is now 3.
	o.prefix("!")
	o.waitFor("the broken-out pane full screen", func(s string) bool {
		return !strings.Contains(s, "│") && strings.Contains(s, "right-4") && !strings.Contains(s, "left-2") &&
			strings.Contains(o.status(), "3:")
	})
	o2.waitFor("the second client showing it too", func(s string) bool {
		return strings.Contains(s, "right-4") && !strings.Contains(s, "│")
	})
	for _, r := range []struct{ arg, want string }{{"1", "left-2"}, {"2", "right-4"}, {"3", "full-6"}} {
		if out, err := in.run("read", r.arg); err != nil || !strings.Contains(string(out), r.want) {
			t.Errorf("after the break, phantom read %s: %v\n%s\nwant %s", r.arg, err, out, r.want)
		}
	}
	if ts := in.list(t); len(ts) != 3 {
		t.Errorf("after the break, %d tabs, want three", len(ts))
	}
}
