package main

// send_keys and close_terminal end to end: the official MCP Go SDK client
// (the test agent) in a real tab, through the bridge and the real socket,
// the human answering sheets from outside Phantom. Into a tab the agent
// opened they need nothing; into any other tab — the human's, another
// agent's, what another agent opened, the agent's own — they ask, and
// "once" is the one call on the sheet. The tests run as an unprivileged
// user too (scripts/test-unprivileged's pattern: TestKeysTool).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/authz/audit"
)

// keysModes are the agent tabs the tests run in: sandboxed and not.
var keysModes = []struct {
	name  string
	flags []string
}{{"sandboxed", []string{"--sandbox"}}, {"unsandboxed", nil}}

// keysCall is a send_keys step.
func keysCall(tab string, keys ...string) map[string]any {
	return consentCall("send_keys", map[string]any{"terminal_id": tab, "keys": keys})
}

// openedID is the id of the tab a create_terminal step opened.
func openedID(t *testing.T, l agentLine) string {
	t.Helper()
	r := resultOf(t, l)
	term, _ := r.StructuredContent["terminal"].(map[string]any)
	if r.IsError || term["id"] == nil {
		t.Fatalf("create_terminal: %+v", r)
	}
	return fmt.Sprint(term["id"])
}

// outputHasLine reports whether out has a line starting with prefix
// (the typed command's own echo starts with the shell's prompt).
func outputHasLine(out, prefix string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return true
		}
	}
	return false
}

// TestKeysToolOpenedTab: an agent opens a tab with create_terminal, runs
// a long sleep in it with send_keys, stops it with C-c, answers a
// program's prompt in the busy tab (y, Enter) and closes the tab — no
// call raises a sheet, each is in the audit log with the keys it typed,
// and what the keys ran stayed in the agent's sandbox: the opened tab is
// sandboxed, and a write into the human's home failed there (and worked
// unsandboxed, so the check proves the wall).
func TestKeysToolOpenedTab(t *testing.T) {
	for _, mode := range keysModes {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			a := newAttacker(t, env, "agent", mode.flags...)
			agent := sharedBins(t, bin, "testagent")
			inside := filepath.Join(a.dir, "answered")
			escaped := filepath.Join(env.Home, "escaped-by-keys")
			go1, give1 := consentGo(t, a.dir, "1")
			go3, give3 := consentGo(t, a.dir, "3")
			go5, give5 := consentGo(t, a.dir, "5")
			go7, give7 := consentGo(t, a.dir, "7")
			go9, give9 := consentGo(t, a.dir, "9")
			own := "$STEP:0.terminal.id"
			prompt := `sh -c 'printf "Continue? "; read ans; echo "got-$ans" >` + inside + `; echo x >` + escaped + `'`
			run := a.agentWith(agent, bin, "claude",
				consentCall("create_terminal", map[string]any{"name": "work", "directory": a.dir}), // 0
				go1,                                  // 1: the tab waits at its prompt
				keysCall(own, "sleep 1000", "Enter"), // 2
				go3,                                  // 3: sleep runs
				keysCall(own, "C-c"),                 // 4
				go5,                                  // 5: back at the prompt
				keysCall(own, prompt, "Enter"),       // 6
				go7,                                  // 7: the program asks
				keysCall(own, "y", "Enter"),          // 8
				go9,                                  // 9: it got the answer
				consentCall("close_terminal", map[string]any{"terminal_id": own}), // 10
			)
			tab := openedID(t, permStepNoSheet(t, env, run.read, 0))
			if tb := tabByID(tabs(t, env), tab); mode.flags != nil && tb["sandboxed"] != true {
				t.Fatalf("the tab a sandboxed agent opened is not sandboxed: %v", tb)
			}
			runTabIdle(t, env, tab)
			give1()
			permResult(t, permStepNoSheet(t, env, run.read, 2), false, "sleep 1000␍")
			eventually(t, "sleep to run in the opened tab", func() (bool, string) {
				tb := tabByID(tabs(t, env), tab)
				return strings.Contains(fmt.Sprint(tb["foreground_process"]), "sleep"), fmt.Sprint(tb)
			})
			give3()
			permResult(t, permStepNoSheet(t, env, run.read, 4), false, "␃")
			eventually(t, "C-c to stop sleep", func() (bool, string) {
				tb := tabByID(tabs(t, env), tab)
				return tb["idle"] == true && !strings.Contains(fmt.Sprint(tb["foreground_process"]), "sleep"), fmt.Sprint(tb)
			})
			give5()
			permStepNoSheet(t, env, run.read, 6)
			eventually(t, "the program's prompt", func() (bool, string) {
				out := mustPhantom(t, env, "read", tab)
				return outputHasLine(out, "Continue?"), out
			})
			if tb := tabByID(tabs(t, env), tab); tb["idle"] == true {
				t.Errorf("the tab waiting in read is idle: %v", tb)
			}
			give7()
			permResult(t, permStepNoSheet(t, env, run.read, 8), false, "y␍")
			eventually(t, "the program to get the answer", func() (bool, string) {
				b, err := os.ReadFile(inside)
				return strings.TrimSpace(string(b)) == "got-y", fmt.Sprint(string(b), err)
			})
			_, err := os.Stat(escaped)
			switch {
			case mode.flags != nil && err == nil:
				t.Errorf("keys typed into the sandboxed agent's opened tab wrote %s, outside its sandbox", escaped)
			case mode.flags == nil && err != nil:
				t.Errorf("unsandboxed, the write into the home did not happen either (%v): the sandboxed run proves nothing", err)
			}
			give9()
			permResult(t, permStepNoSheet(t, env, run.read, 10), false, "closed tab "+tab)
			if tb := tabByID(tabs(t, env), tab); tb != nil {
				t.Errorf("the closed tab is still listed: %v", tb)
			}
			var keys, closed int
			for _, e := range auditJSON(t, func(args ...string) string { return mustPhantom(t, env, args...) }) {
				if e.Event != audit.Allowed || e.Target != tab {
					continue
				}
				if !strings.Contains(e.Reason, "no grant needed") || e.Tab != a.tab {
					t.Errorf("audit line %+v: want a free call from tab %s", e, a.tab)
				}
				switch e.Tool {
				case "send_keys":
					keys++
					if keys == 2 && e.Command != "\x03" {
						t.Errorf("the C-c line records %q", e.Command)
					}
				case "close_terminal":
					closed++
				}
			}
			if keys != 4 || closed != 1 {
				t.Errorf("audit: %d send_keys and %d close_terminal lines for tab %s, want 4 and 1", keys, closed, tab)
			}
		})
	}
}

// TestKeysToolHumanTabAsks: send_keys into the human's shell and
// close_terminal of the human's busy tab raise sheets that spell the keys
// and say the tab closes; denied, nothing is typed and the tab stays;
// allowed once, exactly that call goes ahead — other keys ask again.
func TestKeysToolHumanTabAsks(t *testing.T) {
	env, bin := consentUp(t)
	human, before := settledShell(t, env)
	victim := humanTab(t, env, "victim", "victim-marker")
	a := newAttacker(t, env, "agent")
	agent := sharedBins(t, bin, "testagent")
	marker := func(n int) string { return filepath.Join(a.dir, fmt.Sprintf("ran%d", n)) }
	go1, give1 := consentGo(t, a.dir, "1")
	go3, give3 := consentGo(t, a.dir, "3")
	go5, give5 := consentGo(t, a.dir, "5")
	go7, give7 := consentGo(t, a.dir, "7")
	closeVictim := consentCall("close_terminal", map[string]any{"terminal_id": victim})
	run := a.agentWith(agent, bin, "claude",
		keysCall(human, "echo 0 >"+marker(0), "Enter"), // 0
		go1,         // 1
		closeVictim, // 2
		go3,         // 3
		keysCall(human, "echo 4 >"+marker(4), "Enter"), // 4
		go5, // 5
		keysCall(human, "echo 6 >"+marker(6), "Enter"), // 6
		go7,         // 7
		closeVictim, // 8
	)
	s := agentAsksHuman(t, env, run.read, 0, a.tab, "send_keys", "keys into the human's shell")
	if want := `"echo 0 >` + marker(0) + `␍" typed into tab ` + human; s["reach"] != "SCOPE_ALL" || s["capability"] != "CAPABILITY_RUN" ||
		!strings.Contains(fmt.Sprint(s["subject"]), want) {
		t.Errorf("the sheet = %v\nwant run, reach all, subject %s", s, want)
	}
	deny(t, env, s)
	permResult(t, waitStep(t, run.read, 0), true)
	unchangedOutput(t, env, human, before, "denied keys")
	give1()

	s = agentAsksHuman(t, env, run.read, 2, a.tab, "close_terminal", "closing the human's busy tab")
	if want := "close tab " + victim + " (victim) and end what runs in it"; !strings.Contains(fmt.Sprint(s["subject"]), want) {
		t.Errorf("the sheet = %v\nwant subject %s", s, want)
	}
	deny(t, env, s)
	permResult(t, waitStep(t, run.read, 2), true)
	if tabByID(tabs(t, env), victim) == nil {
		t.Fatal("the denied close_terminal closed the human's tab")
	}
	give3()

	s = agentAsksHuman(t, env, run.read, 4, a.tab, "send_keys", "keys allowed once")
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
	permResult(t, waitStep(t, run.read, 4), false)
	eventually(t, "the keys allowed once to run", func() (bool, string) {
		_, err := os.Stat(marker(4))
		return err == nil, fmt.Sprint(err)
	})
	runTabIdle(t, env, human)
	give5()

	s = agentAsksHuman(t, env, run.read, 6, a.tab, "send_keys", "other keys on the once connection")
	deny(t, env, s)
	permResult(t, waitStep(t, run.read, 6), true)
	give7()

	s = agentAsksHuman(t, env, run.read, 8, a.tab, "close_terminal", "closing the human's tab, allowed once")
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
	permResult(t, waitStep(t, run.read, 8), false, "closed tab "+victim+" (victim) and hung up what ran in it")
	if tabByID(tabs(t, env), victim) != nil {
		t.Error("the allowed close_terminal left the tab open")
	}
	for _, n := range []int{0, 6} {
		if _, err := os.Stat(marker(n)); err == nil {
			t.Errorf("marker %d exists: denied keys were typed", n)
		}
	}
}

// TestKeysToolNotOpenedAsks: the ways an agent might make a tab count as
// one it opened, when it did not. It opens a tab in the human's group,
// renames the human's grouped tab (update_terminal, free), and then types
// into that tab; types into and closes the tab another agent opened;
// types into its own tab; and the other agent types into the tab the
// first one opened. Each asks, and denied, does nothing. The tab it did
// open takes keys without a sheet, from its MCP client and from `phantom
// send` in its shell alike. Sandboxed and not.
func TestKeysToolNotOpenedAsks(t *testing.T) {
	for _, mode := range keysModes {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			tc, _ := humanClients(t, env)
			group := humanGroup(t, tc, "work")
			sibling := humanTab(t, env, "sibling", "sibling-marker", "--group", group)
			siblingBefore := tabByID(tabs(t, env), sibling)
			a := newAttacker(t, env, "agent-A", append(mode.flags, "--group", group)...)
			b := newAttacker(t, env, "agent-B", mode.flags...)
			agent := sharedBins(t, bin, "testagent")

			theirs := b.agentWith(agent, bin, "codex",
				consentCall("create_terminal", map[string]any{"name": "theirs", "directory": b.dir}))
			y := openedID(t, permStepNoSheet(t, env, theirs.read, 0))
			runTabIdle(t, env, y)
			yBefore := mustPhantom(t, env, "read", y)
			markY := filepath.Join(a.dir, "in-theirs")

			go2, give2 := consentGo(t, a.dir, "2")
			go4, give4 := consentGo(t, a.dir, "4")
			go6, give6 := consentGo(t, a.dir, "6")
			go8, give8 := consentGo(t, a.dir, "8")
			mine := "$STEP:0.terminal.id"
			markMine := filepath.Join(a.dir, "in-mine")
			run := a.agentWith(agent, bin, "claude",
				consentCall("create_terminal", map[string]any{"name": "mine", "group_id": group, "directory": a.dir}), // 0
				consentCall("update_terminal", map[string]any{"terminal_id": sibling, "name": "mine too"}),            // 1
				go2,                      // 2
				keysCall(sibling, "C-c"), // 3
				go4,                      // 4
				keysCall(y, "echo pwned >"+markY, "Enter"), // 5
				go6, // 6
				consentCall("close_terminal", map[string]any{"terminal_id": y}), // 7
				go8,                    // 8
				keysCall(a.tab, "C-c"), // 9
				keysCall(mine, "echo mine >"+markMine, "Enter"), // 10
			)
			x := openedID(t, permStepNoSheet(t, env, run.read, 0))
			permResult(t, permStepNoSheet(t, env, run.read, 1), false)
			give2()
			s := agentAsksHuman(t, env, run.read, 3, a.tab, "send_keys", "keys into the human's grouped tab, renamed by the agent")
			if !strings.Contains(fmt.Sprint(s["subject"]), "typed into tab "+sibling) || s["reach"] == "SCOPE_TAB" {
				t.Errorf("the sheet for the human's grouped tab = %v, want it named and not reach tab", s)
			}
			deny(t, env, s)
			permResult(t, waitStep(t, run.read, 3), true)
			if tb := tabByID(tabs(t, env), sibling); tb == nil || tb["exited"] == true ||
				fmt.Sprint(tb["foreground_process"]) != fmt.Sprint(siblingBefore["foreground_process"]) {
				t.Errorf("the human's tab changed after a denied C-c: %v\nwas %v", tb, siblingBefore)
			}
			give4()
			s = agentAsksHuman(t, env, run.read, 5, a.tab, "send_keys", "keys into the tab another agent opened")
			if s["reach"] != "SCOPE_ALL" {
				t.Errorf("the sheet for the other agent's tab = %v, want reach all", s)
			}
			deny(t, env, s)
			permResult(t, waitStep(t, run.read, 5), true)
			give6()
			s = agentAsksHuman(t, env, run.read, 7, a.tab, "close_terminal", "closing the tab another agent opened")
			deny(t, env, s)
			permResult(t, waitStep(t, run.read, 7), true)
			if tabByID(tabs(t, env), y) == nil {
				t.Fatal("the denied close_terminal closed the other agent's tab")
			}
			give8()
			s = agentAsksHuman(t, env, run.read, 9, a.tab, "send_keys", "keys into the agent's own tab")
			if s["reach"] != "SCOPE_TAB" || !strings.Contains(fmt.Sprint(s["subject"]), "the caller's own tab") {
				t.Errorf("the sheet for the agent's own tab = %v, want reach tab, its own", s)
			}
			deny(t, env, s)
			permResult(t, waitStep(t, run.read, 9), true)
			permResult(t, permStepNoSheet(t, env, run.read, 10), false)
			eventually(t, "the keys into the agent's opened tab to run", func() (bool, string) {
				_, err := os.Stat(markMine)
				return err == nil, fmt.Sprint(err)
			})

			// The other agent, from its tab, into the tab A opened.
			markX := filepath.Join(b.dir, "in-x")
			intoX := b.agentWith(agent, bin, "codex", keysCall(x, "echo pwned >"+markX, "Enter"))
			s = agentAsksHuman(t, env, intoX.read, 0, b.tab, "send_keys", "another agent's keys into A's opened tab")
			deny(t, env, s)
			permResult(t, waitStep(t, intoX.read, 0), true)

			// phantom send in A's shell follows the same rule: its opened
			// tab takes keys without a sheet. (A sandboxed tab reaches no
			// daemon socket but the MCP one: its CLI cannot send at all.)
			if mode.flags == nil {
				markCLI := filepath.Join(a.dir, "in-mine-cli")
				runTabIdle(t, env, x)
				if r := a.run(shellCmd(bin, "send", x, "echo cli >"+markCLI, "Enter")); r.code != 0 {
					t.Errorf("phantom send into the agent's opened tab: %v", r)
				}
				eventually(t, "phantom send's keys to run in the opened tab", func() (bool, string) {
					_, err := os.Stat(markCLI)
					return err == nil, fmt.Sprint(err)
				})
			}
			for _, m := range []string{markY, markX} {
				if _, err := os.Stat(m); err == nil {
					t.Errorf("%s exists: denied keys were typed", m)
				}
			}
			unchangedOutput(t, env, y, yBefore, "denied keys into the other agent's tab")
			if n := len(sheetsJSON(t, env)); n != 0 {
				t.Errorf("%d sheets still wait", n)
			}
		})
	}
}
