package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// TestAdversarialWindowCloseMove: windows are the human's, as their names
// are (renaming one is refused inside Phantom): from a real tab, plain
// and sandboxed, `phantom window close` and `phantom window move` (also
// after setsid with Phantom's variables cleared) and CloseWindow and
// MoveTerminal over grpcurl straight to terminald are refused, and no
// window, tab or place changed.
func TestAdversarialWindowCloseMove(t *testing.T) {
	env := adversaryUp(t)
	grpcurl := grpcurlPath(t)
	terminald := env.Layout.DaemonSocket("terminald")
	mustPhantom(t, env, "window", "new", "ci")
	human := humanTab(t, env, "human-ci", "HUMAN-IN-CI", "--window", "ci")
	attackers := []*attacker{newAttacker(t, env, "plain")}
	if sandbox.ABI() >= sandbox.MinABI {
		attackers = append(attackers, newAttacker(t, env, "boxed", "--sandbox"))
	}
	windows := mustPhantom(t, env, "window", "ls")
	places := func() string {
		var b strings.Builder
		for _, tb := range tabs(t, env) {
			fmt.Fprintf(&b, "%v:%v ", tb["id"], tb["window_id"])
		}
		return b.String()
	}
	before := places()

	for _, a := range attackers {
		bin, gc := a.own(phantomBin, "phantom"), a.own(grpcurl, "grpcurl")
		setsid := "setsid env -u PHANTOM_TAB_ID -u PHANTOM_MCP_SOCKET "
		for _, c := range []struct{ name, cmd string }{
			{"phantom window close ci", shellCmd("timeout", "20", bin, "window", "close", "w2")},
			{"phantom window close of its own window", shellCmd("timeout", "20", bin, "window", "close", "w1")},
			{"phantom window move of the human's tab", shellCmd("timeout", "20", bin, "window", "move", human, "w1")},
			{"phantom window move of its own tab", shellCmd("timeout", "20", bin, "window", "move", a.tab, "w2")},
			{"phantom window close after setsid and env -u", setsid + shellCmd("timeout", "20", bin, "window", "close", "w2")},
			{"phantom window move after setsid and env -u", setsid + shellCmd("timeout", "20", bin, "window", "move", human, "w1")},
			{"grpcurl CloseWindow", shellCmd("timeout", "20", gc, "-plaintext", "-unix", "-d", `{"window_id":"w2"}`,
				terminald, "phantom.terminal.v1.TerminalService/CloseWindow")},
			{"grpcurl MoveTerminal", shellCmd("timeout", "20", gc, "-plaintext", "-unix", "-d", `{"terminal_id":"`+human+`","window_id":"w1"}`,
				terminald, "phantom.terminal.v1.TerminalService/MoveTerminal")},
		} {
			attack := fmt.Sprintf("%s from tab %s", c.name, a.tab)
			r := a.run(c.cmd)
			if a.tab == attackers[0].tab {
				if !refused(r) {
					t.Errorf("%s: want a refusal, got %v", attack, r)
				}
			} else if !refusedOrWalledOff(r) && !strings.Contains(r.out, "Failed to dial") {
				// (Walled off, the sandbox does not even see terminald's
				// socket: the CLI finds no Phantom, grpcurl cannot dial.)
				t.Errorf("%s (sandboxed): want a refusal, got %v", attack, r)
			}
			if got := mustPhantom(t, env, "window", "ls"); got != windows {
				t.Fatalf("after %s, the windows are:\n%s\nwere:\n%s", attack, got, windows)
			}
			if got := places(); got != before {
				t.Fatalf("after %s, the tabs are in %s, were in %s", attack, got, before)
			}
		}
	}
	if out := mustPhantom(t, env, "read", human); !strings.Contains(out, "HUMAN-IN-CI") {
		t.Errorf("the human's tab in ci shows:\n%s", out)
	}
	// The plain attacker's CLI says why, in the human's words.
	r := attackers[0].run(shellCmd(attackers[0].own(phantomBin, "phantom"), "window", "close", "w2"))
	if r.code != 5 || !strings.Contains(r.out, "windows are the human's") {
		t.Errorf("phantom window close inside a tab: want exit 5 saying windows are the human's, got %v", r)
	}
}
