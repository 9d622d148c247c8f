package main

// Red team for issue 24's send_keys and close_terminal, from real tabs
// with the official Go SDK client over the real socket. Each test asserts
// the refusal and that nothing changed.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeam24_KeysNeverFinishTheHumansDraft: the human half-types a
// line in their own tab. The agent's Enter would run it, its text would
// join it, C-u would erase it; the human allows each once on its sheet
// (which spells only the agent's keys, not the line they would finish),
// and terminald still refuses each, without quoting the line, and the
// line is unchanged: when the human presses Enter, exactly what the
// human typed runs. Once the line is entered, the agent's keys go in.
func TestRedTeam24_KeysNeverFinishTheHumansDraft(t *testing.T) {
	for _, mode := range keysModes {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			human, _ := settledShell(t, env)
			a := newAttacker(t, env, "agent", mode.flags...)
			agent := sharedBins(t, bin, "testagent")
			ran := filepath.Join(t.TempDir(), "draft-ran")
			after := filepath.Join(t.TempDir(), "after")
			go1, give1 := consentGo(t, a.dir, "1")
			go5, give5 := consentGo(t, a.dir, "5")
			run := a.agentWith(agent, bin, "claude",
				go1,                               // 0: the human half-types a line
				keysCall(human, "Enter"),          // 1
				keysCall(human, " ; echo joined"), // 2
				keysCall(human, "C-u"),            // 3
				go5,                               // 4: the human entered the line
				keysCall(human, "echo after >"+after, "Enter"), // 5
			)
			mustPhantom(t, env, "send", "--literal", human, "echo draft >"+ran)
			eventually(t, "the human's draft on the screen", func() (bool, string) {
				out := mustPhantom(t, env, "read", human)
				return strings.Contains(out, "echo draft"), out
			})
			give1()
			for i := 1; i <= 3; i++ { // Enter, text, C-u
				l := answerOnce(t, env, run.read, i, a.tab, "send_keys", i == 1) // the next sheet may be answered while step i ends
				permResult(t, l, true, "the human typed keys there")
				if strings.Contains(resultOf(t, l).text(), "echo draft") {
					t.Errorf("the refusal quotes the human's line: %s", resultOf(t, l).text())
				}
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatalf("the agent's keys ran the human's half-typed line in tab %s", human)
			}
			mustPhantom(t, env, "send", human, "Enter")
			eventually(t, "the human's line to run as typed", func() (bool, string) {
				b, err := os.ReadFile(ran)
				return err == nil && string(b) == "draft\n", string(b)
			})
			give5()
			permResult(t, answerOnce(t, env, run.read, 5, a.tab, "send_keys", true), false)
			eventually(t, "the agent's keys after the human's Enter", func() (bool, string) {
				b, err := os.ReadFile(after)
				return err == nil, string(b)
			})
		})
	}
}

// TestRedTeam24_HumansTabOnceTheHumanTypedThere: the human types a line
// in a tab the agent opened (sudo, ssh or a password typed there would
// be the human's, not the agent's sandbox's). From then on the tab is the
// human's: send_keys and close_terminal ask, denied nothing is typed and
// the tab stays, and list_terminals no longer says the agent opened it.
func TestRedTeam24_HumansTabOnceTheHumanTypedThere(t *testing.T) {
	for _, mode := range keysModes {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			a := newAttacker(t, env, "agent", mode.flags...)
			agent := sharedBins(t, bin, "testagent")
			mark := filepath.Join(a.dir, "agent-typed")
			go1, give1 := consentGo(t, a.dir, "1")
			go3, give3 := consentGo(t, a.dir, "3")
			own := "$STEP:0.terminal.id"
			run := a.agentWith(agent, bin, "claude",
				consentCall("create_terminal", map[string]any{"name": "work", "directory": a.dir}), // 0
				go1,                                     // 1: the human types there
				keysCall(own, "echo x >"+mark, "Enter"), // 2
				go3,                                     // 3
				consentCall("close_terminal", map[string]any{"terminal_id": own}), // 4
			)
			tab := openedID(t, permStepNoSheet(t, env, run.read, 0))
			runTabIdle(t, env, tab)
			mustPhantom(t, env, "send", tab, "echo human-was-here", "Enter")
			lastCommandIs(t, env, tab, "echo human-was-here")
			if tb := tabByID(tabs(t, env), tab); tb["opened_by"] != nil && tb["opened_by"] != "" {
				t.Errorf("after the human typed there, the tab still says it was opened by %v", tb["opened_by"])
			}
			before := mustPhantom(t, env, "read", tab)
			give1()
			s := agentAsksHuman(t, env, run.read, 2, a.tab, "send_keys", "keys into an opened tab the human typed in")
			if !strings.Contains(fmt.Sprint(s["subject"]), "echo x >"+mark) {
				t.Errorf("the sheet does not spell the keys: %v", s)
			}
			deny(t, env, s)
			permResult(t, waitStep(t, run.read, 2), true)
			give3()
			deny(t, env, agentAsksHuman(t, env, run.read, 4, a.tab, "close_terminal", "closing an opened tab the human typed in"))
			permResult(t, waitStep(t, run.read, 4), true)
			if tabByID(tabs(t, env), tab) == nil {
				t.Fatalf("denied, close_terminal closed tab %s", tab)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("denied keys ran in tab %s", tab)
			}
			unchangedOutput(t, env, tab, before, "denied keys")
			// Across an upgrade (a new terminald takes the tabs back), the
			// tab stays the human's.
			mustPhantom(t, env, "upgrade")
			eventually(t, "tab "+tab+" back after the upgrade", func() (bool, string) {
				tb := tabByID(tabs(t, env), tab)
				return tb != nil, fmt.Sprint(tb)
			})
			if tb := tabByID(tabs(t, env), tab); tb["opened_by"] != nil && tb["opened_by"] != "" {
				t.Errorf("after the upgrade, the tab the human typed in says it was opened by %v again", tb["opened_by"])
			}
		})
	}
}

// TestRedTeam24_NewTabDirectoryClaimWidensNothing: the agent's shell
// claims the human's project as its directory with OSC 7 and calls
// create_terminal without a directory. The new tab may start there, but
// it works in the agent's project (never the claimed one, whose grants
// are the human's), and, for a sandboxed agent, keys typed into it write
// nothing there.
func TestRedTeam24_NewTabDirectoryClaimWidensNothing(t *testing.T) {
	for _, mode := range keysModes {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			proj := filepath.Join(env.Home, "human-project")
			if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			a := newAttacker(t, env, "agent", mode.flags...)
			agent := sharedBins(t, bin, "testagent")
			escaped := filepath.Join(proj, "written-by-claim")
			go1, give1 := consentGo(t, a.dir, "1")
			path := filepath.Join(a.dir, "claim")
			b, _ := json.Marshal([]map[string]any{
				consentCall("create_terminal", map[string]any{"name": "claimed"}), // 0
				go1, // 1
				keysCall("$STEP:0.terminal.id", "echo x >"+escaped, "Enter"), // 2
				{"op": "exit"},
			})
			if err := os.WriteFile(path+".json", b, 0o600); err != nil {
				t.Fatal(err)
			}
			read := func() []agentLine { return readAgentLines(path + ".jsonl") }
			t.Cleanup(func() { killAgent(read()) })
			a.start(`printf '\033]7;file://localhost` + proj + `\007' >/dev/tty; TESTAGENT_CLIENT=claude ` + shellCmd(agent, bin, path+".json", path+".jsonl"))
			tab := openedID(t, permStepNoSheet(t, env, read, 0))
			nt, self := tabByID(tabs(t, env), tab), tabByID(tabs(t, env), a.tab)
			if self["directory"] != proj {
				t.Fatalf("the claim did not take: the agent's tab's directory is %v, not %s", self["directory"], proj)
			}
			if nt["project"] == proj || nt["project"] != self["project"] {
				t.Errorf("the tab opened from a claimed directory works in %v; want the agent's project %v, never %s", nt["project"], self["project"], proj)
			}
			runTabIdle(t, env, tab)
			give1()
			permResult(t, permStepNoSheet(t, env, read, 2), false)
			runTabIdle(t, env, tab)
			if _, err := os.Stat(escaped); mode.flags != nil && err == nil {
				t.Errorf("keys typed into the sandboxed agent's new tab wrote %s, in the directory its shell claimed", escaped)
			}
			t.Logf("new tab %s: directory %v, project %v", tab, nt["directory"], nt["project"])
		})
	}
}

// TestRedTeam24_SheetSpellsWhatIsTyped: keys whose spelling could hide
// what they do — the Enter picture typed as text, escape sequences that
// would paint over the sheet, a bidi override — are spelled on the sheet
// so that none looks like another and no control character reaches it;
// denied, nothing is typed.
func TestRedTeam24_SheetSpellsWhatIsTyped(t *testing.T) {
	env, bin := consentUp(t)
	human, before := settledShell(t, env)
	a := newAttacker(t, env, "agent")
	agent := sharedBins(t, bin, "testagent")
	literal := func(k ...string) map[string]any {
		return consentCall("send_keys", map[string]any{"terminal_id": human, "keys": k, "literal": true})
	}
	go1, give1 := consentGo(t, a.dir, "1")
	go3, give3 := consentGo(t, a.dir, "3")
	run := a.agentWith(agent, bin, "claude",
		literal("make test\u240d"), // 0: the picture, not Enter
		go1,
		keysCall(human, "\x1b[2K\x1b[1Gls", "Enter"), // 2
		go3,
		literal("\u202eecho safe"), // 4
	)
	for _, c := range []struct {
		step      int
		want, not string
		give      func()
	}{
		{0, `"\"make test␍\"" typed into`, `"make test␍" typed into`, give1},
		{2, `"␛[2K␛[1Gls␍" typed into`, "\x1b", give3},
		{4, `\u202eecho safe`, "\u202e", nil},
	} {
		s := agentAsksHuman(t, env, run.read, c.step, a.tab, "send_keys", "keys spelled to hide")
		subject := fmt.Sprint(s["subject"])
		if !strings.Contains(subject, c.want) || strings.Contains(subject, c.not) {
			t.Errorf("step %d: the sheet says %q; want %q in it and never %q", c.step, subject, c.want, c.not)
		}
		deny(t, env, s)
		permResult(t, waitStep(t, run.read, c.step), true)
		if c.give != nil {
			c.give()
		}
	}
	unchangedOutput(t, env, human, before, "denied keys")
}

// TestRedTeam24_ArgumentsSmuggleNothing: arguments that could read one
// way for the permission check and another for terminald — the tab named
// twice (proto and JSON names), a hidden field under its JSON name — are
// refused before any sheet, and nothing is typed or opened.
func TestRedTeam24_ArgumentsSmuggleNothing(t *testing.T) {
	env, bin := consentUp(t)
	human, before := settledShell(t, env)
	a := newAttacker(t, env, "agent")
	agent := sharedBins(t, bin, "testagent")
	mark := filepath.Join(a.dir, "smuggled")
	run := a.agentWith(agent, bin, "claude",
		consentCall("send_keys", map[string]any{"terminal_id": a.tab, "terminalId": human, "keys": []string{"touch " + mark, "Enter"}}),
		consentCall("run_command", map[string]any{"terminal_id": a.tab, "terminalId": human, "command": "touch " + mark}),
		consentCall("create_terminal", map[string]any{"editorSocket": filepath.Join(a.dir, "nvim.sock")}),
		consentCall("create_terminal", map[string]any{"command": []string{"touch", mark}}),
	)
	n := len(tabs(t, env))
	for i := range 4 {
		permResult(t, permStepNoSheet(t, env, run.read, i), true, "was not run")
	}
	if got := len(tabs(t, env)); got != n {
		t.Errorf("smuggled create_terminal arguments opened a tab: %d tabs, want %d", got, n)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("a smuggled argument ran %s", mark)
	}
	unchangedOutput(t, env, human, before, "smuggled arguments")
}

// TestRedTeam24_CancelledKeysNeverTyped: the agent asks to type into the
// human's tab and cancels the call while its sheet waits. The sheet goes
// away; answered anyway (allow once, as a human late on the keys would),
// nothing is typed, and the audit has no typed keys.
func TestRedTeam24_CancelledKeysNeverTyped(t *testing.T) {
	env, bin := consentUp(t)
	human, before := settledShell(t, env)
	a := newAttacker(t, env, "agent")
	agent := sharedBins(t, bin, "testagent")
	mark := filepath.Join(a.dir, "typed-after-cancel")
	run := a.agentWith(agent, bin, "claude",
		map[string]any{"op": "flood", "tool": "send_keys", "n": 1, "cancel_ms": 3000,
			"args": map[string]any{"terminal_id": human, "keys": []string{"touch " + mark, "Enter"}}},
	)
	s := agentAsksHuman(t, env, run.read, 0, a.tab, "send_keys", "a call cancelled while its sheet waits")
	l := waitStep(t, run.read, 0)
	if !strings.Contains(string(l.Result), `"cancelled":1`) {
		t.Fatalf("the call was not cancelled: %s", l.Result)
	}
	// The human's late answer: refused or ignored, never typed.
	phantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
	eventually(t, "the cancelled call's sheet to go", func() (bool, string) {
		s := sheetOf(t, env, a.tab, "send_keys")
		return s == nil, fmt.Sprint(s)
	})
	unchangedOutput(t, env, human, before, "a cancelled send_keys answered late")
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("a cancelled send_keys typed into the human's tab after a late answer")
	}
}
