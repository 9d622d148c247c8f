package main

// Red team for issue 25's human-side features (sessions that come back,
// windows, the grants view, attach's text paths, paste buffers): attacks
// from real tabs, plain and sandboxed. A HOLE test failed before its fix;
// a HOLD test asserts a refusal that was already there.

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// rt25Evil is agent-chosen text that drives a terminal it reaches raw:
// it sets the window title, clears the screen, rings the bell, and a
// right-to-left override reorders what follows it on the line.
const rt25Evil = "x\x1b]2;PWNED\x07\x1b[2J\u202eyz"

// rt25Raw reports what of rt25Evil reached out as itself: an escape, a
// bell or a bidi override.
func rt25Raw(s string) []string {
	var raw []string
	for _, c := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(s, c) {
			raw = append(raw, c)
		}
	}
	return raw
}

// TestRedTeam25_RestoreOutputEscapesAgentText — HOLE (phantom up printed
// the restore report's lines raw, and phantom keep-command and phantom ls
// a tab's title and directory raw). Agents in a plain and in a sandboxed
// tab name their own tab and a tab they open with escape sequences and a
// bidi override; the human marks a command on the agent's tab. What the
// human's `phantom keep-command`, `phantom ls` and, after down and up,
// `phantom up` print holds none of it raw: the names come back escaped.
func TestRedTeam25_RestoreOutputEscapesAgentText(t *testing.T) {
	in := startPhantom(t)
	plain := newAttacker(t, in.env, "plain")
	bin := plain.own(phantomBin, "phantom")
	if r := plain.run(shellCmd(bin, "new", "--name", rt25Evil+"-kid")); r.code != 0 {
		t.Fatalf("phantom new from the plain tab: %v", r)
	}
	if r := plain.run(shellCmd(bin, "rename", plain.tab, rt25Evil+"-own")); r.code != 0 {
		t.Fatalf("phantom rename from the plain tab: %v", r)
	}
	attackers := []*attacker{plain}
	if sandbox.ABI() >= sandbox.MinABI {
		// A walled sandbox reaches no daemon through the CLI: its agent
		// names tabs with the free MCP tools.
		boxed := newAttacker(t, in.env, "boxed", "--sandbox")
		run := boxed.agent("namer",
			map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"name": rt25Evil + "-boxkid"}},
			map[string]any{"op": "call", "tool": "update_terminal", "args": map[string]any{"terminal_id": boxed.tab, "name": rt25Evil + "-boxown"}},
		)
		eventually(t, "the sandboxed agent's two calls", func() (bool, string) {
			lines := run.read()
			for _, l := range lines {
				if l.Op == "fatal" {
					t.Fatalf("the sandboxed agent failed: %s", l.Error)
				}
				if l.Step == 1 {
					return true, ""
				}
			}
			return false, fmt.Sprint(lines)
		})
		attackers = append(attackers, boxed)
	}
	eventually(t, "every agent-chosen name", func() (bool, string) {
		n := 0
		for _, tm := range in.list(t) {
			if strings.HasPrefix(tm.GetName(), rt25Evil) {
				n++
			}
		}
		return n == 2*len(attackers), in.must(t, "ls", "--json")
	})
	// The human marks a command on each agent's tab.
	for _, a := range attackers {
		in.must(t, "keep-command", a.tab, "on", "true")
	}

	outputs := map[string]string{
		"phantom keep-command": in.must(t, "keep-command"),
		"phantom ls":           in.must(t, "ls"),
	}
	for _, a := range attackers {
		outputs["phantom keep-command "+a.tab] = in.must(t, "keep-command", a.tab)
	}
	eventually(t, "the names and marks in the saved session", func() (bool, string) {
		b, _ := os.ReadFile(in.sessionFile())
		return strings.Count(string(b), "PWNED") == 2*len(attackers) && strings.Count(string(b), `"keep"`) == len(attackers), string(b)
	})
	outputs["phantom up"] = in.downUp(t)
	outputs["phantom ls after up"] = in.must(t, "ls")
	for what, out := range outputs {
		if raw := rt25Raw(out); len(raw) != 0 {
			t.Errorf("%s printed agent text raw (%q):\n%q", what, raw, out)
		}
	}
	// Still said, escaped: the opened tabs left out, the marks run again.
	up := outputs["phantom up"]
	if strings.Count(up, `x\x1b]2;PWNED\x07\x1b[2J`) != 2*len(attackers) || !strings.Contains(up, "not restored") || !strings.Contains(up, "running again") {
		t.Errorf("phantom up does not name the agents' tabs, escaped:\n%s", up)
	}
}

// TestRedTeam25_Printable: what the CLI prints of agents' text keeps
// letters (any script, emoji joined by ZWJ) and escapes controls and bidi
// formatting characters.
func TestRedTeam25_Printable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"build", "build"},
		{"日本語 ✓ 👩‍💻", "日本語 ✓ 👩‍💻"},
		{"a\x1b]2;x\x07b", `a\x1b]2;x\x07b`},
		{"\u009b2J", `\x9b2J`},
		{"ok\u202eko", `ok\u202eko`},
		{"\u2066x\u2069\u200f\u061c", `\u2066x\u2069\u200f\u061c`},
	} {
		if got := printable(c.in); got != c.want {
			t.Errorf("printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRedTeam25_AttachTextPathsShowAgentTextInert — HOLE (attach's
// sanitize dropped controls but kept bidi overrides, which a bidi-aware
// outer terminal — Konsole, mlterm — applies to the rest of the status
// line or the chooser's row). An agent names its tab and one it opens
// with escape sequences and a right-to-left override; in a real outer
// terminal the status line and the tree chooser (prefix w) show the
// names without the override, and no escape reached the outer terminal
// (its title is unchanged, the names are on screen).
func TestRedTeam25_AttachTextPathsShowAgentTextInert(t *testing.T) {
	in := startPhantom(t)
	a := newAttacker(t, in.env, "plain")
	bin := a.own(phantomBin, "phantom")
	if r := a.run(shellCmd(bin, "new", "--name", rt25Evil+"-kid")); r.code != 0 {
		t.Fatalf("phantom new from the tab: %v", r)
	}
	if r := a.run(shellCmd(bin, "rename", a.tab, rt25Evil+"-own")); r.code != 0 {
		t.Fatalf("phantom rename from the tab: %v", r)
	}
	o := in.attachOuter(t, 200, 30, nil)
	title := o.tmux("display-message", "-p", "-t", "0", "#{pane_title}")
	o.waitFor("the agent's names on the status line", func(string) bool {
		return strings.Contains(o.status(), "PWNED") && strings.Contains(o.status(), "-own")
	})
	check := func(where string) {
		t.Helper()
		if s := o.styled(); strings.Contains(s, "\u202e") {
			t.Errorf("%s: the outer terminal got the agent's bidi override:\n%q", where, s)
		}
		if got := o.tmux("display-message", "-p", "-t", "0", "#{pane_title}"); got != title || strings.Contains(got, "PWNED") {
			t.Errorf("%s: the outer terminal's title became %q (was %q)", where, got, title)
		}
	}
	check("status line")
	o.prefix("w")
	o.waitFor("the tree chooser with the agent's tabs", func(s string) bool {
		return strings.Contains(s, "▾ main (w1)") && strings.Count(s, "-kid") > 1 && strings.Count(s, "-own") > 1
	})
	check("tree chooser")
	o.keys("Escape")
}
