package main

// What the human approves is exactly what the agent gets (DESIGN.md,
// invariant 4), attacked from real tabs through the MCP socket, with the
// human answering outside Phantom:
//   - "once" is the one call on the sheet: not another command, another
//     tab or another tool on the same connection;
//   - tabs an agent opened count as its own tab (reach tab), and a tab
//     grant covers them and never the human's tabs;
//   - grant keys come from what Phantom sees: repository config, OSC 7 and
//     a self-chosen client name move nothing.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/authz"
	"github.com/phantom-dev/phantom/internal/testenv"
	"github.com/phantom-dev/phantom/internal/toolreg"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// consentUp starts an instance outside the temporary directories with a
// short turn-away, so that one test can see several refusals ask the
// human. It returns the instance and the phantom binary its daemons run,
// which sandboxed tabs can run too.
func consentUp(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	return deputyUp(t, authz.TurnAwayEnv+"=1s")
}

// sharedBins copies the test agent next to bin, outside /tmp, where every
// tab can run it: tabs running the same copies are the same program to
// Phantom, a copy elsewhere another one.
func sharedBins(t *testing.T, bin, name string) string {
	t.Helper()
	agent := filepath.Join(filepath.Dir(bin), name)
	if err := copyFile(testAgent(t), agent, 0o755); err != nil {
		t.Fatal(err)
	}
	return agent
}

// consentCall is a tools/call step.
func consentCall(tool string, args map[string]any) map[string]any {
	return map[string]any{"op": "call", "tool": tool, "args": args}
}

// consentRepos makes two git repositories A and B next to bin.
func consentRepos(t *testing.T, bin string) (repoA, repoB string) {
	t.Helper()
	base := filepath.Dir(bin)
	repoA, repoB = filepath.Join(base, "A"), filepath.Join(base, "B")
	for _, r := range []string{repoA, repoB} {
		if out, err := exec.Command("git", "init", "-q", r).CombinedOutput(); err != nil {
			t.Fatalf("git init %s: %v\n%s", r, err, out)
		}
	}
	return repoA, repoB
}

// grantInA gives claude's program (agent) in a tab of repoA a standing
// "always read all", as the human, and checks it reads the human's tab. It
// returns the tab and the sheet the human answered.
func grantInA(t *testing.T, env *testenv.Env, agent, bin, repoA, human string, flags []string) (*attacker, map[string]any) {
	t.Helper()
	inA := newAttacker(t, env, "agent-A", append(flags, "--dir", repoA)...)
	first := inA.agentWith(agent, bin, "claude", permRead(human))
	s := agentAsksHuman(t, env, first.read, 0, inA.tab, "read_output", "the first read from A")
	if s["project"] != repoA {
		t.Fatalf("the sheet from A = %v, want project %s", s, repoA)
	}
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--always", "--scope", "all")
	if r := resultOf(t, waitStep(t, first.read, 0)); r.IsError {
		t.Fatalf("the allowed read failed: %+v", r)
	}
	return inA, s
}

// retried makes a call step retry while it fails (a tab still busy with
// the previous command), for up to 20 s.
func retried(step map[string]any) map[string]any {
	step["retry"] = true
	return step
}

// consentGo makes a step that waits for the test's go-ahead, and returns
// it with the function that gives it.
func consentGo(t *testing.T, dir, name string) (map[string]any, func()) {
	path := filepath.Join(dir, "go-"+name)
	return map[string]any{"op": "wait", "file": path}, func() {
		t.Helper()
		time.Sleep(1500 * time.Millisecond) // past the 1 s turn-away of a denial just given
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsentOnceIsTheCallOnTheSheet: one "once" for a command typed into
// the agent's own new tab allows exactly that call on that connection: the
// same call again, and nothing else — not another command into the same
// tab, not typing into the human's shell, not reading it. The tab the
// agent opened counts as its own (reach tab, "a tab this agent opened").
// Sandboxed and not.
func TestConsentOnceIsTheCallOnTheSheet(t *testing.T) {
	for _, mode := range []struct {
		name  string
		flags []string
	}{{"sandboxed", []string{"--sandbox"}}, {"unsandboxed", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			human, before := settledShell(t, env)
			a := newAttacker(t, env, "agent", mode.flags...)
			agent := sharedBins(t, bin, "testagent")
			marker := func(n int) string { return filepath.Join(a.dir, fmt.Sprintf("ran%d", n)) }
			go3, give3 := consentGo(t, a.dir, "3")
			go5, give5 := consentGo(t, a.dir, "5")
			go7, give7 := consentGo(t, a.dir, "7")
			own := "$STEP:0.terminal.id"
			run := a.agentWith(agent, bin, "claude",
				consentCall("create_terminal", map[string]any{"name": "tests"}),                                            // 0
				retried(consentCall("run_command", map[string]any{"terminal_id": own, "command": "echo 1 >" + marker(1)})), // 1: retried while the tab starts
				retried(consentCall("run_command", map[string]any{"terminal_id": own, "command": "echo 1 >" + marker(1)})), // 2: the same call
				go3, // 3
				consentCall("run_command", map[string]any{"terminal_id": own, "command": "echo 3 >" + marker(3)}), // 4
				go5, // 5
				consentCall("run_command", map[string]any{"terminal_id": human, "command": "echo pwned >" + marker(6)}), // 6
				go7, // 7
				consentCall("read_output", map[string]any{"terminal_id": human}), // 8
			)
			opened := resultOf(t, waitStep(t, run.read, 0))
			term, _ := opened.StructuredContent["terminal"].(map[string]any)
			if opened.IsError || term["id"] == nil {
				t.Fatalf("create_terminal: %+v", opened)
			}
			ownTab := fmt.Sprint(term["id"])
			s := agentAsksHuman(t, env, run.read, 1, a.tab, "run_command", "a command into the agent's own new tab")
			if s["reach"] != "SCOPE_TAB" || !strings.Contains(fmt.Sprint(s["subject"]), "a tab this agent opened") {
				t.Errorf("the sheet for the agent's own new tab = %v, want reach tab and \"a tab this agent opened\"", s)
			}
			mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
			if r := resultOf(t, waitStep(t, run.read, 1)); r.IsError {
				t.Fatalf("the allowed call failed: %+v", r)
			}
			eventually(t, "the allowed command to run", func() (bool, string) {
				_, err := os.Stat(marker(1))
				return err == nil, fmt.Sprint(err)
			})
			gs := grantsJSON(t, env)
			if len(gs) != 1 || gs[0]["always"] == true || !strings.Contains(fmt.Sprint(gs[0]["call"]), "echo 1") {
				t.Errorf("grants after one once = %v, want one once grant for that call", gs)
			}
			// The same call again on the connection: no sheet (the tab may
			// still be busy with the first one; the step retries).
			permStepNoSheet(t, env, run.read, 2)
			eventually(t, "the agent's tab to be idle again", func() (bool, string) {
				tb := tabByID(tabs(t, env), ownTab)
				return tb["idle"] == true, fmt.Sprint(tb)
			})
			give3()

			// Another command into the same tab asks.
			s = agentAsksHuman(t, env, run.read, 4, a.tab, "run_command", "another command on the once connection")
			deny(t, env, s)
			if r := resultOf(t, waitStep(t, run.read, 4)); !r.IsError {
				t.Errorf("another command ran on the once grant: %+v", r)
			}
			give5()
			// Typing into the human's shell asks.
			s = agentAsksHuman(t, env, run.read, 6, a.tab, "run_command", "typing into the human's shell on the once connection")
			if s["reach"] != "SCOPE_ALL" {
				t.Errorf("the sheet for the human's shell = %v, want reach all", s)
			}
			deny(t, env, s)
			if r := resultOf(t, waitStep(t, run.read, 6)); !r.IsError {
				t.Errorf("typing into the human's shell went ahead: %+v", r)
			}
			give7()
			// Reading the human's shell asks.
			s = agentAsksHuman(t, env, run.read, 8, a.tab, "read_output", "reading the human's shell on the once connection")
			deny(t, env, s)
			if r := resultOf(t, waitStep(t, run.read, 8)); !r.IsError {
				t.Errorf("reading the human's shell went ahead: %+v", r)
			}
			for _, n := range []int{3, 6} {
				if _, err := os.Stat(marker(n)); err == nil {
					t.Errorf("marker %d exists: a refused command ran", n)
				}
			}
			unchangedOutput(t, env, human, before, "the refused calls")
		})
	}
}

// TestConsentOpenedTabsAreTheAgentsOwn: a standing `tab` grant for run
// covers the agent's own tab and the tabs it opened (and they the ones
// those opened), and never the human's tabs, grouped with the agent's or
// not.
func TestConsentOpenedTabsAreTheAgentsOwn(t *testing.T) {
	env, bin := consentUp(t)
	human, before := settledShell(t, env)
	tc, _ := humanClients(t, env)
	group := humanGroup(t, tc, "work")
	grouped := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "grouped", "--group", group)) // a shell, idle at its prompt
	eventually(t, "the grouped shell to be idle", func() (bool, string) {
		tb := tabByID(tabs(t, env), grouped)
		return tb["idle"] == true, fmt.Sprint(tb)
	})
	a := newAttacker(t, env, "agent", "--sandbox", "--group", group)
	agent := sharedBins(t, bin, "testagent")
	marker := func(n int) string { return filepath.Join(a.dir, fmt.Sprintf("ran%d", n)) }
	go3, give3 := consentGo(t, a.dir, "3")
	go5, give5 := consentGo(t, a.dir, "5")
	own := "$STEP:0.terminal.id"
	run := a.agentWith(agent, bin, "claude",
		consentCall("create_terminal", map[string]any{"name": "tests"}),                                            // 0
		retried(consentCall("run_command", map[string]any{"terminal_id": own, "command": "echo 1 >" + marker(1)})), // 1: retried while the tab starts
		retried(consentCall("run_command", map[string]any{"terminal_id": own, "command": "echo 2 >" + marker(2)})), // 2: covered by the tab grant
		go3, // 3: its own step, so that the next call's sheet cannot race the check that step 2 raised none
		consentCall("run_command", map[string]any{"terminal_id": grouped, "command": "echo 4 >" + marker(4)}), // 4
		go5, // 5
		consentCall("run_command", map[string]any{"terminal_id": human, "command": "echo 6 >" + marker(6)}), // 6
	)
	resultOf(t, waitStep(t, run.read, 0))
	s := agentAsksHuman(t, env, run.read, 1, a.tab, "run_command", "the agent's own new tab")
	if s["reach"] != "SCOPE_TAB" {
		t.Errorf("sheet = %v, want reach tab", s)
	}
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--always", "--scope", "tab")
	permStepNoSheet(t, env, run.read, 2)
	eventually(t, "both commands to run in the agent's tab", func() (bool, string) {
		_, err1 := os.Stat(marker(1))
		_, err2 := os.Stat(marker(2))
		return err1 == nil && err2 == nil, fmt.Sprint(err1, err2)
	})
	give3()
	s = agentAsksHuman(t, env, run.read, 4, a.tab, "run_command", "the human's grouped tab under a tab grant")
	deny(t, env, s)
	waitStep(t, run.read, 4)
	give5()
	s = agentAsksHuman(t, env, run.read, 6, a.tab, "run_command", "the human's shell under a tab grant")
	deny(t, env, s)
	waitStep(t, run.read, 6)
	for _, n := range []int{4, 6} {
		if _, err := os.Stat(marker(n)); err == nil {
			t.Errorf("marker %d exists: the tab grant typed into a human's tab", n)
		}
	}
	unchangedOutput(t, env, human, before, "typing under a tab grant")
}

// TestConsentGrantKeysUnforgeable: a standing "always read all" for claude
// in project A. From a tab of project B the agent points B's repository at
// A (core.worktree), prints an OSC 7 naming A, and asks to read the human's
// tab: the sheet asks, keyed by B. And in A itself, a program that only
// calls itself claude asks, while the program the grant was given to reads
// without a sheet. Sandboxed and not.
func TestConsentGrantKeysUnforgeable(t *testing.T) {
	for _, mode := range []struct {
		name  string
		flags []string
	}{{"sandboxed", []string{"--sandbox"}}, {"unsandboxed", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			human := humanTab(t, env, "human", "human-secret-marker")
			repoA, repoB := consentRepos(t, bin)
			agent := sharedBins(t, bin, "testagent")
			impostor := sharedBins(t, bin, "impostor")

			// The grant, given to claude's program in A.
			inA, s := grantInA(t, env, agent, bin, repoA, human, mode.flags)
			if s["program"] != agent {
				t.Errorf("the sheet from A = %v, want program %s", s, agent)
			}
			// The same program in A reads without a sheet: the grant works,
			// so what follows proves the keys, not a grant that covers nothing.
			again := inA.agentWith(agent, bin, "claude", permRead(human))
			permStepNoSheet(t, env, again.read, 0)

			// Another program in A calling itself claude asks.
			posing := inA.agentWith(impostor, bin, "claude", permRead(human))
			s = agentAsksHuman(t, env, posing.read, 0, inA.tab, "read_output", "a program posing as claude")
			if s["program"] != impostor {
				t.Errorf("the impostor's sheet = %v, want program %s", s, impostor)
			}
			deny(t, env, s)
			if r := resultOf(t, waitStep(t, posing.read, 0)); !r.IsError || strings.Contains(r.text(), "human-secret-marker") {
				t.Errorf("the impostor read the human's tab: %+v", r)
			}

			// From B, with B's repository and screen pointing at A.
			inB := newAttacker(t, env, "agent-B", append(mode.flags, "--dir", repoB)...)
			// A sandbox may keep .git/config read-only; the OSC 7 it can
			// always print.
			inB.run("git -C " + sq(repoB) + " config core.worktree " + sq(repoA))
			if r := inB.run("printf '\\033]7;file://localhost%s\\033\\\\' " + sq(repoA) + " >" + sq(inB.pty)); r.code != 0 {
				t.Fatalf("printing an OSC 7 naming A: %v", r)
			}
			seen := false
			for deadline := time.Now().Add(5 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				seen = tabByID(tabs(t, env), inB.tab)["directory"] == repoA
			}
			t.Logf("terminald shows the OSC 7's directory for tab %s: %v", inB.tab, seen)
			fromB := inB.agentWith(agent, bin, "claude", permRead(human))
			s = agentAsksHuman(t, env, fromB.read, 0, inB.tab, "read_output", "B posing as A")
			if s["project"] != repoB {
				t.Errorf("the sheet from B = %v, want project %s (Phantom's, not the tab's)", s, repoB)
			}
			deny(t, env, s)
			if r := resultOf(t, waitStep(t, fromB.read, 0)); !r.IsError || strings.Contains(r.text(), "human-secret-marker") {
				t.Errorf("B read the human's tab on A's grant: %+v", r)
			}
			if gs := grantsJSON(t, env); len(gs) != 1 {
				t.Errorf("grants = %v, want only A's", gs)
			}
		})
	}
}

// TestConsentContinuationNeverJoinsTheHumansLine: a line no lexer can see
// is open — an alias in the human's bash that expands to an open loop —
// is typed under a standing grant: the shell holds it open after the
// Enter, terminald cancels it (nothing ran) and says so, and the human's
// next line runs on its own.
func TestConsentContinuationNeverJoinsTheHumansLine(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	env, bin := deputyUp(t, "SHELL="+bash)
	human, _ := settledShell(t, env)
	mustPhantom(t, env, "send", human, "alias zz='for i in 1; do'", "Enter")
	runTabIdle(t, env, human)
	// run_command waits a moment after a line was entered (its program
	// may still read the terminal): past it, so that the call is typed.
	time.Sleep(time.Second)
	a := newAttacker(t, env, "agent")
	agent := sharedBins(t, bin, "testagent")
	run := a.agentWith(agent, bin, "claude", consentCall("run_command", map[string]any{"terminal_id": human, "command": "zz"}))
	s := agentAsksHuman(t, env, run.read, 0, a.tab, "run_command", "an alias that opens a loop")
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
	r := resultOf(t, waitStepWithin(t, run.read, 0, time.Minute))
	if !r.IsError || !strings.Contains(r.text(), "held the line open for more") {
		t.Fatalf("run_command zz = %s, want refused: the shell held the line open", r.text())
	}
	mark := filepath.Join(a.dir, "MARK")
	runTabIdle(t, env, human)
	mustPhantom(t, env, "send", human, "touch "+mark, "Enter")
	eventually(t, "the human's own line to run", func() (bool, string) {
		_, err := os.Stat(mark)
		return err == nil, mustPhantom(t, env, "read", human)
	})
}

// TestConsentEveryGatedToolAsks walks every tool whose proto option
// states a capability other than CAPABILITY_NONE: from a real tab, each
// call, aimed at the human's tab or a directory outside the agent's, is
// refused unless the human allows it — here every sheet is denied — and
// none runs; the tools the gateway lists are exactly the registry's.
func TestConsentEveryGatedToolAsks(t *testing.T) {
	reg, err := toolreg.Default()
	if err != nil {
		t.Fatal(err)
	}
	env, bin := consentUp(t)
	human, before := settledShell(t, env)
	a := newAttacker(t, env, "agent", "--sandbox")
	agent := sharedBins(t, bin, "testagent")
	marker := filepath.Join(a.dir, "ran")
	script := []map[string]any{{"op": "list"}}
	var gated []string
	for _, tl := range reg.Tools() {
		if toolreg.Free(tl.Capability) {
			continue
		}
		args := map[string]any{}
		switch tl.Reach.Kind {
		case mcpv1.ReachKind_REACH_KIND_TAB:
			args[string(tl.Reach.Field.JSONName())] = human
		case mcpv1.ReachKind_REACH_KIND_DIRECTORY:
			args[string(tl.Reach.Field.JSONName())] = env.Home
		}
		for _, f := range tl.Subject {
			switch {
			case f.Kind() == protoreflect.StringKind && f.IsList():
				args[string(f.JSONName())] = []string{"touch " + marker, "Enter"} // send_keys' keys
			case f.Kind() == protoreflect.StringKind && !f.IsMap():
				args[string(f.JSONName())] = "touch " + marker
			}
		}
		gated = append(gated, tl.Name)
		script = append(script, consentCall(tl.Name, args))
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the human denies every sheet
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, s := range sheetsJSON(t, env) {
				phantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--deny")
			}
		}
	}()
	run := a.agentWith(agent, bin, "claude", script...)
	listed := map[string]bool{}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if l := waitStep(t, run.read, 0); json.Unmarshal(l.Result, &list) != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list: %s %s", l.Result, l.Error)
	}
	for _, tl := range list.Tools {
		listed[tl.Name] = true
	}
	if len(listed) != len(reg.Tools()) {
		t.Errorf("the gateway lists %d tools, the registry has %d", len(listed), len(reg.Tools()))
	}
	for i, name := range gated {
		r := resultOf(t, waitStepWithin(t, run.read, i+1, time.Minute))
		if !r.IsError {
			t.Errorf("%s, which needs a grant, ran with every sheet denied: %s", name, r.text())
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a gated call ran its command")
	}
	unchangedOutput(t, env, human, before, "the gated calls")
	t.Logf("%d gated tools, each refused: %v", len(gated), gated)
}
