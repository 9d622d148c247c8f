package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// End-to-end tests of what attach draws (issue 25, item 6), read from a
// real outer terminal: tmux's capture-pane -e shows the colours and
// attributes tmux received from the client.

// styledLine is the line of the outer terminal's styled capture that
// holds text, "" when none does.
func (o *outer) styledLine(text string) string {
	for _, l := range strings.Split(o.styled(), "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// waitStyled waits until the styled line holding text has want in it,
// and none of not.
func (o *outer) waitStyled(text, want string, not ...string) {
	o.t.Helper()
	eventually(o.t, fmt.Sprintf("%q styled with %q", text, want), func() (bool, string) {
		l := o.styledLine(text)
		if !strings.Contains(l, want) {
			return false, fmt.Sprintf("the line of %q is %q", text, l)
		}
		for _, n := range not {
			if strings.Contains(l, n) {
				return false, fmt.Sprintf("the line of %q is %q, with %q", text, l, n)
			}
		}
		return true, ""
	})
}

// TestAttachRenderTrueColor checks config.json's "truecolor" through a
// terminal that sets no COLORTERM (as over ssh): 256 colours by default,
// 24-bit with "on" (applied live), 256 again with "off" even where
// COLORTERM says truecolor, and 24-bit when the terminal answers the
// XTGETTCAP query for RGB.
func TestAttachRenderTrueColor(t *testing.T) {
	in := startPhantom(t)
	conf := in.env.Layout.Config
	o := in.attachOuter(t, 80, 24, nil)
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
	o.literal(`clear; printf '\e[38;2;200;100;50mRGB%s\e[0m\n' TEXT`)
	o.keys("Enter")
	o.waitText("RGBTEXT")
	indexed := fmt.Sprintf("38;5;%dm", screen.Nearest256(200, 100, 50))
	rgb := "38;2;200;100;50m"
	o.waitStyled("RGBTEXT", indexed, rgb)

	writeSettings(t, conf, `{"shell": "/bin/bash", "truecolor": "on"}`)
	if out, err := in.run("reload"); err != nil || !strings.Contains(string(out), "truecolor") {
		t.Fatalf("phantom reload: %v\n%s", err, out)
	}
	o.waitStyled("RGBTEXT", rgb, indexed)

	writeSettings(t, conf, `{"shell": "/bin/bash", "truecolor": "off"}`)
	if out, err := in.run("reload"); err != nil {
		t.Fatalf("phantom reload: %v\n%s", err, out)
	}
	o.waitStyled("RGBTEXT", indexed, rgb)
	withColorterm := in.attachOuter(t, 80, 24, []string{"COLORTERM=truecolor"})
	withColorterm.waitText("RGBTEXT")
	withColorterm.waitStyled("RGBTEXT", indexed, rgb)

	// auto: tmux 3.3 does not answer XTGETTCAP, so the answer of a
	// terminal that does is typed in, as a terminal sends it.
	writeSettings(t, conf, `{"shell": "/bin/bash", "truecolor": "auto"}`)
	if out, err := in.run("reload"); err != nil {
		t.Fatalf("phantom reload: %v\n%s", err, out)
	}
	withColorterm.waitStyled("RGBTEXT", rgb, indexed)
	o.waitStyled("RGBTEXT", indexed, rgb)
	o.bytes([]byte("\x1bP1+r524742=382f382f38\x1b\\"))
	o.waitStyled("RGBTEXT", rgb, indexed)
	if strings.Contains(o.screen(), "524742") {
		t.Errorf("the terminal's answer reached the tab:\n%s", o.screen())
	}
}

// TestAttachRenderUnderlineColor checks that underline colours and the
// curly, dotted and dashed underlines reach the outer terminal: tmux
// keeps them, so its capture shows SGR 58 and 4:n.
func TestAttachRenderUnderlineColor(t *testing.T) {
	in := startPhantom(t)
	for _, c := range []struct {
		name, env, text string
		want            []string
	}{
		{"256 colours", "COLORTERM=", "CURLY", []string{"4:3", "58;5;196m"}},
		{"truecolor", "COLORTERM=truecolor", "CURLY", []string{"4:3", "58;2;255;0;0m"}},
		{"indexed, 256 colours", "COLORTERM=", "PLAIN", []string{"\x1b[4m", "58;5;33m"}},
		{"dotted", "COLORTERM=", "DOTTED", []string{"4:4"}},
		{"dashed", "COLORTERM=", "DASHED", []string{"4:5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := in.attachOuter(t, 80, 24, []string{c.env})
			o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
			o.literal(`clear; printf '\e[4:3;58:2::255:0:0mCURLY%s\e[0m \e[4;58;5;33mPLAIN%s\e[0m \e[4:4mDOTTED%s\e[0m \e[4:5mDASHED%s\e[0m\n' X X X X`)
			o.keys("Enter")
			o.waitText("DASHEDX")
			for _, w := range c.want {
				eventually(t, c.text+" with "+w, func() (bool, string) {
					l := o.styledLine(c.text + "X")
					i := strings.Index(l, c.text+"X")
					return i >= 0 && strings.Contains(l[:i], w), fmt.Sprintf("styled line %q", l)
				})
			}
		})
	}
}

// TestAttachRenderStatusGrey checks that the README's status line
// background, #303030, is drawn as grey 236 on a 256-colour terminal,
// not as black (16).
func TestAttachRenderStatusGrey(t *testing.T) {
	in := startPhantom(t)
	writeSettings(t, in.env.Layout.Config, `{"shell": "/bin/bash", "status": {"style": {"bg": "#303030", "fg": "#d0d0d0"}}}`)
	if out, err := in.run("reload"); err != nil {
		t.Fatalf("phantom reload: %v\n%s", err, out)
	}
	o := in.attachOuter(t, 80, 24, nil)
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
	eventually(t, "the status line on grey 236", func() (bool, string) {
		lines := strings.Split(strings.TrimRight(o.styled(), "\n"), "\n")
		last := lines[len(lines)-1]
		return strings.Contains(last, "48;5;236") && !strings.Contains(last, "48;5;16m") &&
			strings.Contains(last, fmt.Sprintf("38;5;%d", screen.Nearest256(0xd0, 0xd0, 0xd0))), fmt.Sprintf("status line %q", last)
	})
}

// TestAttachRenderStatusMarks checks the status line's marks and the key
// list: Z in a split entry's pane count while its pane is zoomed, ✓ for a
// program that ended well and ✗3 for one that failed, the legend and
// the words for q in prefix ?, and names, not ids, in messages: the
// ended tab's label, the window's name on detach.
func TestAttachRenderStatusMarks(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 100, 30, nil)
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
	o.prefix("%")
	o.waitFor("two panes", func(string) bool { return strings.Contains(o.status(), "1:bash[2]*") })
	o.prefix("z")
	o.waitFor("the zoom mark", func(string) bool { return strings.Contains(o.status(), "[2Z]*") })
	o.prefix("z")
	o.waitFor("no zoom mark", func(string) bool { return strings.Contains(o.status(), "[2]*") })
	o.prefix("!") // the pane out into an entry of its own
	o.waitFor("a second entry", func(string) bool { return strings.Contains(o.status(), "2:bash*") })

	o.literal("exit 3")
	o.keys("Enter")
	// The tab named as the status line numbers it, not by its id alone.
	o.waitFor("✗3 on the status line", func(string) bool {
		st := o.status()
		return strings.Contains(st, "✗3") && strings.Contains(st, "2:") && strings.Contains(st, ") ended: exit 3")
	})
	o.keys("Enter") // closes the ended tab
	o.waitFor("the ended tab gone", func(string) bool { return !strings.Contains(o.status(), "✗3") })
	o.prefix("c") // a tab to end well; the first stays
	o.waitFor("a second tab", func(string) bool { return strings.Contains(o.status(), "2:") })
	o.literal("exit 0")
	o.keys("Enter")
	o.waitFor("✓ on the status line", func(string) bool {
		st := o.status()
		return strings.Contains(st, "✓") && !strings.Contains(st, "✗0")
	})
	o.keys("Enter")

	o.waitFor("the first tab alone", func(string) bool { return strings.Contains(o.status(), "1:") && !strings.Contains(o.status(), "2:") })
	o.prefix("?")
	o.waitText("status line")
	for _, want := range []string{"✓ exit 0", "✗3 exit 3", "[2Z] zoomed", "● busy", "◆ agent working", "q        leave copy mode"} {
		if !strings.Contains(o.screen(), want) {
			t.Errorf("prefix ? lacks %q:\n%s", want, o.screen())
		}
	}
	o.keys("Escape")
	o.waitFor("the list closed", func(s string) bool { return !strings.Contains(s, "status line") })

	if out, err := in.run("window", "rename", "w1", "renderwin"); err != nil {
		t.Fatalf("phantom window rename: %v\n%s", err, out)
	}
	o.waitFor("the new name", func(string) bool { return strings.Contains(o.status(), "renderwin") })
	o.prefix("d")
	eventually(t, "the client to end", func() (bool, string) { done, _ := o.exited(); return done, o.screen() })
	// The message follows the client's screen; tmux's history keeps it.
	if out := o.tmux("capture-pane", "-p", "-S", "-100", "-t", "0"); !strings.Contains(out, "[detached from window renderwin") {
		t.Errorf("attach did not name the window on detach:\n%s", out)
	}
}

// TestAttachRenderSearchMessage checks that a copy-mode search that
// finds its text takes away an earlier search's "not found".
func TestAttachRenderSearchMessage(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 12, nil)
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "1:") })
	o.literal(`clear; printf 'alpha\nbeta\n'`)
	o.keys("Enter")
	o.waitFor("the output", func(s string) bool { return strings.HasPrefix(s, "alpha\nbeta") })
	o.prefix("[")
	o.waitFor("copy mode", func(string) bool { return strings.Contains(o.status(), "[scroll") })
	for _, c := range []struct {
		search string
		y      string // the cursor's row on the match
	}{{"beta", "1"}, {"alpha", "0"}} {
		o.literal("?zzqx")
		o.keys("Enter")
		o.waitFor("not found", func(string) bool { return strings.Contains(o.status(), "not found: zzqx") })
		o.literal("?" + c.search)
		o.keys("Enter")
		eventually(t, "the cursor on "+c.search, func() (bool, string) {
			pos := strings.TrimSpace(o.tmux("display-message", "-p", "-t", "0", "#{cursor_x} #{cursor_y}"))
			return pos == "0 "+c.y, "cursor at " + pos
		})
		if st := o.status(); strings.Contains(st, "not found") {
			t.Errorf("after finding %s the status line says %q", c.search, st)
		}
	}
}
