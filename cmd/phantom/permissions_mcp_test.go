package main

// Permissions over the real MCP path: the official MCP Go SDK client (the
// test agent) in a real tab → `phantom +mcp-server` → gateway → authz →
// terminald, with the human answering sheets through the CLI from outside
// every tab. TestPermissions checks the same rules at the gRPC level;
// TestMCPAgentInTab checks a once grant for the agent's own tab.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/authz"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// permUp is up with extra variables (KEY=VALUE) in the environment, which
// the daemons `phantom up` starts inherit.
func permUp(t *testing.T, vars ...string) *testenv.Env {
	t.Helper()
	env := testenv.New(t)
	env.Vars = append(env.Vars, vars...)
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	mustPhantom(t, env, "up")
	return env
}

// permAgents opens one tab that runs the test agent as client (empty: the
// agent's default, "test") once per script, one run after the other; every
// run but the last should end with {"op":"exit"}. It returns the tab and,
// per run, a function reading the outcomes written so far.
func permAgents(t *testing.T, env *testenv.Env, client string, scripts ...[]map[string]any) (string, []func() []agentLine) {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var reads []func() []agentLine
	for i, s := range scripts {
		b, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("script%d.json", i)), b, 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprintf("out%d.jsonl", i))
		reads = append(reads, func() []agentLine { return readAgentLines(out) })
	}
	tab := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "agent-"+client, "--", "sh", "-c",
		`agent=$0 bin=$1 dir=$2 n=$3 client=$4; i=0
		while [ $i -lt $n ]; do
			TESTAGENT_CLIENT=$client "$agent" "$bin" "$dir/script$i.json" "$dir/out$i.jsonl"
			echo "agent run $i exited $?"
			i=$((i+1))
		done
		sleep 1000`,
		testAgent(t), phantomBin, dir, strconv.Itoa(len(scripts)), client))
	t.Cleanup(func() {
		for _, read := range reads {
			killAgent(read())
		}
	})
	return tab, reads
}

// permConnected waits until a run has its MCP session.
func permConnected(t *testing.T, read func() []agentLine) {
	t.Helper()
	eventually(t, "the agent to connect", func() (bool, string) {
		lines := read()
		for _, l := range lines {
			if l.Op == "fatal" {
				t.Fatalf("agent failed: %s", l.Error)
			}
		}
		return agentPID(lines) > 0, fmt.Sprint(lines)
	})
}

// permStepNoSheet is waitStep for a call that must not raise a sheet: it
// fails as soon as one shows up.
func permStepNoSheet(t *testing.T, env *testenv.Env, read func() []agentLine, i int) agentLine {
	t.Helper()
	eventually(t, fmt.Sprintf("agent step %d without a sheet", i), func() (bool, string) {
		lines := read()
		if slices.ContainsFunc(lines, func(l agentLine) bool { return l.Step == i || l.Op == "fatal" }) {
			return true, ""
		}
		if s := sheetsJSON(t, env); len(s) != 0 {
			t.Fatalf("step %d raised a sheet: %v", i, s)
		}
		return false, fmt.Sprint(lines)
	})
	return waitStep(t, read, i)
}

// permNotDone fails if a run already reported step i.
func permNotDone(t *testing.T, read func() []agentLine, i int, why string) {
	t.Helper()
	if slices.ContainsFunc(read(), func(l agentLine) bool { return l.Step == i }) {
		t.Errorf("step %d finished before %s", i, why)
	}
}

// permTarget opens a tab other agents read, showing marker.
func permTarget(t *testing.T, env *testenv.Env, marker string) string {
	t.Helper()
	id := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "target", "--", "sh", "-c", "echo "+marker+"; sleep 1000"))
	eventually(t, marker+" in the target tab", func() (bool, string) {
		out := mustPhantom(t, env, "read", id)
		return strings.Contains(out, marker), out
	})
	return id
}

func permRead(tab string) map[string]any {
	return map[string]any{"op": "call", "tool": "read_output", "args": map[string]any{"terminal_id": tab, "lines": 20}}
}

// permSheet waits for the single waiting sheet and checks who asks and what
// for; it returns the sheet.
func permSheet(t *testing.T, env *testenv.Env, client, tab, tool, capability, reach, subject string) map[string]any {
	t.Helper()
	waitSheet(t, env, tool)
	s := sheetsJSON(t, env)[0]
	if s["client"] != client || s["tab_id"] != tab || s["capability"] != capability || s["reach"] != reach ||
		s["tool"] != tool || !strings.Contains(fmt.Sprint(s["subject"]), subject) {
		t.Errorf("sheet = %v\nwant client %s, tab %s, %s, reach %s, tool %s, subject containing %s",
			s, client, tab, capability, reach, tool, subject)
	}
	return s
}

// permResult checks a tool call's outcome: isError or not, and its text.
func permResult(t *testing.T, l agentLine, isError bool, texts ...string) {
	t.Helper()
	r := resultOf(t, l)
	ok := r.IsError == isError
	for _, s := range texts {
		ok = ok && strings.Contains(r.text(), s)
	}
	if !ok {
		t.Errorf("step %d = %+v\nwant isError %v and text containing %q", l.Step, r, isError, texts)
	}
}

// TestPermissionsMCPOnce: read_output on another tab asks; "once" covers
// the rest of that connection and dies with it.
func TestPermissionsMCPOnce(t *testing.T) {
	env, _ := up(t)
	target := permTarget(t, env, "once-target-marker")
	dir := t.TempDir()
	leave, again := filepath.Join(dir, "leave"), filepath.Join(dir, "again")
	tab, runs := permAgents(t, env, "onceclient",
		[]map[string]any{permRead(target), permRead(target), {"op": "wait", "file": leave}, {"op": "exit"}},
		[]map[string]any{{"op": "wait", "file": again}, permRead(target)},
	)

	id := permSheet(t, env, "onceclient", tab, "read_output", "CAPABILITY_READ", "SCOPE_ALL", "tab "+target)["id"].(string)
	if out := mustPhantom(t, env, "sheet", "answer", id, "--once"); !strings.Contains(out, "allowed "+id+" once") {
		t.Errorf("sheet answer printed %q", out)
	}
	permResult(t, waitStep(t, runs[0], 0), false, "once-target-marker")

	// The same connection reads again without a sheet.
	permResult(t, permStepNoSheet(t, env, runs[0], 1), false, "once-target-marker")
	gs := grantsJSON(t, env)
	if len(gs) != 1 || gs[0]["always"] != false || gs[0]["client"] != "onceclient" || gs[0]["capability"] != "CAPABILITY_READ" {
		t.Errorf("grants after --once = %v, want one once grant of onceclient", gs)
	}

	// The agent exits: its connection closes and the once grant with it.
	os.WriteFile(leave, nil, 0o600)
	eventually(t, "the first agent run to exit", func() (bool, string) {
		lines := runs[0]()
		return slices.ContainsFunc(lines, func(l agentLine) bool { return l.Op == "end" }) && !running(agentPID(lines)), fmt.Sprint(lines)
	})
	eventually(t, "the once grant to end with the connection", func() (bool, string) {
		gs := grantsJSON(t, env)
		return len(gs) == 0, fmt.Sprint(gs)
	})

	// A new run, same client, same tab: a new connection, a new sheet.
	permConnected(t, runs[1])
	os.WriteFile(again, nil, 0o600)
	id2 := permSheet(t, env, "onceclient", tab, "read_output", "CAPABILITY_READ", "SCOPE_ALL", "tab "+target)["id"].(string)
	if id2 == id {
		t.Errorf("the new connection's sheet has the old id %s", id)
	}
	mustPhantom(t, env, "sheet", "answer", id2, "--once")
	permResult(t, waitStep(t, runs[1], 1), false, "once-target-marker")
}

// TestPermissionsMCPAlways: an always grant survives `phantom down` and
// `up`, is listed, and once revoked the next call asks again.
func TestPermissionsMCPAlways(t *testing.T) {
	env, _ := up(t)
	target := permTarget(t, env, "always-target-marker")
	tab, runs := permAgents(t, env, "alwaysclient", []map[string]any{permRead(target)})
	id := permSheet(t, env, "alwaysclient", tab, "read_output", "CAPABILITY_READ", "SCOPE_ALL", "tab "+target)["id"].(string)
	if out := mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all"); !strings.Contains(out, "allowed "+id+" always") {
		t.Errorf("sheet answer printed %q", out)
	}
	permResult(t, waitStep(t, runs[0], 0), false, "always-target-marker")
	gs := grantsJSON(t, env)
	if len(gs) != 1 || gs[0]["always"] != true || gs[0]["scope"] != "SCOPE_ALL" || gs[0]["client"] != "alwaysclient" ||
		gs[0]["capability"] != "CAPABILITY_READ" || gs[0]["project"] != env.Home {
		t.Fatalf("grants after --always = %v", gs)
	}
	gid := gs[0]["id"].(string)

	mustPhantom(t, env, "down")
	mustPhantom(t, env, "up")
	if gs := grantsJSON(t, env); len(gs) != 1 || gs[0]["id"] != gid || gs[0]["always"] != true {
		t.Fatalf("grants after down and up = %v, want %s", gs, gid)
	}

	// A new agent connection reads without a sheet; after the revoke its
	// next read asks.
	target = permTarget(t, env, "always-target-again")
	revoked := filepath.Join(t.TempDir(), "revoked")
	tab, runs = permAgents(t, env, "alwaysclient",
		[]map[string]any{permRead(target), {"op": "wait", "file": revoked}, permRead(target)})
	permResult(t, permStepNoSheet(t, env, runs[0], 0), false, "always-target-again")
	if out := mustPhantom(t, env, "grants", "revoke", gid); !strings.Contains(out, "revoked "+gid) {
		t.Errorf("grants revoke printed %q", out)
	}
	if gs := grantsJSON(t, env); len(gs) != 0 {
		t.Errorf("grants after revoke = %v", gs)
	}
	os.WriteFile(revoked, nil, 0o600)
	id = permSheet(t, env, "alwaysclient", tab, "read_output", "CAPABILITY_READ", "SCOPE_ALL", "tab "+target)["id"].(string)
	permNotDone(t, runs[0], 2, "the sheet was answered")
	mustPhantom(t, env, "sheet", "answer", id, "--once")
	permResult(t, waitStep(t, runs[0], 2), false, "always-target-again")
}

// TestPermissionsMCPDeny: a denied call returns isError with the reason;
// the tab is turned away without a sheet until the turn-away is over
// (shortened through authz.TurnAwayEnv), then asks again.
func TestPermissionsMCPDeny(t *testing.T) {
	env := permUp(t, authz.TurnAwayEnv+"=3s")
	target := permTarget(t, env, "deny-target-marker")
	retry := permRead(target)
	retry["retry"] = true // refused at once until the turn-away is over
	tab, runs := permAgents(t, env, "denyclient", []map[string]any{permRead(target), permRead(target), retry})

	id := permSheet(t, env, "denyclient", tab, "read_output", "CAPABILITY_READ", "SCOPE_ALL", "tab "+target)["id"].(string)
	if out := mustPhantom(t, env, "sheet", "answer", id, "--deny"); !strings.Contains(out, "denied "+id) {
		t.Errorf("sheet answer printed %q", out)
	}
	permResult(t, waitStep(t, runs[0], 0), true, "read_output was refused", "the human denied read_output", "tab "+tab+" is turned away")
	l := waitStep(t, runs[0], 1)
	permResult(t, l, true, "read_output was refused", "refused without asking", "may ask again")
	if strings.Contains(resultOf(t, l).text(), "deny-target-marker") {
		t.Errorf("a refused read returned the tab's text: %s", l.Result)
	}

	// Once the turn-away is over the retried call raises the next sheet:
	// sheet ids count up, so no sheet was raised in between.
	id2 := permSheet(t, env, "denyclient", tab, "read_output", "CAPABILITY_READ", "SCOPE_ALL", "tab "+target)["id"].(string)
	if n, err := strconv.Atoi(strings.TrimPrefix(id, "s")); err != nil || id2 != "s"+strconv.Itoa(n+1) {
		t.Errorf("sheet after the turn-away is %s, want the one after %s", id2, id)
	}
	mustPhantom(t, env, "sheet", "answer", id2, "--once")
	permResult(t, waitStep(t, runs[0], 2), false, "deny-target-marker")
}

// TestPermissionsMCPQueue: two agents ask at once; one sheet is on screen,
// the other waits behind it and comes on screen when the first is answered.
func TestPermissionsMCPQueue(t *testing.T) {
	env, _ := up(t)
	target := permTarget(t, env, "queue-target-marker")
	start := filepath.Join(t.TempDir(), "start")
	script := []map[string]any{{"op": "wait", "file": start}, permRead(target)}
	tabA, runsA := permAgents(t, env, "alpha", script)
	tabB, runsB := permAgents(t, env, "beta", script)
	permConnected(t, runsA[0])
	permConnected(t, runsB[0])
	os.WriteFile(start, nil, 0o600)

	var list []map[string]any
	eventually(t, "two sheets", func() (bool, string) {
		list = sheetsJSON(t, env)
		return len(list) == 2, fmt.Sprint(list)
	})
	first, second := list[0], list[1]
	if first["waiting_behind"] != 1.0 || second["waiting_behind"] != 0.0 {
		t.Errorf("sheets = %v, want the first with one waiting behind it", list)
	}
	tabOf := map[string]string{"alpha": tabA, "beta": tabB}
	runOf := map[string]func() []agentLine{"alpha": runsA[0], "beta": runsB[0]}
	c1, _ := first["client"].(string)
	c2, _ := second["client"].(string)
	if !(c1 == "alpha" && c2 == "beta" || c1 == "beta" && c2 == "alpha") {
		t.Fatalf("sheets = %v, want one of alpha and one of beta", list)
	}
	for _, s := range list {
		c := s["client"].(string)
		if s["tab_id"] != tabOf[c] || s["tool"] != "read_output" || s["capability"] != "CAPABILITY_READ" ||
			!strings.Contains(fmt.Sprint(s["subject"]), "tab "+target) {
			t.Errorf("sheet of %s = %v", c, s)
		}
	}

	mustPhantom(t, env, "sheet", "answer", first["id"].(string), "--once")
	permResult(t, waitStep(t, runOf[c1], 1), false, "queue-target-marker")
	eventually(t, "the second sheet to come on screen", func() (bool, string) {
		list = sheetsJSON(t, env)
		return len(list) == 1 && list[0]["id"] == second["id"] && list[0]["waiting_behind"] == 0.0, fmt.Sprint(list)
	})
	permNotDone(t, runOf[c2], 1, "its sheet was answered")
	mustPhantom(t, env, "sheet", "answer", second["id"].(string), "--once")
	permResult(t, waitStep(t, runOf[c2], 1), false, "queue-target-marker")
}

// TestPermissionsMCPRunCommand: run_command asks for `run`; the command
// runs in an idle shell tab, and a busy tab refuses it naming its program.
func TestPermissionsMCPRunCommand(t *testing.T) {
	env, _ := up(t)
	shell := tabs(t, env)[0]["id"].(string)
	busy := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "busy", "--", "sleep", "100"))
	eventually(t, "the shell tab idle and the busy tab running sleep", func() (bool, string) {
		ts := tabs(t, env)
		sh, b := tabByID(ts, shell), tabByID(ts, busy)
		return sh["idle"] == true && b["idle"] == false && runs(tabProcesses(t, env, b), "sleep"), fmt.Sprint(ts)
	})
	// The shell expands the arithmetic: the output differs from the
	// typed line.
	command := "echo run-$((6*7))-marker"
	tab, runsA := permAgents(t, env, "runclient", []map[string]any{
		{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": shell, "command": command}},
		{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": busy, "command": "echo never"}},
	})
	id := permSheet(t, env, "runclient", tab, "run_command", "CAPABILITY_RUN", "SCOPE_ALL", strconv.Quote(command)+" typed into tab "+shell)["id"].(string)
	mustPhantom(t, env, "sheet", "answer", id, "--once")
	permResult(t, waitStep(t, runsA[0], 0), false, `"id":"`+shell+`"`)
	eventually(t, "the command's output in the shell tab", func() (bool, string) {
		out := mustPhantom(t, env, "read", shell)
		return strings.Contains(out, "run-42-marker"), out
	})

	// A busy tab is refused before any sheet (the call would fail
	// anyway), and the reason reaches the agent.
	permResult(t, permStepNoSheet(t, env, runsA[0], 1), true, "run_command", "busy", `"sleep"`)
	if out := mustPhantom(t, env, "read", busy); strings.Contains(out, "echo never") {
		t.Errorf("the busy tab got the command typed:\n%s", out)
	}
}

// TestPermissionsShellRead: `phantom read` of another tab, run inside a
// Phantom tab, asks the human for its caller (client "shell"); a denial
// reaches the command as a failure.
func TestPermissionsShellRead(t *testing.T) {
	env, _ := up(t)
	target := permTarget(t, env, "shell-target-marker")
	reader := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "reader", "--", "sh", "-c",
		`"$0" read "$1"; echo rc=$?; sleep 100`, phantomBin, target))
	id := permSheet(t, env, "shell", reader, "read_output", "CAPABILITY_READ", "SCOPE_ALL", "tab "+target)["id"].(string)
	mustPhantom(t, env, "sheet", "answer", id, "--deny")
	var out string
	eventually(t, "the refusal and rc=5 in the reader tab", func() (bool, string) {
		out = mustPhantom(t, env, "read", reader)
		return strings.Contains(out, "rc="), out
	})
	if !strings.Contains(out, "rc=5") || !strings.Contains(out, "the human denied read_output") ||
		strings.Contains(out, "shell-target-marker") {
		t.Errorf("reader tab shows:\n%s\nwant the denial and rc=5 (refused), not the target's text", out)
	}
}
