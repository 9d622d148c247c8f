package main

import (
	"fmt"
	"strings"
	"testing"
)

// answerProbe plays the outer terminal: it waits for the client's
// clipboard probe (XTGETTCAP "Ms", then DA1) and answers it with reply.
func (c *client) answerProbe(reply string) {
	c.t.Helper()
	c.waitRaw("the clipboard probe", probeQuery)
	c.send(reply)
}

// TestAttachClipboardProbe: attach asks the outer terminal whether it
// takes clipboard writes and copies to the clipboard (OSC 52) only when
// the terminal announced it, in DA1 (attribute 52) or XTGETTCAP ("Ms");
// otherwise the copy notice says the copy stayed in Phantom and how to
// force it. The replies never reach the tab as keys. A soft-wrapped line
// is copied as one line.
func TestAttachClipboardProbe(t *testing.T) {
	in := startPhantom(t)
	tests := []struct {
		name   string
		reply  string
		writes bool
	}{
		{"DA1 announces it", "\x1b[?64;1;2;6;9;15;18;21;22;52c", true},
		{"XTGETTCAP Ms announces it", "\x1bP1+r4d73=5c455d35323b25703125733b25703225735c07\x1b\\\x1b[?62;22c", true},
		{"neither announces it", "\x1bP0+r4d73\x1b\\\x1b[?62;22c", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Wide enough for the whole copy notice on the status line.
			c := in.attach(t, 160, 24, nil)
			c.answerProbe(tt.reply)
			c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
			// A line of 2 rows and a bit, soft-wrapped by the tab; the
			// command line itself does not hold the text searched.
			marker := strings.Repeat("wrap", i+1) + "-"
			c.send("clear; echo " + marker + "$(printf 'x%.0s' $(seq 1 340))-end\r")
			long := marker + strings.Repeat("x", 340) + "-end"
			c.waitText("x-end")
			if strings.Contains(c.text(), "62;") || strings.Contains(c.text(), "4d73") {
				t.Fatalf("the terminal's reply reached the tab:\n%s", c.text())
			}
			c.send(prefix + "[")
			c.waitStatus("in copy mode", func(s string) bool { return strings.Contains(s, "scroll") })
			// The search moves the cursor up from the bottom: the
			// position shown changes (a busy machine may draw the
			// status line before the search ran).
			before := c.status()
			c.send("?" + marker + "x\r")
			c.waitStatus("at the match", func(s string) bool {
				return s != before && !strings.Contains(s, "not found") && strings.Contains(s, "scroll")
			})
			c.send("vjj$y")
			c.waitStatus("the copy reported", func(s string) bool { return strings.Contains(s, "copied") })
			notice := c.status()
			if tt.writes {
				c.waitRaw(fmt.Sprintf("the wrapped line as one line in OSC 52 (the notice: %q)", notice), osc52(long))
				if strings.Contains(notice, "did not announce") {
					t.Errorf("the notice says the clipboard was not written: %q", notice)
				}
			} else {
				if !strings.Contains(notice, "did not announce OSC 52") {
					t.Errorf("the notice does not say why the clipboard was not written: %q", notice)
				}
				if strings.Contains(c.rawOut(), "\x1b]52;") {
					t.Errorf("the client wrote an OSC 52 though the terminal did not announce it")
				}
			}
			// Pasted back: one command, not one per row.
			c.send(prefix + "]\r")
			c.waitText("x-end: command not found")
			if strings.Contains(c.text(), "x: command not found") {
				t.Errorf("the copy has a newline at a soft wrap:\n%s", c.text())
			}
			c.send(prefix + "d")
			if code, _ := c.wait(); code != 0 {
				t.Fatalf("detach: exit %d", code)
			}
		})
	}
}
