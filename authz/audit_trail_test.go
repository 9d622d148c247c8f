package authz

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	"github.com/phantom-dev/phantom/internal/testenv"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// fakeAudit keeps the entries; Commit fails while failing is set.
type fakeAudit struct {
	mu      sync.Mutex
	entries []audit.Entry
	failing error
}

func (a *fakeAudit) Record(e audit.Entry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
}

func (a *fakeAudit) Commit(_ context.Context, e audit.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failing != nil {
		return a.failing
	}
	a.entries = append(a.entries, e)
	return nil
}

func (a *fakeAudit) Status() audit.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return audit.Status{Path: "audit.jsonl", Problem: a.failing}
}

// events lists the entries as "event tool/grant detail" strings.
func (a *fakeAudit) events() []audit.Entry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.entries)
}

func newAuditFixture(t *testing.T) (*fixture, *fakeAudit) {
	t.Helper()
	path := filepath.Join(t.TempDir(), grants.FileName)
	clock := sheets.NewFakeClock(time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC))
	a := &fakeAudit{}
	svc := NewService(Options{
		Policy: policy.New(tabs, func(_ context.Context, dir string) string { return dir }),
		Grants: grants.Open(path, clock.Now),
		Sheets: sheets.New(sheets.Options{Clock: clock}),
		Audit:  a,
	})
	t.Cleanup(svc.Close)
	return &fixture{svc: svc, clock: clock, path: path}, a
}

// TestAuditTrail drives a session and checks each decision left its line:
// sheets raised and answered, calls allowed (by an answer, a once grant, a
// standing grant; run_command with its exact text and tab), a denial, a
// turn-away, a time-out, a withdrawal, a revocation by the human and one
// by an edit of the grants file.
func TestAuditTrail(t *testing.T) {
	f, a := newAuditFixture(t)
	ctx := context.Background()

	// 1. A read, answered once; then covered by the once grant.
	ch := f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t2"}`))
	s := f.waitSheets(t, 1)
	once := f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ONCE, 0)
	recv(t, ch)
	recv(t, f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t2"}`)))

	// 2. A command, answered always; then covered by the standing grant.
	cmd := "make test && echo \"done\"\x7f"
	cmd = strings.TrimSuffix(cmd, "\x7f") // a typable line
	args, _ := json.Marshal(map[string]string{"terminal_id": "t1", "command": cmd})
	ch = f.authorize(req("c1", "t1", "run_command", string(args)))
	s = f.waitSheets(t, 1)
	always := f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ALWAYS, 0)
	recv(t, ch)
	if r := recv(t, f.authorize(req("c2", "t1", "run_command", `{"terminal_id":"t1","command":"ls"}`))); !r.GetAllowed() {
		t.Fatalf("standing grant did not cover: %v", r)
	}

	// 3. A denial, then a turn-away.
	ch = f.authorize(req("c3", "t3", "read_output", `{"terminal_id":"t1"}`))
	s = f.waitSheets(t, 1)
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_DENY, 0)
	recv(t, ch)
	recv(t, f.authorize(req("c3", "t3", "read_output", `{"terminal_id":"t1"}`)))

	// 4. A time-out.
	ch = f.authorize(req("c4", "t2", "read_output", `{"terminal_id":"t3"}`))
	f.waitSheets(t, 1)
	f.clock.Advance(sheets.DefaultTimeout)
	recv(t, ch)

	// 5. A withdrawal.
	ch = f.authorize(req("c5", "t2", "read_output", `{"terminal_id":"t3"}`))
	f.waitSheets(t, 1)
	f.svc.EndConnection(ctx, &authzv1.EndConnectionRequest{ConnectionId: "c5"})
	recv(t, ch)

	// 6. A revocation by the human (relayed by terminald from attach's
	// grants view, for this process), and one by an edit of the file.
	if _, err := f.svc.RevokeGrant(ctx, &authzv1.RevokeGrantRequest{GrantId: once.GetId(), RelayedForPid: int32(os.Getpid())}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.path, []byte(`{"version":1,"grants":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.svc.grants.Refresh()

	got := a.events()
	want := []struct {
		event string
		check func(audit.Entry) bool
	}{
		{audit.SheetRaised, func(e audit.Entry) bool { return e.Tool == "read_output" && e.Capability == "read" && e.Tab == "t1" }},
		{audit.SheetAnswered, func(e audit.Entry) bool { return e.Decision == "once" && e.Grant == once.GetId() && e.Scope == "group" }},
		{audit.Allowed, func(e audit.Entry) bool { return e.GrantKind == "once" && e.Sheet == "s1" && e.Target == "t2" }},
		{audit.Allowed, func(e audit.Entry) bool { return e.GrantKind == "once" && e.Sheet == "" }},
		{audit.SheetRaised, func(e audit.Entry) bool { return e.Tool == "run_command" }},
		{audit.SheetAnswered, func(e audit.Entry) bool { return e.Decision == "always" && e.Grant == always.GetId() }},
		{audit.Allowed, func(e audit.Entry) bool { return e.Command == cmd && e.Target == "t1" && e.GrantKind == "always" }},
		{audit.Allowed, func(e audit.Entry) bool { return e.Command == "ls" && e.Grant == always.GetId() && e.Sheet == "" }},
		{audit.SheetRaised, func(e audit.Entry) bool { return e.Tab == "t3" }},
		{audit.SheetAnswered, func(e audit.Entry) bool { return e.Decision == "deny" && e.Grant == "" }},
		{audit.Denied, func(e audit.Entry) bool { return e.Sheet != "" && strings.Contains(e.Reason, "denied") }},
		{audit.TurnedAway, func(e audit.Entry) bool { return e.Sheet == "" && strings.Contains(e.Reason, "may ask again") }},
		{audit.SheetRaised, func(e audit.Entry) bool { return e.Connection == "c4" }},
		{audit.TimedOut, func(e audit.Entry) bool { return e.Connection == "c4" && e.Sheet != "" }},
		{audit.SheetRaised, func(e audit.Entry) bool { return e.Connection == "c5" }},
		{audit.Withdrawn, func(e audit.Entry) bool { return e.Connection == "c5" }},
		{audit.GrantRevoked, func(e audit.Entry) bool {
			return e.Grant == once.GetId() && e.GrantKind == "once" && e.By != nil && e.By.For != nil && e.By.For.PID == os.Getpid()
		}},
		{audit.GrantRevoked, func(e audit.Entry) bool {
			return e.Grant == always.GetId() && e.By != nil && e.By.Via == "edit of the grants file"
		}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(got), len(want), dump(got))
	}
	for i, w := range want {
		if got[i].Event != w.event || !w.check(got[i]) {
			t.Errorf("entry %d = %+v, want a %s entry as described", i, got[i], w.event)
		}
	}
	// The standing grant is gone with the edit: the next command asks.
	ch = f.authorize(req("c6", "t1", "run_command", `{"terminal_id":"t1","command":"ls"}`))
	if s := f.waitSheets(t, 1); s[0].GetTool() != "run_command" {
		t.Errorf("sheet %v", s[0])
	}
	f.svc.EndConnection(ctx, &authzv1.EndConnectionRequest{ConnectionId: "c6"})
	if r := recv(t, ch); r.GetAllowed() {
		t.Errorf("run_command allowed after the grant was removed from the file by hand: %v", r)
	}
}

func dump(es []audit.Entry) string {
	var b strings.Builder
	for _, e := range es {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestAuditFailureClosesActsOnly: when the audit log cannot be written, a
// call that acts (run_command, worktree, configure) is refused even under
// a standing grant, and says why; a read still goes ahead.
func TestAuditFailureClosesActsOnly(t *testing.T) {
	f, a := newAuditFixture(t)
	for _, g := range []grants.Grant{
		{Client: "claude", Capability: policy.Run, Scope: policy.All, Project: "/src/app", Always: true, Program: testProgram},
		{Client: "claude", Capability: policy.Read, Scope: policy.All, Project: "/src/app", Always: true, Program: testProgram},
		{Client: "claude", Capability: policy.Worktree, Scope: policy.All, Project: "/src/app", Always: true, Program: testProgram},
	} {
		if _, err := f.svc.grants.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	a.failing = errors.New("write audit log: no space left on device")
	tests := []struct {
		tool, args string
		allowed    bool
	}{
		{"run_command", `{"terminal_id":"t1","command":"rm -rf build"}`, false},
		{"read_output", `{"terminal_id":"t2"}`, true},
		{"list_worktrees", `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			r := recv(t, f.authorize(req("c1", "t1", tt.tool, tt.args)))
			if r.GetAllowed() != tt.allowed {
				t.Fatalf("%s: %v, want allowed %v", tt.tool, r, tt.allowed)
			}
			if !tt.allowed && (!strings.Contains(r.GetReason(), "audit log cannot be written") ||
				!strings.Contains(r.GetReason(), "no space left")) {
				t.Errorf("reason %q does not say the audit log failed and why", r.GetReason())
			}
		})
	}
	st, _ := f.svc.GetStatus(context.Background(), &authzv1.GetStatusRequest{})
	if !strings.Contains(st.GetAudit().GetProblem(), "no space") {
		t.Errorf("GetStatus = %v, want the audit problem", st)
	}
	a.failing = nil
	if r := recv(t, f.authorize(req("c1", "t1", "run_command", `{"terminal_id":"t1","command":"rm -rf build"}`))); !r.GetAllowed() {
		t.Errorf("run_command once the log works again: %v", r)
	}
}

// TestGrantsProblemVisible: a refused grants file shows in GetStatus and
// in the sheet stream (attach's alarm), and clears when fixed.
func TestGrantsProblemVisible(t *testing.T) {
	f, a := newAuditFixture(t)
	if _, err := f.svc.grants.Add(grants.Grant{Client: "claude", Capability: policy.Read, Scope: policy.All, Project: "/src/app", Always: true, Program: testProgram}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := &watchStream{ctx: ctx, ch: make(chan *authzv1.WatchSheetsResponse, 16)}
	go f.svc.WatchSheets(&authzv1.WatchSheetsRequest{}, stream)
	if ev := <-stream.ch; ev.GetGrantsProblem() != "" {
		t.Fatalf("first event: %v, want no problem", ev)
	}
	if err := os.Chmod(f.path, 0o666); err != nil {
		t.Fatal(err)
	}
	f.svc.grants.Refresh()
	testenv.Eventually(t, "the stream to carry the problem", func() (bool, string) {
		select {
		case ev := <-stream.ch:
			return strings.Contains(ev.GetGrantsProblem(), "writable by its group or others"), ev.String()
		default:
			return false, "no event"
		}
	})
	st, _ := f.svc.GetStatus(context.Background(), &authzv1.GetStatusRequest{})
	if !strings.Contains(st.GetGrants().GetProblem(), f.path) {
		t.Errorf("GetStatus = %v, want the problem naming the file", st)
	}
	if r := recv(t, f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t2"}`))); r.GetAllowed() ||
		!strings.Contains(r.GetReason(), "chmod 600") {
		t.Errorf("read under a world-writable grants file: %v, want refused with the fix", r)
	}
	os.Chmod(f.path, 0o600)
	f.svc.grants.Refresh()
	testenv.Eventually(t, "the stream to clear the problem", func() (bool, string) {
		select {
		case ev := <-stream.ch:
			return ev.GetGrantsProblem() == "", ev.String()
		default:
			return false, "no event"
		}
	})
	var events []string
	for _, e := range a.events() {
		events = append(events, e.Event)
	}
	for _, w := range []string{audit.GrantsFileRefused, audit.Refused, audit.GrantsFileUsable} {
		if !slices.Contains(events, w) {
			t.Errorf("audit events %v lack %s", events, w)
		}
	}
}

func TestTTYName(t *testing.T) {
	tests := []struct {
		nr   int
		want string
	}{
		{0, ""},
		{136<<8 | 3, "/dev/pts/3"},
		{137<<8 | 1, "/dev/pts/257"},
		{136<<8 | (300&0xff | (300>>8)<<20), "/dev/pts/300"},
		{4<<8 | 1, "/dev/tty1"},
		{4<<8 | 65, "/dev/ttyS1"},
		{5<<8 | 0, "tty 5:0"},
	}
	for _, tt := range tests {
		if got := ttyName(tt.nr); got != tt.want {
			t.Errorf("ttyName(%#x) = %q, want %q", tt.nr, got, tt.want)
		}
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxSubject)
	got := clip(long)
	if len(got) > maxSubject+40 || !strings.Contains(got, "more bytes") || !strings.HasPrefix(long, strings.Split(got, "…")[0]) {
		t.Errorf("clip cut badly: %d bytes, tail %q", len(got), got[len(got)-30:])
	}
	if clip("short") != "short" {
		t.Error("clip changed a short text")
	}
}

// TestPendingGrantAccepted: a grant added to the file by hand is listed
// as pending and covers nothing; once the human accepts it, it covers,
// and both steps are audited.
func TestPendingGrantAccepted(t *testing.T) {
	f, a := newAuditFixture(t)
	ctx := context.Background()
	if err := os.WriteFile(f.path, []byte(`{"version":1,"grants":[{"id":"ghand","client":"claude","capability":"read",`+
		`"scope":"all","project":"/src/app","program":"`+testProgram+`","created":"2026-11-30T12:00:00Z"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.svc.grants.Refresh()
	l, err := f.svc.ListGrants(ctx, &authzv1.ListGrantsRequest{})
	if err != nil || len(l.GetGrants()) != 1 || !l.GetGrants()[0].GetPending() {
		t.Fatalf("ListGrants = %v, %v; want ghand pending", l, err)
	}
	if st, _ := f.svc.GetStatus(ctx, &authzv1.GetStatusRequest{}); st.GetGrants().GetPending() != 1 || st.GetGrants().GetStanding() != 0 {
		t.Errorf("GetStatus = %v, want 1 pending, 0 standing", st)
	}
	ch := f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t3"}`))
	f.waitSheets(t, 1) // not covered: it asks
	f.svc.EndConnection(ctx, &authzv1.EndConnectionRequest{ConnectionId: "c1"})
	recv(t, ch)
	if _, err := f.svc.AcceptGrant(ctx, &authzv1.AcceptGrantRequest{GrantId: "ghand"}); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, f.authorize(req("c2", "t1", "read_output", `{"terminal_id":"t3"}`))); !r.GetAllowed() || r.GetGrantId() != "ghand" {
		t.Errorf("after accepting: %v", r)
	}
	var events []string
	for _, e := range a.events() {
		events = append(events, e.Event)
	}
	for _, w := range []string{audit.GrantAdded, audit.GrantAccepted} {
		if !slices.Contains(events, w) {
			t.Errorf("audit events %v lack %s", events, w)
		}
	}
}
