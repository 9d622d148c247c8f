package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAdversarialGrantsFile: an agent with a shell writes itself a grant
// into grants.json (the file is its user's), then tries to put it in force
// with the CLI and with grpcurl. Each is refused, the grant stays pending
// and covers nothing, and the human's shell is untouched.
func TestAdversarialGrantsFile(t *testing.T) {
	env := adversaryUp(t)
	grpcurl := grpcurlPath(t)
	human, humanOut := settledShell(t, env)
	ac := newAuthzCaller(t, env)
	// A grant the human gave, so the file exists as authz writes it.
	ac.grantAlways(env, "e2e", "c1", "read_output", `{"terminal_id":"`+human+`"}`)
	path := filepath.Join(env.Layout.State, "grants.json")
	a := newAttacker(t, env, "attacker")

	forge := `import json,sys
p=sys.argv[1]; f=json.load(open(p))
f["grants"].append({"id":"gpwn","client":"shell","capability":"run","scope":"all","project":"","created":"2026-11-30T12:00:00Z"})
open(p+".tmp","w").write(json.dumps(f)); import os; os.rename(p+".tmp",p); print("forged")`
	if r := a.run(shellCmd("python3", "-c", forge, path)); !strings.Contains(r.out, "forged") {
		t.Fatalf("the attacker could not even write the file, so nothing below proves anything: %v", r)
	}
	pending := func(attack string) {
		t.Helper()
		gs := grantsJSON(t, env)
		if !slices.ContainsFunc(gs, func(g map[string]any) bool { return g["id"] == "gpwn" && g["pending"] == true }) {
			t.Errorf("after %s, the forged grant is not pending: %v", attack, gs)
		}
	}
	eventually(t, "authz to see the forged grant", func() (bool, string) {
		gs := grantsJSON(t, env)
		return slices.ContainsFunc(gs, func(g map[string]any) bool { return g["id"] == "gpwn" }), ""
	})
	pending("writing it into grants.json")

	for _, c := range []struct{ name, cmd string }{
		{"phantom grants accept", shellCmd(phantomBin, "grants", "accept", "gpwn")},
		{"grpcurl AcceptGrant", shellCmd("timeout", "10", grpcurl, "-plaintext", "-unix", "-d", `{"grant_id":"gpwn"}`,
			env.Layout.DaemonSocket("authz"), "phantom.authz.v1.AuthzService/AcceptGrant")},
	} {
		r := a.run(c.cmd)
		if !refused(r) {
			t.Errorf("%s from tab %s: want a refusal, got %v", c.name, a.tab, r)
		}
		pending(c.name + " from a tab")
	}

	// The forged grant covers nothing: typing into the human's shell still
	// needs the human, who says no.
	j := a.start(shellCmd("timeout", "60", grpcurl, "-plaintext", "-unix", "-d",
		`{"terminal_id":"`+human+`","command":"echo PWNED-BY-FORGED-GRANT"}`,
		env.Layout.DaemonSocket("terminald"), "phantom.terminal.v1.TerminalService/RunCommand"))
	deny(t, env, asksHuman(t, env, j, a.tab, "run_command", "RunCommand under the forged grant"))
	if r := j.wait(); !refused(r) {
		t.Errorf("RunCommand under the forged grant: want a refusal, got %v", r)
	}
	unchangedOutput(t, env, human, humanOut, "the forged grant")
}
