package authz

import (
	"context"
	"sort"
	"testing"
	"time"

	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// TestAuthorizeRunAndRead: run_command with wait_seconds needs run and
// read; one sheet asks for both, and its answer grants both, so a later
// read_output (or run and wait) asks nothing more. A standing run grant
// without read still raises a sheet for a run that waits, not for one
// that does not.
func TestAuthorizeRunAndRead(t *testing.T) {
	f := newFixture(t, "")
	wait := `{"terminal_id":"t3","command":"make test","wait_seconds":30}`
	ch := f.authorize(req("c1", "t1", "run_command", wait))
	s := f.waitSheets(t, 1)
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ALWAYS, authzv1.Scope_SCOPE_UNSPECIFIED)
	if r := <-ch; !r.GetAllowed() {
		t.Fatalf("run and wait after the answer: %v", r)
	}
	gs, err := f.svc.ListGrants(context.Background(), &authzv1.ListGrantsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var caps []string
	for _, g := range gs.GetGrants() {
		caps = append(caps, g.GetCapability().String())
	}
	sort.Strings(caps)
	if len(caps) != 2 || caps[0] != "CAPABILITY_READ" || caps[1] != "CAPABILITY_RUN" {
		t.Errorf("grants after one answer = %v, want one read and one run", caps)
	}
	for _, r := range []*authzv1.AuthorizeRequest{
		req("c1", "t1", "read_output", `{"terminal_id":"t3","last_command":true}`),
		req("c1", "t1", "run_command", wait),
	} {
		select {
		case resp := <-f.authorize(r):
			if !resp.GetAllowed() {
				t.Errorf("%s after the answer: %v", r.GetTool(), resp)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s raised a sheet after the answer", r.GetTool())
		}
	}

	// Another client with only a run grant: waiting asks again.
	ls := req("c2", "t1", "run_command", `{"terminal_id":"t3","command":"ls"}`)
	ls.Caller.Client = "codex"
	g := f.authorize(ls)
	s = f.waitSheets(t, 1)
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ALWAYS, authzv1.Scope_SCOPE_UNSPECIFIED)
	if r := <-g; !r.GetAllowed() {
		t.Fatalf("run after the answer: %v", r)
	}
	if r := <-f.authorize(ls); !r.GetAllowed() {
		t.Errorf("run again with the run grant: %v", r)
	}
	waitAsCodex := req("c2", "t1", "run_command", wait)
	waitAsCodex.Caller.Client = "codex"
	w := f.authorize(waitAsCodex)
	s = f.waitSheets(t, 1)
	if s[0].GetCapability() != mcpv1.Capability_CAPABILITY_RUN {
		t.Errorf("sheet for run and wait with only a run grant: %v", s[0])
	}
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_DENY, authzv1.Scope_SCOPE_UNSPECIFIED)
	if r := <-w; r.GetAllowed() {
		t.Errorf("run and wait allowed after a denial: %v", r)
	}
}
