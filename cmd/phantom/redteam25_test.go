package main

// Red team for issue 25's human-side features (sessions that come back,
// windows, the grants view, attach's text paths, paste buffers): attacks
// from real tabs, plain and sandboxed. A HOLE test failed before its fix;
// a HOLD test asserts a refusal that was already there.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/authz/audit"

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
	if r := plain.run(shellCmd(bin, "group", "new", rt25Evil+"-group")); r.code != 0 {
		t.Fatalf("phantom group new from the plain tab: %v", r)
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
	// A directory the agent made and named, where the human opens a tab;
	// the agent removes it before the restore, which then says so.
	agentDir := filepath.Join(plain.dir, "d\x1b]2;DIRPWN\x07\u202e")
	if r := plain.run(shellCmd("mkdir", agentDir)); r.code != 0 {
		t.Fatalf("mkdir from the plain tab: %v", r)
	}
	in.must(t, "new", "--dir", agentDir, "--name", "in-agent-dir")
	// The human marks a command on each agent's tab.
	for _, a := range attackers {
		in.must(t, "keep-command", a.tab, "on", "true")
	}

	outputs := map[string]string{
		"phantom keep-command": in.must(t, "keep-command"),
		"phantom ls":           in.must(t, "ls"),
		"phantom group ls":     in.must(t, "group", "ls"),
	}
	for _, a := range attackers {
		outputs["phantom keep-command "+a.tab] = in.must(t, "keep-command", a.tab)
	}
	eventually(t, "the names and marks in the saved session", func() (bool, string) {
		b, _ := os.ReadFile(in.sessionFile())
		return strings.Count(string(b), "PWNED") > 2*len(attackers) && strings.Count(string(b), `"keep"`) == len(attackers) &&
			strings.Contains(string(b), "DIRPWN"), string(b)
	})
	if r := plain.run(shellCmd("rmdir", agentDir)); r.code != 0 {
		t.Fatalf("rmdir from the plain tab: %v", r)
	}
	outputs["phantom up"] = in.downUp(t)
	outputs["phantom ls after up"] = in.must(t, "ls")
	outputs["phantom group ls after up"] = in.must(t, "group", "ls")
	for what, out := range outputs {
		if raw := rt25Raw(out); len(raw) != 0 {
			t.Errorf("%s printed agent text raw (%q):\n%q", what, raw, out)
		}
	}
	// Still said, escaped: the opened tabs left out, the marks run again.
	up := outputs["phantom up"]
	if strings.Count(up, `x\x1b]2;PWNED\x07\x1b[2J`) != 2*len(attackers) || !strings.Contains(up, "not restored") || !strings.Contains(up, "running again") ||
		!strings.Contains(up, `d\x1b]2;DIRPWN\x07\u202e`) || !strings.Contains(up, "is gone") {
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

// TestRedTeam25_HumanOnlyCallsRefusedFromTabs — HOLD. From a plain and a
// sandboxed tab, straight at the daemons with grpcurl and through the CLI
// after setsid with Phantom's variables cleared: marking a command on the
// human's tab (KeepCommand), restoring the session (RestoreSession) and
// revoking the human's grant with a forged "relayed for" pid
// (RevokeGrant's relayed_for_pid, the grants view's field) are refused;
// the human's tab keeps no mark, the grant is still there, and the audit
// log records no revocation, so no forged pid either.
func TestRedTeam25_HumanOnlyCallsRefusedFromTabs(t *testing.T) {
	env := adversaryUp(t)
	grpcurl := grpcurlPath(t)
	human, _ := settledShell(t, env)
	_, ac := humanClients(t, env)
	grant := standingGrant(t, env, ac, "standing-agent", human)
	attackers := []*attacker{newAttacker(t, env, "plain")}
	if sandbox.ABI() >= sandbox.MinABI {
		attackers = append(attackers, newAttacker(t, env, "boxed", "--sandbox"))
	}
	nTabs := len(tabs(t, env))
	for _, a := range attackers {
		bin, gc := a.own(phantomBin, "phantom"), a.own(grpcurl, "grpcurl")
		marker := filepath.Join(env.Home, "pwned-"+a.tab)
		grpc := func(daemon, method, data string) string {
			return shellCmd("timeout", "20", gc, "-plaintext", "-unix", "-d", data, env.Layout.DaemonSocket(daemon), method)
		}
		setsid := "setsid env -u PHANTOM_TAB_ID -u PHANTOM_MCP_SOCKET "
		for _, c := range []struct{ name, cmd string }{
			{"grpcurl KeepCommand on the human's tab", grpc("terminald", "phantom.terminal.v1.TerminalService/KeepCommand",
				fmt.Sprintf(`{"terminal_id":%q,"command":"touch %s"}`, human, marker))},
			{"grpcurl KeepCommand on its own tab", grpc("terminald", "phantom.terminal.v1.TerminalService/KeepCommand",
				fmt.Sprintf(`{"terminal_id":%q,"command":"touch %s"}`, a.tab, marker))},
			{"grpcurl RestoreSession", grpc("terminald", "phantom.terminal.v1.TerminalService/RestoreSession", `{}`)},
			{"grpcurl RevokeGrant with a forged relayed_for_pid", grpc("authz", "phantom.authz.v1.AuthzService/RevokeGrant",
				fmt.Sprintf(`{"grant_id":%q,"relayed_for_pid":1}`, grant))},
			{"phantom keep-command after setsid and env -u", setsid + shellCmd("timeout", "20", bin, "keep-command", human, "on", "touch", marker)},
			{"phantom grants revoke after setsid and env -u", setsid + shellCmd("timeout", "20", bin, "grants", "revoke", grant)},
		} {
			attack := fmt.Sprintf("%s from tab %s", c.name, a.tab)
			r := a.run(c.cmd)
			if a == attackers[0] {
				if !refused(r) {
					t.Errorf("%s: want a refusal, got %v", attack, r)
				}
			} else if !refusedOrWalledOff(r) && !strings.Contains(r.out, "Failed to dial") {
				t.Errorf("%s (sandboxed): want a refusal, got %v", attack, r)
			}
			if out := mustPhantom(t, env, "keep-command"); !strings.Contains(out, "no tab keeps a command") {
				t.Errorf("after %s, tabs keep commands:\n%s", attack, out)
			}
			if ids := grantIDs(t, env); !slices.Equal(ids, []string{grant}) {
				t.Errorf("after %s, the grants are %v, want just %s", attack, ids, grant)
			}
			if n := len(tabs(t, env)); n != nTabs {
				t.Errorf("after %s, there are %d tabs, were %d", attack, n, nTabs)
			}
		}
	}
	// ListEntries is open to tabs (the CLI's positions): it answers with
	// window and tab ids and the focused tab, none of the human's tab's
	// title, which a tab may not read without a grant.
	mustPhantom(t, env, "run", human, "--wait=20", "--", `printf '\033]2;TITLE-SECRET\007'`)
	eventually(t, "the human's tab's title", func() (bool, string) {
		tb := tabByID(tabs(t, env), human)
		return tb["title"] == "TITLE-SECRET", fmt.Sprint(tb)
	})
	p := attackers[0]
	r := p.run(shellCmd("timeout", "20", p.own(grpcurl, "grpcurl"), "-plaintext", "-unix", "-d", "{}",
		env.Layout.DaemonSocket("terminald"), "phantom.terminal.v1.TerminalService/ListEntries"))
	if r.code != 0 || !strings.Contains(r.out, `"`+human+`"`) || strings.Contains(r.out, "SECRET") || strings.Contains(r.out, env.Home) {
		t.Errorf("grpcurl ListEntries from tab %s: want the tab ids and nothing of the human's tab, got %v", p.tab, r)
	}

	if b, _ := os.ReadFile(filepath.Join(env.Layout.State, audit.FileName)); strings.Contains(string(b), audit.GrantRevoked) {
		t.Errorf("the audit log records a revocation:\n%s", b)
	}
}
