package main

// Grants you can trust, end to end: grants.json edited, removed, made
// world-writable, symlinked, corrupted or given an unsafe folder while
// authz runs; a revocation on a full disk.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// authzCaller asks authz for decisions as a caller outside any tab.
type authzCaller struct {
	t  *testing.T
	ac authzv1.AuthzServiceClient
}

func newAuthzCaller(t *testing.T, env *testenv.Env) *authzCaller {
	t.Helper()
	cc, err := daemon.Dial(env.Layout.DaemonAddr("authz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return &authzCaller{t: t, ac: authzv1.NewAuthzServiceClient(cc)}
}

// ask starts one Authorize call in the background.
func (a *authzCaller) ask(client, conn, tool, args string) <-chan *authzv1.AuthorizeResponse {
	ch := make(chan *authzv1.AuthorizeResponse, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		resp, err := a.ac.Authorize(ctx, &authzv1.AuthorizeRequest{
			Caller: &authzv1.Caller{Client: client, ConnectionId: conn, Pid: 1, Program: "/outside/" + client}, Tool: tool, ArgumentsJson: args})
		if err != nil {
			resp = &authzv1.AuthorizeResponse{Reason: "rpc error: " + err.Error()}
		}
		ch <- resp
	}()
	return ch
}

// wait waits for an Authorize call started by ask.
func (a *authzCaller) wait(ch <-chan *authzv1.AuthorizeResponse) *authzv1.AuthorizeResponse {
	a.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(90 * time.Second):
		a.t.Fatal("Authorize did not return")
		return nil
	}
}

// end withdraws a connection's sheets, as the gateway does when it closes.
func (a *authzCaller) end(conn string) {
	a.t.Helper()
	if _, err := a.ac.EndConnection(context.Background(), &authzv1.EndConnectionRequest{ConnectionId: conn}); err != nil {
		a.t.Fatal(err)
	}
}

// grantAlways asks, and answers always with scope all from the CLI; it
// returns the grant id.
func (a *authzCaller) grantAlways(env *testenv.Env, client, conn, tool, args string) string {
	a.t.Helper()
	ch := a.ask(client, conn, tool, args)
	id := waitSheet(a.t, env, tool)
	mustPhantom(a.t, env, "sheet", "answer", id, "--always", "--scope", "all")
	r := a.wait(ch)
	if !r.GetAllowed() {
		a.t.Fatalf("after --always: %v", r)
	}
	return r.GetGrantId()
}

// fileGrants reads grants.json: the ids it holds.
func fileGrants(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Grants []struct {
			ID string `json:"id"`
		} `json:"grants"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	var ids []string
	for _, g := range f.Grants {
		ids = append(ids, g.ID)
	}
	return ids
}

// editGrants rewrites grants.json as an editor saves: a new file renamed
// over the old one. keep filters the grants; add appends raw ones.
func editGrants(t *testing.T, path string, keep func(id string) bool, add ...map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, g := range f["grants"].([]any) {
		if keep(g.(map[string]any)["id"].(string)) {
			kept = append(kept, g)
		}
	}
	for _, g := range add {
		kept = append(kept, g)
	}
	f["grants"] = kept
	out, _ := json.MarshalIndent(f, "", "  ")
	tmp := path + "~"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestGrantsFileByHand: a revocation by hand takes effect and is not
// undone by the next "always"; a removed file revokes everything; an
// unsafe or invalid file refuses everything, says why in `phantom status`,
// `phantom grants` and the refusal, and works again once fixed.
func TestGrantsFileByHand(t *testing.T) {
	env, _ := up(t)
	a := newAuthzCaller(t, env)
	first, _ := tabs(t, env)[0]["id"].(string)
	read := `{"terminal_id":"` + first + `"}`
	path := filepath.Join(env.Layout.State, "grants.json")

	// An always grant, then removed by hand while a grant the human wrote
	// is added: the next call asks again.
	old := a.grantAlways(env, "e2e", "c1", "read_output", read)
	hand := map[string]any{"id": "ghand", "client": "other", "capability": "read", "scope": "tab", "project": "",
		"created": "2026-11-30T12:00:00Z"}
	editGrants(t, path, func(id string) bool { return id != old }, hand)
	if gs := grantsJSON(t, env); len(gs) != 1 || gs[0]["id"] != "ghand" || gs[0]["pending"] != true {
		t.Fatalf("grants after the hand edit = %v, want only ghand, pending until authz restarts", gs)
	}
	if out := mustPhantom(t, env, "status"); !strings.Contains(out, "1 added to the file by hand and pending") {
		t.Errorf("status does not show the pending grant:\n%s", out)
	}
	ch := a.ask("e2e", "c2", "read_output", read)
	waitSheet(t, env, "read_output") // asks again: the revocation holds
	a.end("c2")
	a.wait(ch)
	// The next always keeps the human's edit.
	next := a.grantAlways(env, "e2e", "c3", "read_output", read)
	if got := fileGrants(t, path); !slices.Equal(got, []string{"ghand", next}) {
		t.Fatalf("grants.json after the next always = %v, want [ghand %s]: the hand edit undone", got, next)
	}
	// The human accepts the grant added by hand.
	if out := mustPhantom(t, env, "grants", "accept", "ghand"); !strings.Contains(out, "accepted ghand") {
		t.Errorf("grants accept printed %q", out)
	}
	if gs := grantsJSON(t, env); !slices.ContainsFunc(gs, func(g map[string]any) bool { return g["id"] == "ghand" && g["pending"] == false }) {
		t.Errorf("ghand still pending after accept: %v", gs)
	}

	// Removed: everything revoked.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if gs := grantsJSON(t, env); len(gs) != 0 {
		t.Fatalf("grants after removing the file = %v", gs)
	}
	good := a.grantAlways(env, "e2e", "c4", "read_output", read)

	stateDir := env.Layout.State
	tests := []struct {
		name   string
		spoil  func(t *testing.T)
		fix    func(t *testing.T)
		reason string
	}{
		{"world-writable", func(t *testing.T) { must(t, os.Chmod(path, 0o666)) }, func(t *testing.T) { must(t, os.Chmod(path, 0o600)) },
			"writable by its group or others (mode 0666)"},
		{"group-writable folder", func(t *testing.T) { must(t, os.Chmod(stateDir, 0o770)) },
			func(t *testing.T) { must(t, os.Chmod(stateDir, 0o700)) }, "chmod 700"},
		{"symlink", func(t *testing.T) {
			must(t, os.Rename(path, path+".real"))
			must(t, os.Symlink(path+".real", path))
		}, func(t *testing.T) {
			must(t, os.Remove(path))
			must(t, os.Rename(path+".real", path))
		}, "symbolic link"},
		{"owned by someone else", func(t *testing.T) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give the file away")
			}
			must(t, os.Chown(path, 65534, 65534))
		}, func(t *testing.T) { must(t, os.Chown(path, os.Getuid(), os.Getgid())) }, "owned by uid 65534"},
		{"corrupt", func(t *testing.T) {
			must(t, os.Rename(path, path+".good"))
			must(t, os.WriteFile(path, []byte(`{"version":1,"grants":[{"id":`), 0o600))
		}, func(t *testing.T) { must(t, os.Rename(path+".good", path)) }, "is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spoil(t)
			fixed := false
			defer func() {
				if !fixed { // a failure half-way: leave the file usable for the next case
					tt.fix(t)
				}
			}()
			// status says so, in words and in JSON.
			var st struct {
				Permissions struct {
					GrantsProblem string `json:"grants_problem"`
				} `json:"permissions"`
			}
			eventually(t, "status to show the problem", func() (bool, string) {
				out := mustPhantom(t, env, "status", "--json")
				json.Unmarshal([]byte(out), &st)
				return strings.Contains(st.Permissions.GrantsProblem, tt.reason), out
			})
			if out := mustPhantom(t, env, "status"); !strings.Contains(out, "grants      REFUSED") || !strings.Contains(out, tt.reason) {
				t.Errorf("phantom status does not show the refusal:\n%s", out)
			}
			if r := phantom(t, env, "grants"); r.code == 0 || !strings.Contains(r.stderr, tt.reason) {
				t.Errorf("phantom grants with a refused file:\n%v", r)
			}
			// Nothing is granted from it: the call that the good grant
			// covered is refused without a sheet.
			r := a.wait(a.ask("e2e", "c5", "read_output", read))
			if r.GetAllowed() || !strings.Contains(r.GetReason(), tt.reason) || !strings.Contains(r.GetReason(), "grants nothing") {
				t.Errorf("read under a refused grants file: %v", r)
			}
			tt.fix(t)
			fixed = true
			r = a.wait(a.ask("e2e", "c5", "read_output", read))
			if !r.GetAllowed() || r.GetGrantId() != good {
				t.Errorf("read after the fix: %v, want allowed by %s", r, good)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRevokeOnFullDisk: with the state directory on a full tmpfs, `phantom
// grants revoke` revokes in memory, says the file could not be updated
// and fails; status says so; commands are refused because the audit log
// cannot be written; once there is room, authz writes the file by itself.
func TestRevokeOnFullDisk(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	env := testenv.New(t)
	state := env.Layout.State
	must(t, os.MkdirAll(state, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", state).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", state).Run() })
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	mustPhantom(t, env, "up")
	a := newAuthzCaller(t, env)
	first, _ := settledShell(t, env) // run_command into a busy tab fails before any sheet
	read := `{"terminal_id":"` + first + `"}`
	run := `{"terminal_id":"` + first + `","command":"true"}`
	readGrant := a.grantAlways(env, "e2e", "c1", "read_output", read)
	a.grantAlways(env, "e2e", "c2", "run_command", run)

	// Fill the disk.
	filler := filepath.Join(state, "filler")
	f, err := os.Create(filler)
	must(t, err)
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()

	r := phantom(t, env, "grants", "revoke", readGrant)
	if r.code == 0 || !strings.Contains(r.stdout, "revoked "+readGrant+" in memory") ||
		!strings.Contains(r.stderr, "could not be updated") || !strings.Contains(r.stderr, "no space left") {
		t.Fatalf("revoke on a full disk:\n%v", r)
	}
	// Revoked all the same: the read asks again.
	ch := a.ask("e2e", "c3", "read_output", read)
	waitSheet(t, env, "read_output")
	a.end("c3")
	a.wait(ch)
	if gs := grantsJSON(t, env); slices.ContainsFunc(gs, func(g map[string]any) bool { return g["id"] == readGrant }) {
		t.Errorf("the revoked grant is still listed: %v", gs)
	}
	out := mustPhantom(t, env, "status")
	if !strings.Contains(out, "the file could not be updated") {
		t.Errorf("status does not say the grants file is behind:\n%s", out)
	}
	// The audit log fills its last page, then fails: commands are refused
	// (a standing grant covers them) while it cannot record them.
	refused := false
	for i := 0; i < 200 && !refused; i++ {
		r := a.wait(a.ask("e2e", "c4", "run_command", run))
		refused = !r.GetAllowed() && strings.Contains(r.GetReason(), "audit log cannot be written")
	}
	if !refused {
		t.Fatal("run_command was never refused while the audit log could not be written")
	}
	if out := mustPhantom(t, env, "status"); !strings.Contains(out, "audit log   FAILING") {
		t.Errorf("status does not show the audit log failing:\n%s", out)
	}

	// Room again: authz writes the grants file by itself, and the log.
	must(t, os.Remove(filler))
	eventually(t, "authz to write the grants file", func() (bool, string) {
		ids := fileGrants(t, filepath.Join(state, "grants.json"))
		return !slices.Contains(ids, readGrant), strings.Join(ids, " ")
	})
	eventually(t, "status to clear", func() (bool, string) {
		out := mustPhantom(t, env, "status")
		return !strings.Contains(out, "could not be updated"), out
	})
	if r := a.wait(a.ask("e2e", "c5", "run_command", run)); !r.GetAllowed() {
		t.Errorf("run_command after the disk has room again: %v", r)
	}
}
