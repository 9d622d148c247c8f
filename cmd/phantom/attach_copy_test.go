package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

// osc52 is the clipboard write attach sends for text.
func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
}

// rawOut is everything the client wrote to its terminal so far.
func (c *client) rawOut() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw.String()
}

// waitRaw waits until the client has written s to its terminal.
func (c *client) waitRaw(what, s string) {
	c.t.Helper()
	c.waitFor(what, func(string) bool { return strings.Contains(c.rawOut(), s) })
}

// TestAttachCopyModeSearchAndOSC52: prefix [ enters copy mode; ? searches
// back, / forward, n repeats; v selects, $ extends to the line's end, y
// copies: the outer terminal gets the text as OSC 52, and prefix ] types
// it into the tab.
func TestAttachCopyModeSearchAndOSC52(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, []string{"PHANTOM_CLIPBOARD=on"}) // the harness does not answer the probe
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	// The command line says needle-$((40+2)), its output needle-42: only
	// the output matches "needle-42".
	c.send("seq -f 'row-a%g' 1 100; echo needle-$((40+2)) tail; seq -f 'row-b%g' 1 100\r")
	c.waitText("row-b100")
	c.send(prefix + "[")
	c.waitStatus("in copy mode", func(s string) bool { return strings.Contains(s, "scroll") })
	c.send("?needle-42\r")
	c.waitFor("the match in view", func(s string) bool {
		return strings.Contains(s, "needle-42 tail") && !strings.Contains(s, "row-b100")
	})
	c.send("v$y")
	c.waitRaw("the selection as OSC 52", osc52("needle-42 tail"))
	c.waitStatus("the copy reported", func(s string) bool { return strings.Contains(s, "copied 14 characters") })
	c.waitStatus("out of copy mode", func(s string) bool { return !strings.Contains(s, "scroll") })

	// A forward search from the top, then n for the next match.
	c.send(prefix + "[")
	c.waitStatus("in copy mode", func(s string) bool { return strings.Contains(s, "scroll") })
	c.send("g/row-a5\r")
	c.waitFor("the first match", func(s string) bool { return strings.Contains(s, "row-a5\n") })
	c.send("n")
	c.waitFor("the next match in the status line", func(string) bool {
		// row-a5 is history line 6 or so; row-a50 comes 45 lines later.
		return strings.Contains(c.status(), "scroll") && strings.Contains(c.text(), "row-a50")
	})
	c.send("vy")
	c.waitRaw("a one-character selection", osc52("r"))
	c.send("q")

	// prefix ] types the last copy into the tab.
	c.send(prefix + "]")
	c.send("\r")
	c.waitText("r: command not found")
	c.send(prefix + "d")
	if code, _ := c.wait(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
}

// TestAttachCopyClipboardOff: with PHANTOM_CLIPBOARD=off the client never
// passes an OSC 52 to its terminal; the copy still pastes.
func TestAttachCopyClipboardOff(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, []string{"PHANTOM_CLIPBOARD=off"})
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send("clear; echo copy-$((3*3))\r")
	c.waitText("copy-9\n")
	c.send(prefix + "[")
	c.send("?copy-9\r")
	c.send("v$y")
	c.waitStatus("the copy reported", func(s string) bool { return strings.Contains(s, "copied 6 characters") })
	if strings.Contains(c.rawOut(), "\x1b]52;") {
		t.Fatalf("the client wrote an OSC 52 with PHANTOM_CLIPBOARD=off")
	}
	c.send(prefix + "]\r")
	c.waitText("copy-9: command not found")
}
