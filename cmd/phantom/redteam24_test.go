package main

// Red team for issue 24's send_keys and close_terminal, from real tabs
// with the official Go SDK client over the real socket. Each test asserts
// the refusal and that nothing changed.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeam24_KeysNeverFinishTheHumansDraft: the human half-types a
// line in a tab the agent opened (free for send_keys). The agent's Enter
// would run the human's line; its text would join it; C-u would erase
// it. Each is refused without a sheet and the line is unchanged: when the
// human presses Enter, exactly what the human typed runs. Once the human
// entered the line, the agent's keys are free again.
func TestRedTeam24_KeysNeverFinishTheHumansDraft(t *testing.T) {
	for _, mode := range keysModes {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			a := newAttacker(t, env, "agent", mode.flags...)
			agent := sharedBins(t, bin, "testagent")
			ran := filepath.Join(a.dir, "draft-ran")
			after := filepath.Join(a.dir, "after")
			go1, give1 := consentGo(t, a.dir, "1")
			go5, give5 := consentGo(t, a.dir, "5")
			own := "$STEP:0.terminal.id"
			run := a.agentWith(agent, bin, "claude",
				consentCall("create_terminal", map[string]any{"name": "work", "directory": a.dir}), // 0
				go1,                             // 1: the human half-types a line there
				keysCall(own, "Enter"),          // 2
				keysCall(own, " ; echo joined"), // 3
				keysCall(own, "C-u"),            // 4
				go5,                             // 5: the human entered the line
				keysCall(own, "echo after >"+after, "Enter"), // 6
			)
			tab := openedID(t, permStepNoSheet(t, env, run.read, 0))
			runTabIdle(t, env, tab)
			mustPhantom(t, env, "send", "--literal", tab, "echo draft >"+ran)
			eventually(t, "the human's draft on the screen", func() (bool, string) {
				out := mustPhantom(t, env, "read", tab)
				return strings.Contains(out, "echo draft"), out
			})
			give1()
			for _, i := range []int{2, 3, 4} { // Enter, text, C-u
				permResult(t, permStepNoSheet(t, env, run.read, i), true, "the human typed keys there")
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatalf("the agent's keys ran the human's half-typed line in tab %s", tab)
			}
			mustPhantom(t, env, "send", tab, "Enter")
			eventually(t, "the human's line to run as typed", func() (bool, string) {
				b, err := os.ReadFile(ran)
				return err == nil && string(b) == "draft\n", string(b)
			})
			give5()
			permResult(t, permStepNoSheet(t, env, run.read, 6), false)
			eventually(t, "the agent's keys after the human's Enter", func() (bool, string) {
				b, err := os.ReadFile(after)
				return err == nil, string(b)
			})
		})
	}
}
