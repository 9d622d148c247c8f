package main

// Issue 24, items 1 and 3 end to end: a call that waits sends progress
// saying what it waits for, to the Go SDK client in a tab and to the
// TypeScript SDK client (whose request timeout progress keeps resetting),
// and a language server that cannot start fails the calls waiting on it
// at once with its own error.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/gateway"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// progressEveryForTests paces the gateway's progress in these tests, so
// that a wait of a few seconds sees several notifications.
const progressEveryForTests = "300ms"

// waitsUp starts an instance whose gateway sends progress every
// progressEveryForTests, with bash as its shell and config.json (if not
// empty) as the human's settings, and returns its first tab once idle.
func waitsUp(t *testing.T, config string) (*testenv.Env, string) {
	t.Helper()
	return shellUpWith(t, "/usr/bin/bash", func(env *testenv.Env) {
		env.Vars = append(env.Vars, gateway.ProgressEveryEnv+"="+progressEveryForTests)
		if config == "" {
			return
		}
		if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(env.Layout.Config, "config.json"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	})
}

// progressNote is one notifications/progress the test agent received.
type progressNote struct {
	Token    string  `json:"progressToken"`
	Progress float64 `json:"progress"`
	Message  string  `json:"message"`
}

// checkProgress checks that step l's call got progress before its result,
// with rising values, and one naming the wait (want).
func checkProgress(t *testing.T, l agentLine, want ...string) {
	t.Helper()
	named := false
	for i, p := range l.Progress {
		if i > 0 && p.Progress <= l.Progress[i-1].Progress {
			t.Errorf("step %d: progress %v after %v: values must rise", l.Step, p.Progress, l.Progress[i-1].Progress)
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(p.Message, w)
		}
		named = named || ok
	}
	if !named {
		t.Errorf("step %d: no progress before the result said %q; got %+v", l.Step, want, l.Progress)
	}
}

// TestWaitProgressMCP: the Go SDK client in a real tab gets progress while
// run_command waits for a command and while read_output waits for a line,
// each naming what it waits for; and list_diagnostics and
// restart_language_server of a server that cannot start (one that exits
// at once, one whose command does not exist) answer at once with the
// server's own error.
func TestWaitProgressMCP(t *testing.T) {
	env, tab := waitsUp(t, `{"language_servers": {
		"broken": {"command": ["sh", "-c", "echo boom-from-server >&2; exit 3"], "extensions": ["broken"]},
		"missing": {"command": ["/nonexistent/phantom-lsp"], "extensions": ["missing"]}}}`)
	ws := filepath.Join(env.Home, "ws")
	lspWrite(t, ws, "a.broken", "x\n")
	lspWrite(t, ws, "b.missing", "x\n")
	run := "sleep 3; echo slept-marker"
	agent, read := runAgentIn(t, env, ws, "waits-agent", []map[string]any{
		func() map[string]any { m := runWait(tab, run, 30); m["progress"] = true; return m }(),                                     // 0
		{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": tab, "command": "sleep 2; echo ready-marker"}}, // 1
		{"op": "call", "tool": "read_output", "progress": true, "args": map[string]any{ // 2
			"terminal_id": tab, "cursor": "$STEP:1.next_cursor", "wait_for": "^ready-marker$", "wait_seconds": 30}},
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": "a.broken", "wait_ms": 30000}},       // 3
		{"op": "call", "tool": "list_language_servers"},                                                                // 4
		{"op": "call", "tool": "restart_language_server", "args": map[string]any{"server_id": "$STEP:4.servers.0.id"}}, // 5
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": "b.missing", "wait_ms": 30000}},      // 6
	})
	id := permSheet(t, env, "waits-agent", agent, "run_command", "CAPABILITY_RUN", "SCOPE_ALL", "and read")["id"].(string)
	mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all")

	var r runResult
	l := waitStep(t, read, 0)
	structured(t, l, &r)
	checkFinished(t, run, r, 0, "slept-marker")
	checkProgress(t, l, "run_command is waiting for `"+run+"` to finish in tab "+tab+" (", "of at most 30 s)")

	var rd readResult
	l = waitStep(t, read, 2)
	structured(t, l, &rd)
	if !rd.WaitMatched || len(rd.Lines) == 0 || rd.Lines[0] != "ready-marker" {
		t.Errorf("read_output wait_for ready-marker = %+v, want it matched", rd)
	}
	checkProgress(t, l, "read_output is waiting for `^ready-marker$` in tab "+tab, "of at most 30 s)")

	for _, c := range []struct {
		step int
		want []string
	}{
		{3, []string{"list_diagnostics", "cannot start", "boom-from-server", "exit status 3"}},
		{5, []string{"restart_language_server", "cannot start", "boom-from-server", "exit status 3"}},
		{6, []string{"list_diagnostics", "cannot start", "/nonexistent/phantom-lsp"}},
	} {
		res := resultOf(t, waitStep(t, read, c.step))
		for _, w := range c.want {
			if !res.IsError || !strings.Contains(res.text(), w) {
				t.Errorf("step %d = %v %q; want an error saying %q", c.step, res.IsError, res.text(), w)
			}
		}
	}
}

// TestWaitProgressTypeScriptSDK: the TypeScript SDK client, with a
// request timeout shorter than the wait and resetTimeoutOnProgress, gets
// through a read_output that waits 3 s (for a line that never comes), its
// onprogress seeing what the call waits for; the answer says the wait
// timed out, as a result, not an error.
func TestWaitProgressTypeScriptSDK(t *testing.T) {
	nc := realClients(t)
	t.Log(nc.versions)
	env, _ := waitsUp(t, "")
	target := permTarget(t, env, "ts-progress-target")
	project := filepath.Join(env.Home, "project")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	config, server, client := mcpConfig(t, env, project)
	tab, run := clientTab(t, env, project, "sdk-client", []string{nc.node, nc.sdkClient, config, server, target, "[]", "^never-printed-line$"})
	id := clientSheet(t, env, run, 0, client, tab, project, "read_output", target)
	mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all")
	r := waitRun(t, run, 0)
	rep := sdkReportOf(t, r)
	for _, f := range rep.Failures {
		t.Errorf("SDK client: %s", f)
	}
	c := rep.Calls["read_output_wait"]
	if c.Error != "" || c.IsError || c.StructuredContent["wait_timed_out"] != true {
		t.Errorf("the waiting read_output = %+v; want a result saying the wait timed out", c)
	}
	named := false
	for i, p := range c.Progress {
		if i > 0 && p.Progress <= c.Progress[i-1].Progress {
			t.Errorf("progress %v after %v: values must rise", p.Progress, c.Progress[i-1].Progress)
		}
		named = named || strings.Contains(p.Message, "read_output is waiting for `^never-printed-line$` in tab "+target)
	}
	if !named {
		t.Errorf("onprogress saw no progress naming the wait: %+v", c.Progress)
	}
	if t.Failed() {
		t.Logf("the SDK client's run:\n%v", r)
	}
}
