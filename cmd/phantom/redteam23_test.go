package main

// Red team for issue 23 ("what the human approves is exactly what the
// agent gets"): attacks from real tabs through the MCP socket with inputs
// other than the examples. A test marked HOLE fails while the
// hole is open; one marked HOLD passes.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// rt23SheetOrStep waits until step i of the run whose outcomes read
// returns either raises a sheet from tab for tool (returned) or ends
// without one (its outcome returned, sheet nil).
func rt23SheetOrStep(t *testing.T, env *testenv.Env, read func() []agentLine, i int, tab, tool string) (map[string]any, agentLine) {
	t.Helper()
	var s map[string]any
	var line agentLine
	eventually(t, fmt.Sprintf("step %d (%s) from tab %s to ask or end", i, tool, tab), func() (bool, string) {
		if s = sheetOf(t, env, tab, tool); s != nil {
			return true, ""
		}
		for _, l := range read() {
			if l.Step == i || l.Op == "fatal" {
				line = l
				return true, ""
			}
		}
		return false, fmt.Sprint(read(), sheetsJSON(t, env))
	})
	return s, line
}

// TestRedTeam23_OpenedTabInAnotherProjectInheritsItsGrants — was a HOLE; holds now.
// claude has "always read all" in project A. claude in project B opens a
// tab with create_terminal (free) and directory A — a tab that counts as
// its own, "no more privileged than the agent" — and the human allows,
// once, typing one command into "a tab this agent opened" (reach tab).
// The command starts the same agent program there: its project is A, so
// it reads the human's tab on A's grant without a sheet.
func TestRedTeam23_OpenedTabInAnotherProjectInheritsItsGrants(t *testing.T) {
	for _, mode := range []struct {
		name  string
		flags []string
	}{{"sandboxed", []string{"--sandbox"}}, {"unsandboxed", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			human := humanTab(t, env, "human", "human-secret-marker")
			repoA, repoB := consentRepos(t, bin)
			agent := sharedBins(t, bin, "testagent")
			grantInA(t, env, agent, bin, repoA, human, mode.flags)

			inB := newAttacker(t, env, "agent-B", append(mode.flags, "--dir", repoB)...)
			nested := filepath.Join(inB.dir, "nested")
			b, _ := json.Marshal([]map[string]any{permRead(human), {"op": "exit"}})
			if err := os.WriteFile(nested+".json", b, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killAgent(readAgentLines(nested + ".jsonl")) })
			cmd := "TESTAGENT_CLIENT=claude " + shellCmd(agent, bin, nested+".json", nested+".jsonl")
			run := inB.agentWith(agent, bin, "claude",
				consentCall("create_terminal", map[string]any{"name": "tests", "directory": repoA}),
				retried(consentCall("run_command", map[string]any{"terminal_id": "$STEP:0.terminal.id", "command": cmd})),
			)
			opened := resultOf(t, waitStep(t, run.read, 0))
			if opened.IsError {
				t.Fatalf("HOLD? create_terminal into A refused: %s", opened.text())
			}
			term, _ := opened.StructuredContent["terminal"].(map[string]any)
			ownTab := fmt.Sprint(term["id"])
			s := agentAsksHuman(t, env, run.read, 1, inB.tab, "run_command", "the nested agent into the opened tab")
			t.Logf("the sheet the human answers once: reach %v, project %v, subject %v", s["reach"], s["project"], s["subject"])
			mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
			if r := resultOf(t, waitStep(t, run.read, 1)); r.IsError {
				t.Fatalf("the once run_command failed: %s", r.text())
			}
			t.Logf("the opened tab %s: project %v, opened_by %v", ownTab, tabByID(tabs(t, env), ownTab)["project"], tabByID(tabs(t, env), ownTab)["opened_by"])
			read := func() []agentLine { return readAgentLines(nested + ".jsonl") }
			sheet, line := rt23SheetOrStep(t, env, read, 0, ownTab, "read_output")
			if sheet != nil {
				t.Logf("HOLD: the nested agent's read asks: project %v", sheet["project"])
				deny(t, env, sheet)
				return
			}
			r := resultOf(t, line)
			if !r.IsError && strings.Contains(r.text(), "human-secret-marker") {
				t.Errorf("HOLE: an agent in project B, through a tab it opened in A (project %v) and one once for \"a tab this agent opened\", read the human's tab on A's standing grant, no sheet: %.200s",
					tabByID(tabs(t, env), ownTab)["project"], r.text())
			}
		})
	}
}

// TestRedTeam23_LeaderChdirMovesTheProject — was a HOLE; holds now. A tab opened in B
// whose own program (an unsandboxed agent run as the tab's program, e.g.
// `phantom new --dir B -- claude`) changes its working directory to A:
// terminald names the tab's project from the leader's /proc/PID/cwd,
// which the leader writes with chdir(2), so B's tab gets A's standing
// grants.
func TestRedTeam23_LeaderChdirMovesTheProject(t *testing.T) {
	env, bin := consentUp(t)
	human := humanTab(t, env, "human", "human-secret-marker")
	repoA, repoB := consentRepos(t, bin)
	agent := sharedBins(t, bin, "testagent")
	grantInA(t, env, agent, bin, repoA, human, nil)

	dir, err := os.MkdirTemp("", "attacker")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	a := &attacker{t: t, env: env, dir: dir}
	// The tab's program: opened in B, it moves itself to A and goes on
	// as the attacker loop (the same process: exec).
	a.tab = strings.TrimSpace(mustPhantom(t, env, "new", "--name", "agent-B", "--dir", repoB, "--",
		"sh", "-c", `cd "$1" && exec sh -c "$2" attacker "$3"`, "leader", repoA, attackerLoop, dir))
	t.Cleanup(func() { phantom(t, env, "close", a.tab) })
	eventually(t, "the chdir-ing tab to start", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(dir, "tty"))
		a.pty = strings.TrimSpace(string(b))
		return err == nil, mustPhantom(t, env, "read", a.tab)
	})
	// terminald re-reads the leader's directory as it refreshes the tab's
	// status: wait (a while) to see whether it moves the project.
	moved := false
	for deadline := time.Now().Add(5 * time.Second); !moved && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		moved = tabByID(tabs(t, env), a.tab)["project"] == repoA
	}
	t.Logf("terminald names tab %s's project %s: %v", a.tab, repoA, moved)
	run := a.agentWith(agent, bin, "claude", permRead(human))
	sheet, line := rt23SheetOrStep(t, env, run.read, 0, a.tab, "read_output")
	if sheet != nil {
		t.Logf("HOLD: asks, project %v", sheet["project"])
		if sheet["project"] != repoB {
			t.Errorf("the sheet's project is %v, want %s (where the tab was opened)", sheet["project"], repoB)
		}
		deny(t, env, sheet)
		return
	}
	if r := resultOf(t, line); !r.IsError && strings.Contains(r.text(), "human-secret-marker") {
		t.Errorf("HOLE: tab %s opened in %s, whose program did chdir(%s), read the human's tab on A's grant without a sheet (terminald's project %v): %.200s",
			a.tab, repoB, repoA, tabByID(tabs(t, env), a.tab)["project"], r.text())
	}
}

// TestRedTeam23_BridgeParentExecsTheGrantedProgram — was a HOLE; holds now
// (lineage.talksOnlyTo: the bridge's parent must hold its stdio alone). The program a
// standing grant is for is the bridge's parent (lineage.ClientProgram).
// An impostor in A's tab starts the real bridge in the background with
// its stdio on a FIFO it drives, then execs the granted agent's binary
// (idle, waiting on a file): at the hello the bridge's parent is that
// binary, so the impostor's own requests read the human's tab on claude's
// grant without a sheet.
func TestRedTeam23_BridgeParentExecsTheGrantedProgram(t *testing.T) {
	for _, mode := range []struct {
		name  string
		flags []string
	}{{"sandboxed", []string{"--sandbox"}}, {"unsandboxed", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			env, bin := consentUp(t)
			human := humanTab(t, env, "human", "human-secret-marker")
			repoA, _ := consentRepos(t, bin)
			agent := sharedBins(t, bin, "testagent")
			inA, _ := grantInA(t, env, agent, bin, repoA, human, mode.flags)

			idle := filepath.Join(inA.dir, "idle")
			release := filepath.Join(inA.dir, "release")
			b, _ := json.Marshal([]map[string]any{{"op": "wait", "file": release}, {"op": "exit"}})
			if err := os.WriteFile(idle+".json", b, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.WriteFile(release, nil, 0o644); killAgent(readAgentLines(idle + ".jsonl")) })
			lines := []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"impostor","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_output","arguments":{"terminal_id":"` + human + `","lines":20}}}`,
			}
			job := inA.start(`mkfifo "$J.fifo" || exit 9
TESTAGENT_CLIENT=claude sh -c '"$0" +mcp-server --client=claude <"$1" >"$2" & exec "$3" "$0" "$4" "$5"' ` +
				shellCmd(bin) + ` "$J.fifo" "$J.bout" ` + shellCmd(agent, idle+".json", idle+".jsonl") + ` &
sleep 0.5
{ printf '%s\n' ` + sq(lines[0]) + `; sleep 0.5; printf '%s\n' ` + sq(lines[1]) + ` ` + sq(lines[2]) + `; sleep 20; } >"$J.fifo"`)
			bout := job.path + ".bout"
			var sheet map[string]any
			var reply string
			eventually(t, "the impostor's read to ask or answer", func() (bool, string) {
				if sheet = sheetOf(t, env, inA.tab, "read_output"); sheet != nil {
					return true, ""
				}
				out, _ := os.ReadFile(bout)
				for _, l := range strings.Split(string(out), "\n") {
					if strings.Contains(l, `"id":2`) {
						reply = l
						return true, ""
					}
				}
				if r, ok := job.done(); ok {
					return true, r.String()
				}
				return false, string(out) + job.output()
			})
			if sheet != nil {
				t.Logf("HOLD: the impostor asks: program %v", sheet["program"])
				if sheet["program"] == agent {
					t.Errorf("the impostor's sheet names the granted program %s", agent)
				}
				deny(t, env, sheet)
				return
			}
			if strings.Contains(reply, "human-secret-marker") {
				t.Errorf("HOLE: a script that started the bridge and exec'd the granted program read the human's tab on its grant without a sheet: %.300s", reply)
			} else {
				t.Fatalf("the impostor got neither a sheet nor the tab: reply %q, job %s", reply, job.output())
			}
		})
	}
}

// TestRedTeam23_RunCommandLeavesAContinuationForTheHumansNextLine — was a
// HOLE, now holds: authz refuses, before any sheet, a command line the
// shell would hold open (policy.checkComplete).
// run_command types only into an empty prompt, but it may type a line the
// shell does not finish (a trailing backslash): the human allows, once,
// `echo rt23 \` into their shell; bash waits for the rest, and the next
// line the human types (`touch MARK`) becomes part of the agent's command
// instead of running: what the human typed is joined to the agent's text.
func TestRedTeam23_RunCommandLeavesAContinuationForTheHumansNextLine(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	env, bin := deputyUp(t, "SHELL="+bash)
	human, _ := settledShell(t, env)
	a := newAttacker(t, env, "agent")
	agent := sharedBins(t, bin, "testagent")
	run := a.agentWith(agent, bin, "claude",
		consentCall("run_command", map[string]any{"terminal_id": human, "command": `echo rt23-joined \`}))
	// Refused before any sheet; were a sheet raised, the human answers once.
	var step agentLine
	eventually(t, "the call with a trailing backslash to end", func() (bool, string) {
		if s := sheetOf(t, env, a.tab, "run_command"); s != nil {
			phantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
		}
		for _, l := range run.read() {
			if l.Step == 0 {
				step = l
				return true, ""
			}
		}
		return false, fmt.Sprint(run.read())
	})
	if r := resultOf(t, step); r.IsError && strings.Contains(r.text(), "not a complete command line") {
		return
	} else {
		t.Errorf("run_command with a trailing backslash was not refused as incomplete: %s", r.text())
	}
	mark := filepath.Join(a.dir, "MARK")
	time.Sleep(500 * time.Millisecond)
	mustPhantom(t, env, "send", human, "touch "+mark, "Enter")
	eventually(t, "the human's tab to be idle again", func() (bool, string) {
		tb := tabByID(tabs(t, env), human)
		return tb["idle"] == true, fmt.Sprint(tb)
	})
	time.Sleep(500 * time.Millisecond)
	out := mustPhantom(t, env, "read", human)
	if _, err := os.Stat(mark); err != nil && strings.Contains(out, "rt23-joined touch "+mark) {
		t.Errorf("HOLE: the human's next line `touch %s` did not run; bash ran it as part of the agent's `echo rt23-joined \\`:\n%s\nlast_command: %v",
			mark, out, tabByID(tabs(t, env), human)["last_command"])
	}
}
