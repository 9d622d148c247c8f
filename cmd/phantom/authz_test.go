package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// sheetsJSON is `phantom sheet list --json`.
func sheetsJSON(t *testing.T, env *testenv.Env) []map[string]any {
	t.Helper()
	var l struct {
		Sheets []map[string]any `json:"sheets"`
	}
	out := mustPhantom(t, env, "sheet", "list", "--json")
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("sheet list --json: %v\n%s", err, out)
	}
	return l.Sheets
}

// grantsJSON is `phantom grants --json`.
func grantsJSON(t *testing.T, env *testenv.Env) []map[string]any {
	t.Helper()
	var l struct {
		Grants []map[string]any `json:"grants"`
	}
	out := mustPhantom(t, env, "grants", "--json")
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("grants --json: %v\n%s", err, out)
	}
	return l.Grants
}

// waitSheet waits for one sheet for tool and returns its id.
func waitSheet(t *testing.T, env *testenv.Env, tool string) string {
	t.Helper()
	var id string
	eventually(t, "a sheet for "+tool, func() (bool, string) {
		s := sheetsJSON(t, env)
		if len(s) == 1 && s[0]["tool"] == tool {
			id, _ = s[0]["id"].(string)
		}
		return id != "", mustPhantom(t, env, "sheet", "list")
	})
	return id
}

// TestPermissions drives authz end to end: a caller outside tabs asks over
// gRPC, the human answers with the CLI, an answer from inside a tab is
// refused, and always grants survive `phantom down` and `up`.
func TestPermissions(t *testing.T) {
	env, out := up(t)
	if !strings.Contains(out, "started authz") {
		t.Fatalf("phantom up printed:\n%s\nwant it to start authz", out)
	}
	first, _ := settledShell(t, env) // run_command into a busy tab fails before any sheet

	cc, err := daemon.Dial(env.Layout.DaemonAddr("authz"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ac := authzv1.NewAuthzServiceClient(cc)
	// Callers outside Phantom are told apart by client name (a turn-away
	// holds across their connections), so the denied client is its own.
	authorize := func(client, conn, tool, args string) <-chan *authzv1.AuthorizeResponse {
		ch := make(chan *authzv1.AuthorizeResponse, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			resp, err := ac.Authorize(ctx, &authzv1.AuthorizeRequest{
				Caller: &authzv1.Caller{Client: client, ConnectionId: conn, Pid: 1, Program: "/outside/" + client}, Tool: tool, ArgumentsJson: args})
			if err != nil {
				resp = &authzv1.AuthorizeResponse{Reason: "rpc error: " + err.Error()}
			}
			ch <- resp
		}()
		return ch
	}
	wait := func(ch <-chan *authzv1.AuthorizeResponse) *authzv1.AuthorizeResponse {
		t.Helper()
		select {
		case r := <-ch:
			return r
		case <-time.After(testenv.WaitTimeout):
			t.Fatal("Authorize did not return")
			return nil
		}
	}

	// A read from outside any tab raises a sheet.
	readArgs := `{"terminal_id":"` + first + `"}`
	pending := authorize("e2e", "conn-1", "read_output", readArgs)
	id := waitSheet(t, env, "read_output")
	s := sheetsJSON(t, env)[0]
	if s["capability"] != "CAPABILITY_READ" || s["reach"] != "SCOPE_ALL" || s["client"] != "e2e" ||
		!strings.Contains(s["subject"].(string), "tab "+first) {
		t.Errorf("sheet = %v", s)
	}

	// An answer from inside a tab is refused, and says why.
	inTab := strings.TrimSpace(mustPhantom(t, env, "new", "--", phantomBin, "sheet", "answer", id, "--once"))
	eventually(t, "the in-tab answer to be refused", func() (bool, string) {
		out := mustPhantom(t, env, "read", inTab)
		return strings.Contains(out, "refused inside Phantom"), out
	})
	if len(sheetsJSON(t, env)) != 1 {
		t.Fatal("the sheet went away after an answer from inside a tab")
	}

	// The human, outside Phantom, allows once.
	out = mustPhantom(t, env, "sheet", "answer", id, "--once")
	if !strings.Contains(out, "allowed "+id+" once") {
		t.Errorf("sheet answer printed %q", out)
	}
	resp := wait(pending)
	if !resp.GetAllowed() || resp.GetGrantId() == "" {
		t.Fatalf("after --once: %v", resp)
	}
	gs := grantsJSON(t, env)
	if len(gs) != 1 || gs[0]["id"] != resp.GetGrantId() || gs[0]["always"] != false || gs[0]["connection_id"] != "conn-1" {
		t.Fatalf("grants = %v, want the once grant of conn-1", gs)
	}
	// Covered now on that connection, without a sheet.
	if r := wait(authorize("e2e", "conn-1", "read_output", readArgs)); !r.GetAllowed() {
		t.Errorf("second read on conn-1: %v", r)
	}
	mustPhantom(t, env, "grants", "revoke", resp.GetGrantId())
	if gs := grantsJSON(t, env); len(gs) != 0 {
		t.Errorf("grants after revoke: %v", gs)
	}

	// A denied connection is turned away without a new sheet.
	pending = authorize("e2e-denied", "conn-2", "run_command", `{"terminal_id":"`+first+`","command":"echo hi"}`)
	id = waitSheet(t, env, "run_command")
	mustPhantom(t, env, "sheet", "answer", id, "--deny")
	if r := wait(pending); r.GetAllowed() || !strings.Contains(r.GetReason(), "denied") {
		t.Errorf("denied: %v", r)
	}
	if r := wait(authorize("e2e-denied", "conn-2", "run_command", `{"terminal_id":"`+first+`","command":"echo hi"}`)); r.GetAllowed() ||
		!strings.Contains(r.GetReason(), "may ask again") {
		t.Errorf("turned away: %v", r)
	}

	// Always, widened to all, is written down and survives a restart.
	pending = authorize("e2e", "conn-3", "run_command", `{"terminal_id":"`+first+`","command":"ls"}`)
	id = waitSheet(t, env, "run_command")
	mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all")
	resp = wait(pending)
	if !resp.GetAllowed() {
		t.Fatalf("after --always: %v", resp)
	}
	mustPhantom(t, env, "down")
	mustPhantom(t, env, "up")
	gs = grantsJSON(t, env)
	if len(gs) != 1 || gs[0]["id"] != resp.GetGrantId() || gs[0]["always"] != true || gs[0]["scope"] != "SCOPE_ALL" {
		t.Fatalf("grants after down/up = %v", gs)
	}
	// The new shell must be at its prompt: run_command into a busy tab
	// fails before any grant is looked at.
	first, _ = settledShell(t, env)
	cc2, err := daemon.Dial(env.Layout.DaemonAddr("authz"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc2.Close()
	ac = authzv1.NewAuthzServiceClient(cc2)
	if r := wait(authorize("e2e", "conn-4", "run_command", `{"terminal_id":"`+first+`","command":"pwd"}`)); !r.GetAllowed() || r.GetGrantId() != resp.GetGrantId() {
		t.Errorf("after restart: %v, want covered by %s", r, resp.GetGrantId())
	}
}
