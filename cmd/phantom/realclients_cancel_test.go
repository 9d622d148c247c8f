package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypeScriptSDKCancel: the TypeScript SDK client, in a real sandboxed
// tab, aborts a waiting read_output with an AbortSignal; the SDK sends
// notifications/cancelled, and no response to that request ever comes
// through the bridge, while the next call is answered.
func TestTypeScriptSDKCancel(t *testing.T) {
	nc := realClients(t)
	env, _ := up(t)
	target := permTarget(t, env, "cancel-target-marker")
	project := filepath.Join(env.Home, "project")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	config, server, client := mcpConfig(t, env, project)
	script := filepath.Join(filepath.Dir(nc.sdkClient), "sdk-cancel.mjs")
	tab, run := clientTab(t, env, project, "sdk-cancel", []string{nc.node, script, config, server, target})
	id := clientSheet(t, env, run, 0, client, tab, project, "read_output", target)
	mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all")
	r := waitRun(t, run, 0)
	var rep struct {
		Failures          []string `json:"failures"`
		CancelSent        bool     `json:"cancel_sent"`
		CancelledID       any      `json:"cancelled_id"`
		CancelledAnswered bool     `json:"cancelled_answered"`
		LaterAnswered     bool     `json:"later_answered"`
		AbortError        string   `json:"abort_error"`
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("the client's report: %v\n%v", err, r)
	}
	t.Logf("cancelled request %v: %s", rep.CancelledID, rep.AbortError)
	if r.code != 0 || len(rep.Failures) > 0 || !rep.CancelSent || rep.CancelledAnswered || !rep.LaterAnswered {
		t.Errorf("TypeScript SDK client: failures %q, cancel sent %v, cancelled request %v answered %v, later call answered %v\n%v",
			rep.Failures, rep.CancelSent, rep.CancelledID, rep.CancelledAnswered, rep.LaterAnswered, r)
	}
}
