package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// sgr is an SGR mouse report from the outer terminal: code (0 left
// button, 32 added for a move, 64/65 the wheel) at 0-based x, y.
func sgr(code, x, y int, release bool) string {
	end := 'M'
	if release {
		end = 'm'
	}
	return fmt.Sprintf("\x1b[<%d;%d;%d%c", code, x+1, y+1, end)
}

// TestAttachMouse: attach turns on SGR button reporting in the outer
// terminal (and off on detach); a click on the status line shows that
// tab; the wheel scrolls into copy mode and back out; a drag selects and
// copies as OSC 52; a program that asked for the mouse gets the reports.
func TestAttachMouse(t *testing.T) {
	in := startPhantom(t)
	if _, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: in.env.Home, Name: "second"}); err != nil {
		t.Fatal(err)
	}
	c := in.attach(t, 80, 24, []string{"PHANTOM_CLIPBOARD=on"}) // the harness does not answer the probe
	c.waitStatus("with both tabs", func(s string) bool { return strings.Contains(s, "2:second") })
	c.waitRaw("mouse reporting on", "\x1b[?1002h")
	c.waitRaw("SGR reports on", "\x1b[?1006h")

	// Click the second tab on the status line.
	x := strings.Index(c.status(), "2:second")
	c.send(sgr(0, x+2, 23, false) + sgr(0, x+2, 23, true))
	c.waitStatus("tab 2 focused", func(s string) bool { return strings.Contains(s, "second*") })
	c.send("clear; seq -f 'wheel-%g' 1 100\r")
	c.waitText("wheel-100")

	// The wheel: up enters copy mode, down back to the bottom leaves it.
	c.send(strings.Repeat(sgr(64, 10, 10, false), 4))
	c.waitStatus("copy mode", func(s string) bool { return strings.Contains(s, "scroll") })
	c.waitFor("earlier lines", func(s string) bool { return !strings.Contains(s, "wheel-100") })
	c.send(strings.Repeat(sgr(65, 10, 10, false), 6))
	c.waitStatus("copy mode left", func(s string) bool { return !strings.Contains(s, "scroll") })
	c.waitText("wheel-100")

	// A drag over a word copies it.
	c.send("clear; echo drag-me-$((40+2)) rest\r")
	c.waitFor("the word on row 0", func(string) bool { return strings.HasPrefix(c.row(0), "drag-me-42") })
	c.send(sgr(0, 0, 0, false) + sgr(32, 4, 0, false) + sgr(32, 9, 0, false) + sgr(0, 9, 0, true))
	c.waitRaw("the dragged word as OSC 52", osc52("drag-me-42"))
	c.waitStatus("copy mode left after the drag", func(s string) bool { return !strings.Contains(s, "scroll") })

	// A program that asked for the mouse (1000, SGR) gets the click, at
	// its own coordinates; cat -v shows what arrived.
	// The click goes once the program's request has been seen: the word
	// printed after it, not the cleared screen before it.
	c.send("clear; printf '\\e[?1000h\\e[?1006h'; echo mouse-$((1+1))-on; cat -v\r")
	c.waitText("mouse-2-on")
	c.send(sgr(0, 4, 2, false) + sgr(0, 4, 2, true) + "\r")
	c.waitText("^[[<0;5;3M^[[<0;5;3m")
	c.send("\x03")

	c.send(prefix + "d")
	code, out := c.wait()
	if code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
	tailOut := tail(out, 400)
	for _, off := range []string{"\x1b[?1002l", "\x1b[?1006l", "\x1b[?1049l", "\x1b[?25h"} {
		if !strings.Contains(tailOut, off) {
			t.Errorf("detach did not restore the terminal: no %q in %q", off, tailOut)
		}
	}
}

// TestAttachMouseOff: PHANTOM_MOUSE=off leaves the outer terminal's mouse
// alone.
func TestAttachMouseOff(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, []string{"PHANTOM_MOUSE=off"})
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send("echo up-$((1+1))\r")
	c.waitText("up-2")
	if strings.Contains(c.rawOut(), "\x1b[?1002h") || strings.Contains(c.rawOut(), "\x1b[?1006h") {
		t.Fatalf("mouse reporting turned on with PHANTOM_MOUSE=off")
	}
}

// TestAttachCloseAsks: prefix x asks before closing; n keeps the tab, y
// closes it.
func TestAttachCloseAsks(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send(prefix + "x")
	c.waitStatus("the question", func(s string) bool { return strings.Contains(s, "close tab 1:") && strings.Contains(s, "y/n") })
	c.send("n")
	c.waitStatus("kept", func(s string) bool { return strings.Contains(s, "kept") })
	if n := len(in.list(t)); n != 1 {
		t.Fatalf("%d tabs after n, want 1", n)
	}
	c.send(prefix + "x")
	c.waitStatus("the question", func(s string) bool { return strings.Contains(s, "y/n") })
	c.send("y")
	code, out := c.wait()
	if code != 0 || !strings.Contains(out, "no tabs left") {
		t.Fatalf("closing the last tab: exit %d, output ends %q", code, tail(out, 200))
	}
}

// TestAttachDeadTab: a tab whose program ended says how, and closes on a
// key; the last one's close ends the attach.
func TestAttachDeadTab(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send("exit 3\r")
	c.waitStatus("how it ended", func(s string) bool { return strings.Contains(s, "ended: exit 3; any key closes it") })
	c.send("q")
	code, out := c.wait()
	if code != 0 || !strings.Contains(out, "no tabs left") {
		t.Fatalf("a key on the dead tab: exit %d, output ends %q", code, tail(out, 200))
	}
}

// TestAttachSignalRestores: a signal that ends attach leaves the outer
// terminal as it was: pen reset, mouse off, cursor shown, main screen.
func TestAttachSignalRestores(t *testing.T) {
	in := startPhantom(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			c := in.attach(t, 80, 24, nil)
			c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
			c.waitRaw("mouse reporting on", "\x1b[?1002h")
			if err := c.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code, out := c.wait()
			if code != 128+int(sig) {
				t.Errorf("exit %d after %v, want %d", code, sig, 128+int(sig))
			}
			last := out[strings.LastIndex(out, "\x1b[?2026l"):]
			for _, want := range []string{"\x1b[0m", "\x1b[?1002l", "\x1b[?1006l", "\x1b[?25h", "\x1b[?1049l"} {
				if !strings.Contains(last, want) {
					t.Errorf("after %v the client did not write %q; it ended with %q", sig, want, tail(out, 300))
				}
			}
		})
	}
	if n := len(in.list(t)); n != 1 {
		t.Errorf("%d tabs after the signals, want the one tab still running", n)
	}
}

// TestAttachKeysHelpAndTabsPast9: prefix ? lists the keys; prefix '
// takes a tab number past 9; prefix w chooses from a list.
func TestAttachKeysHelpAndTabsPast9(t *testing.T) {
	in := startPhantom(t)
	for i := 2; i <= 11; i++ {
		if _, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: in.env.Home, Name: fmt.Sprintf("n%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	c := in.attach(t, 120, 30, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send(prefix + "?")
	c.waitText("copy mode: scroll, search")
	c.waitText("any key closes this list")
	c.send("z")
	c.waitFor("the list closed", func(s string) bool { return !strings.Contains(s, "any key closes this list") })

	c.send(prefix + "'")
	c.waitStatus("the number prompt", func(s string) bool { return strings.Contains(s, "entry number (1-11)") })
	c.send("11\r")
	c.waitStatus("tab 11 focused", func(s string) bool { return strings.Contains(s, "11:n11*") })

	c.send(prefix + "w")
	c.waitText("10:n10")
	c.send("\x1b[A\r") // up from 11 to 10
	c.waitStatus("tab 10 focused", func(s string) bool { return strings.Contains(s, "10:n10*") })
}

// TestAttachFillsUnusedArea: a tab sized for a smaller client shows in a
// larger one with the rest filled, not blank.
func TestAttachFillsUnusedArea(t *testing.T) {
	in := startPhantom(t)
	big := in.attach(t, 80, 24, nil)
	big.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	small := in.attach(t, 50, 12, nil)
	small.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	big.waitFor("the fill right of the tab and below it", func(string) bool {
		return strings.HasSuffix(big.row(0), "··········") && big.row(0)[0] != '\xc2' &&
			strings.Count(big.row(20), "·") == 80
	})
	small.send(prefix + "d")
	small.wait()
	big.waitFor("the fill gone", func(string) bool { return !strings.Contains(big.row(20), "·") })
}

// TestAttachDownSaysStopped: phantom down while attached ends the
// attach with "Phantom stopped".
func TestAttachDownSaysStopped(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	if out, err := in.run("down"); err != nil {
		t.Fatalf("phantom down: %v\n%s", err, out)
	}
	code, out := c.wait()
	if code != 0 || !strings.Contains(out, "[Phantom stopped]") {
		t.Errorf("attach after down: exit %d, output ends %q", code, tail(out, 200))
	}
	// The test's cleanup runs down again: give it something to stop.
	if out, err := in.run("up"); err != nil {
		t.Fatalf("phantom up again: %v\n%s", err, out)
	}
}

// TestAttachRenameEcho: the rename prompt shows each key as it is typed.
func TestAttachRenameEcho(t *testing.T) {
	in := startPhantom(t)
	c := in.attach(t, 80, 24, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "1:") })
	c.send(prefix + ",")
	c.waitStatus("the prompt", func(s string) bool { return strings.Contains(s, "rename tab") })
	c.send("\x15ab")
	c.waitStatus("what was typed", func(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), ": ab") })
	c.send("c")
	c.waitStatus("the next key", func(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), ": abc") })
	c.send("\r")
	c.waitStatus("the new name", func(s string) bool { return strings.Contains(s, "1:abc*") })
}
