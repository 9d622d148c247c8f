package main

import (
	"strings"
	"testing"
)

// TestAttachGrantsView: in a real outer terminal, prefix g opens the
// grants view, which lists a standing grant with its program and scope
// and the decision it just allowed; d then y revokes it, `phantom grants`
// no longer lists it, the agent's next call asks again, and the view
// shows the revocation among the last decisions.
func TestAttachGrantsView(t *testing.T) {
	in := startPhantom(t)
	tab := in.list(t)[0].GetId()
	ac := newAuthzCaller(t, in.env)
	read := `{"terminal_id":"` + tab + `"}`
	id := ac.grantAlways(in.env, "e2e", "c1", "read_output", read)
	if r := ac.wait(ac.ask("e2e", "c2", "read_output", read)); !r.GetAllowed() || r.GetGrantId() != id {
		t.Fatalf("a call under the standing grant %s: %v", id, r)
	}

	o := in.attachOuter(t, 120, 40, nil)
	o.waitText("1:")
	o.prefix("g")
	o.waitText("grants (prefix g)")
	o.waitText(id + "  always  e2e may read, scope all")
	o.waitText("program /outside/e2e")
	// The decision that just happened; the audit log is written behind
	// the decision, so r reads it again until it is there.
	refreshUntil(o, "the allowed read in the last decisions", func(s string) bool {
		return strings.Contains(s, "allowed") && strings.Contains(s, "e2e read_output → "+tab)
	})

	o.keys("d")
	o.waitText("revoke " + id + " (e2e may read, scope all)? y revoke")
	o.keys("y")
	o.waitText("No grants: agents are asked")
	refreshUntil(o, "the revocation in the last decisions", func(s string) bool {
		return strings.Contains(s, "revoked") && strings.Contains(s, "grant "+id)
	})
	if out := mustPhantom(t, in.env, "grants"); strings.Contains(out, id) {
		t.Fatalf("phantom grants still lists %s after the view revoked it:\n%s", id, out)
	}
	// The agent's next call asks again.
	ch := ac.ask("e2e", "c3", "read_output", read)
	waitSheet(t, in.env, "read_output")
	ac.end("c3")
	if r := ac.wait(ch); r.GetAllowed() {
		t.Fatalf("the call after the revocation was allowed: %v", r)
	}
	// The audit log names the attach client the revocation was relayed for.
	if out := mustPhantom(t, in.env, "audit"); !strings.Contains(out, "grant_revoked") || !strings.Contains(out, ", for pid ") {
		t.Errorf("phantom audit does not show the revocation relayed for the attach client:\n%s", out)
	}

	o.keys("Escape")
	o.waitFor("the view closed", func(s string) bool { return !strings.Contains(s, "grants (prefix g)") })
}

// refreshUntil presses r in the grants view until cond holds.
func refreshUntil(o *outer, what string, cond func(string) bool) {
	o.t.Helper()
	eventually(o.t, what, func() (bool, string) {
		s := o.screen()
		if cond(s) {
			return true, ""
		}
		o.keys("r")
		return false, "the outer terminal shows:\n" + s
	})
}
