package authz

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/peer"

	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/testenv"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

type fakeTabs []policy.TabInfo

func (f fakeTabs) Tabs(context.Context) ([]policy.TabInfo, error) { return f, nil }

var tabs = fakeTabs{
	{ID: "t1", Title: "agent", Directory: "/src/app", Project: "/src/app", GroupID: "g1", Idle: true},
	{ID: "t2", Title: "server", Directory: "/src/app", Project: "/src/app", GroupID: "g1", Idle: true},
	{ID: "t3", Title: "lib", Directory: "/src/lib", Project: "/src/lib", Idle: true},
}

// testProgram is the program behind the tests' callers.
const testProgram = "/usr/bin/node /opt/claude/cli.js"

type fixture struct {
	svc   *Service
	clock *sheets.FakeClock
	path  string
}

func newFixture(t *testing.T, path string) *fixture {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), grants.FileName)
	}
	clock := sheets.NewFakeClock(time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC))
	svc := NewService(Options{
		Policy: policy.New(tabs, func(_ context.Context, dir string) string { return dir }),
		Grants: grants.Open(path, clock.Now),
		Sheets: sheets.New(sheets.Options{Clock: clock}),
	})
	t.Cleanup(svc.Close)
	return &fixture{svc: svc, clock: clock, path: path}
}

func req(conn, tab, tool, args string) *authzv1.AuthorizeRequest {
	return &authzv1.AuthorizeRequest{Caller: &authzv1.Caller{Client: "claude", ConnectionId: conn, TabId: tab, Pid: 42, Program: testProgram},
		Tool: tool, ArgumentsJson: args}
}

// authorize runs Authorize in the background.
func (f *fixture) authorize(r *authzv1.AuthorizeRequest) <-chan *authzv1.AuthorizeResponse {
	ch := make(chan *authzv1.AuthorizeResponse, 1)
	go func() {
		resp, err := f.svc.Authorize(context.Background(), r)
		if err != nil {
			resp = &authzv1.AuthorizeResponse{Reason: "error: " + err.Error()}
		}
		ch <- resp
	}()
	return ch
}

// waitSheets waits until n sheets are waiting and returns them.
func (f *fixture) waitSheets(t *testing.T, n int) []*authzv1.Sheet {
	t.Helper()
	var got []*authzv1.Sheet
	testenv.Eventually(t, "sheets to wait", func() (bool, string) {
		resp, _ := f.svc.ListSheets(context.Background(), &authzv1.ListSheetsRequest{})
		got = resp.GetSheets()
		return len(got) == n, resp.String()
	})
	return got
}

func (f *fixture) answer(t *testing.T, id string, d authzv1.Decision, s authzv1.Scope) *authzv1.Grant {
	t.Helper()
	resp, err := f.svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: id, Decision: d, Scope: s})
	if err != nil {
		t.Fatalf("answer %s: %v", id, err)
	}
	return resp.GetGrant()
}

func recv(t *testing.T, ch <-chan *authzv1.AuthorizeResponse) *authzv1.AuthorizeResponse {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Authorize did not return")
		return nil
	}
}

func TestFreeToolAndUnknownTool(t *testing.T) {
	f := newFixture(t, "")
	resp, err := f.svc.Authorize(context.Background(), req("c1", "t1", "list_terminals", ""))
	if err != nil || !resp.GetAllowed() {
		t.Errorf("list_terminals: %v %v", resp, err)
	}
	resp, err = f.svc.Authorize(context.Background(), req("c1", "t1", "rm_everything", "{}"))
	if err != nil || resp.GetAllowed() || !strings.Contains(resp.GetReason(), "rm_everything") {
		t.Errorf("unknown tool: %v %v, want a refusal naming it", resp, err)
	}
}

func TestOneSheetAtATime(t *testing.T) {
	f := newFixture(t, "")
	first := f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t2"}`))
	f.waitSheets(t, 1)
	second := f.authorize(req("c2", "t3", "run_command", `{"terminal_id":"t3","command":"make"}`))
	s := f.waitSheets(t, 2)
	if s[0].GetTool() != "read_output" || s[0].GetWaitingBehind() != 1 || s[1].GetTool() != "run_command" {
		t.Fatalf("sheets = %v, want read_output on screen and run_command behind", s)
	}
	if s[0].GetReach() != authzv1.Scope_SCOPE_GROUP || !strings.HasPrefix(s[0].GetSubject(), "tab t2 (server)") ||
		s[0].GetTabTitle() != "agent" || s[0].GetProject() != "/src/app" || s[0].GetPid() != 42 || s[0].GetSecondsLeft() != 50 {
		t.Errorf("first sheet = %v", s[0])
	}
	select {
	case r := <-second:
		t.Fatalf("second call returned before the first sheet was answered: %v", r)
	default:
	}
	g := f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ONCE, 0)
	if r := recv(t, first); !r.GetAllowed() || r.GetGrantId() != g.GetId() || g.GetScope() != authzv1.Scope_SCOPE_GROUP {
		t.Errorf("first = %v, grant %v", r, g)
	}
	s = f.waitSheets(t, 1)
	if s[0].GetTool() != "run_command" || !strings.Contains(s[0].GetSubject(), `"make"`) {
		t.Errorf("now on screen: %v", s[0])
	}
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_DENY, 0)
	if r := recv(t, second); r.GetAllowed() || !strings.Contains(r.GetReason(), "denied") {
		t.Errorf("second = %v", r)
	}
}

// TestOnceIsThisCall: "once" allows exactly the call the sheet showed, on
// its connection, until the connection ends: not another tab, another
// command, another tool or another connection, and it takes no scope.
func TestOnceIsThisCall(t *testing.T) {
	f := newFixture(t, "")
	r := req("c1", "t1", "run_command", `{"terminal_id":"t2","command":"echo first"}`)
	ch := f.authorize(r)
	s := f.waitSheets(t, 1)
	if _, err := f.svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: s[0].GetId(),
		Decision: authzv1.Decision_DECISION_ONCE, Scope: authzv1.Scope_SCOPE_ALL}); !errdefs.Is(err, errdefs.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "only the call on the sheet") {
		t.Errorf("once with scope all: %v, want refused", err)
	}
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ONCE, authzv1.Scope_SCOPE_UNSPECIFIED)
	if resp := recv(t, ch); !resp.GetAllowed() {
		t.Fatal(resp)
	}
	if resp, _ := f.svc.Authorize(context.Background(), r); !resp.GetAllowed() {
		t.Errorf("the same call again on its connection: %v", resp)
	}
	for _, other := range []*authzv1.AuthorizeRequest{
		req("c1", "t1", "run_command", `{"terminal_id":"t2","command":"echo second"}`),
		req("c1", "t1", "run_command", `{"terminal_id":"t3","command":"echo first"}`),
		req("c1", "t1", "run_command", `{"terminal_id":"t2","command":"echo first","wait_seconds":5}`),
		req("c1", "t1", "read_output", `{"terminal_id":"t2"}`),
		req("c2", "t1", "run_command", `{"terminal_id":"t2","command":"echo first"}`),
	} {
		ch := f.authorize(other)
		s := f.waitSheets(t, 1)
		f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_DENY, 0)
		if resp := recv(t, ch); resp.GetAllowed() {
			t.Errorf("%s %s on %s allowed by the once grant: %v", other.GetTool(), other.GetArgumentsJson(), other.GetCaller().GetConnectionId(), resp)
		}
		f.clock.Advance(2 * sheets.DefaultTurnAway) // the denial turns the tab away; the next case asks anew
	}
	f.svc.EndConnection(context.Background(), &authzv1.EndConnectionRequest{ConnectionId: "c1"})
	if l, _ := f.svc.ListGrants(context.Background(), &authzv1.ListGrantsRequest{}); len(l.GetGrants()) != 0 {
		t.Errorf("grants after EndConnection: %v", l)
	}
	ch = f.authorize(r)
	f.waitSheets(t, 1)
	f.svc.EndConnection(context.Background(), &authzv1.EndConnectionRequest{ConnectionId: "c1"})
	if resp := recv(t, ch); resp.GetAllowed() || !strings.Contains(resp.GetReason(), "withdrawn") {
		t.Errorf("after EndConnection: %v, want withdrawn", resp)
	}
	f.waitSheets(t, 0)
}

// TestAlwaysIsForTheProgram: a standing grant covers the program it was
// given to under the client name, and a program that only calls itself
// by that name asks anew; so does a caller whose program is unknown.
func TestAlwaysIsForTheProgram(t *testing.T) {
	f := newFixture(t, "")
	ch := f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t3"}`))
	s := f.waitSheets(t, 1)
	if s[0].GetProgram() != testProgram {
		t.Errorf("the sheet shows program %q, want %q", s[0].GetProgram(), testProgram)
	}
	g := f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ALWAYS, authzv1.Scope_SCOPE_ALL)
	recv(t, ch)
	if g.GetProgram() != testProgram {
		t.Errorf("grant %v is not for the program", g)
	}
	for _, program := range []string{"/usr/bin/python3 /src/app/evil.py", ""} {
		r := req("c2", "t1", "read_output", `{"terminal_id":"t3"}`)
		r.Caller.Program = program
		ch := f.authorize(r)
		s := f.waitSheets(t, 1)
		if program == "" {
			if _, err := f.svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: s[0].GetId(),
				Decision: authzv1.Decision_DECISION_ALWAYS}); !errdefs.Is(err, errdefs.ErrFailedPrecondition) {
				t.Errorf("always for an unknown program: %v, want refused", err)
			}
		}
		f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_DENY, 0)
		if resp := recv(t, ch); resp.GetAllowed() {
			t.Errorf("program %q allowed by claude's standing grant: %v", program, resp)
		}
		f.clock.Advance(2 * sheets.DefaultTurnAway)
	}
}

func TestAlwaysPersistsAndSettlesOthers(t *testing.T) {
	f := newFixture(t, "")
	a := f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t1"}`))
	s := f.waitSheets(t, 1)
	b := f.authorize(req("c2", "t1", "read_output", `{"terminal_id":"t2"}`)) // same tab, another connection
	testenv.Eventually(t, "the second request behind the tab's sheet", func() (bool, string) {
		n, behind := f.svc.sheets.Counts()
		return n == 1 && behind == 1, fmt.Sprint(n, behind)
	})
	if _, err := f.svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: s[0].GetId(),
		Decision: authzv1.Decision_DECISION_ALWAYS, Scope: authzv1.Scope_SCOPE_UNSPECIFIED}); err != nil {
		t.Fatal(err)
	}
	recv(t, a)
	// The tab-scope grant does not cover the group read: still waiting.
	s = f.waitSheets(t, 1)
	if _, err := f.svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: s[0].GetId(),
		Decision: authzv1.Decision_DECISION_ALWAYS, Scope: authzv1.Scope_SCOPE_TAB}); !errdefs.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("answer narrower than the reach: %v, want invalid argument", err)
	}
	g := f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ALWAYS, authzv1.Scope_SCOPE_ALL)
	if r := recv(t, b); !r.GetAllowed() {
		t.Fatal(r)
	}
	// A new authz over the same file keeps the grant.
	f2 := newFixture(t, f.path)
	resp, _ := f2.svc.Authorize(context.Background(), req("c9", "t1", "read_output", `{"terminal_id":"t3"}`))
	if !resp.GetAllowed() || resp.GetGrantId() != g.GetId() {
		t.Fatalf("after restart: %v, want covered by %s", resp, g.GetId())
	}
	if _, err := f2.svc.RevokeGrant(context.Background(), &authzv1.RevokeGrantRequest{GrantId: g.GetId()}); err != nil {
		t.Fatal(err)
	}
	ch := f2.authorize(req("c9", "t1", "read_output", `{"terminal_id":"t3"}`))
	f2.waitSheets(t, 1)
	f2.svc.EndConnection(context.Background(), &authzv1.EndConnectionRequest{ConnectionId: "c9"})
	recv(t, ch)
}

func TestTurnAwayThenAskAgain(t *testing.T) {
	f := newFixture(t, "")
	r := req("c1", "t1", "run_command", `{"terminal_id":"t1","command":"ls"}`)
	ch := f.authorize(r)
	s := f.waitSheets(t, 1)
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_DENY, 0)
	recv(t, ch)
	// Within 60 s: refused at once, no sheet, saying when to ask again.
	f.clock.Advance(59 * time.Second)
	resp, _ := f.svc.Authorize(context.Background(), r)
	if resp.GetAllowed() || !strings.Contains(resp.GetReason(), "15:01:00") || !strings.Contains(resp.GetReason(), "without asking") {
		t.Errorf("turned away: %v", resp)
	}
	// Another connection from the same tab is turned away too; another tab is not.
	resp, _ = f.svc.Authorize(context.Background(), req("c2", "t1", "run_command", `{"terminal_id":"t1","command":"ls"}`))
	if resp.GetAllowed() || !strings.Contains(resp.GetReason(), "without asking") {
		t.Errorf("other connection of the tab: %v", resp)
	}
	f.waitSheets(t, 0)
	// After 60 s a new sheet.
	f.clock.Advance(time.Second)
	ch = f.authorize(r)
	s = f.waitSheets(t, 1)
	f.answer(t, s[0].GetId(), authzv1.Decision_DECISION_ONCE, 0)
	if resp := recv(t, ch); !resp.GetAllowed() {
		t.Error(resp)
	}
}

func TestTimeoutRefuses(t *testing.T) {
	f := newFixture(t, "")
	ch := f.authorize(req("c1", "", "read_output", `{"terminal_id":"t1"}`))
	s := f.waitSheets(t, 1)
	if s[0].GetReach() != authzv1.Scope_SCOPE_ALL || s[0].GetProject() != "" {
		t.Errorf("outside-tab sheet = %v, want reach all, global project", s[0])
	}
	f.clock.Advance(50 * time.Second)
	resp := recv(t, ch)
	if resp.GetAllowed() || !strings.Contains(resp.GetReason(), "nobody answered") || !strings.Contains(resp.GetReason(), "Codex") {
		t.Errorf("timeout: %v", resp)
	}
	f.waitSheets(t, 0)
	if _, err := f.svc.AnswerSheet(context.Background(), &authzv1.AnswerSheetRequest{SheetId: s[0].GetId(),
		Decision: authzv1.Decision_DECISION_ONCE}); !errdefs.Is(err, errdefs.ErrNotFound) {
		t.Errorf("answering a timed-out sheet: %v", err)
	}
	// Nobody answering is no refusal: the next call raises a sheet.
	ch = f.authorize(req("c1", "", "read_output", `{"terminal_id":"t1"}`))
	f.waitSheets(t, 1)
	f.svc.EndConnection(context.Background(), &authzv1.EndConnectionRequest{ConnectionId: "c1"})
	recv(t, ch)
}

func TestCorruptGrantsRefuse(t *testing.T) {
	path := filepath.Join(t.TempDir(), grants.FileName)
	if err := writeFileForTest(path, "not json"); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, path)
	resp, err := f.svc.Authorize(context.Background(), req("c1", "t1", "read_output", `{"terminal_id":"t1"}`))
	if err != nil || resp.GetAllowed() || !strings.Contains(resp.GetReason(), path) {
		t.Errorf("corrupt grants: %v %v, want a refusal naming %s", resp, err, path)
	}
	if resp, _ := f.svc.Authorize(context.Background(), req("c1", "t1", "list_terminals", "")); !resp.GetAllowed() {
		t.Errorf("a free tool was refused: %v", resp)
	}
	if len(f.svc.sheets.List()) != 0 {
		t.Error("a sheet was raised despite the corrupt file")
	}
}

func TestWatchSheets(t *testing.T) {
	f := newFixture(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	stream := &watchStream{ctx: ctx, ch: make(chan *authzv1.WatchSheetsResponse, 16)}
	done := make(chan error, 1)
	go func() { done <- f.svc.WatchSheets(&authzv1.WatchSheetsRequest{}, stream) }()
	if ev := <-stream.ch; ev.GetSheet() != nil || ev.GetWaiting() != 0 {
		t.Errorf("first event = %v, want none waiting", ev)
	}
	ch := f.authorize(req("c1", "t1", "read_output", `{"terminal_id":"t1"}`))
	if ev := <-stream.ch; ev.GetSheet().GetTool() != "read_output" || ev.GetWaiting() != 1 {
		t.Errorf("event = %v", ev)
	}
	f.svc.EndConnection(context.Background(), &authzv1.EndConnectionRequest{ConnectionId: "c1"})
	recv(t, ch)
	if ev := <-stream.ch; ev.GetSheet() != nil {
		t.Errorf("after withdraw: %v", ev)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestHumanGate(t *testing.T) {
	uid := currentUID()
	// ctxWith is a call as the guard leaves it: the peer's credentials
	// (over a Unix socket) and where the guard placed the caller.
	ctxWith := func(c *guard.Caller, peerUID int) context.Context {
		ctx := context.Background()
		if peerUID >= 0 {
			ai := peercred.AuthInfo{Unix: true, Creds: peercred.Creds{PID: 10, UID: peerUID}}
			ctx = peer.NewContext(ctx, &peer.Peer{AuthInfo: ai})
		}
		if c != nil {
			ctx = guard.NewContext(ctx, *c)
		}
		return ctx
	}
	tests := []struct {
		name     string
		ctx      context.Context
		allowTCP bool
		want     string // "" allowed, else a substring of the refusal
	}{
		{"outside Phantom", ctxWith(&guard.Caller{PID: 10}, uid), false, ""},
		{"inside a tab", ctxWith(&guard.Caller{PID: 10, Inside: true, TabID: "t3"}, uid), false, "inside Phantom"},
		{"inside, left its tab", ctxWith(&guard.Caller{PID: 10, Inside: true}, uid), false, "inside Phantom"},
		{"not placed", ctxWith(nil, uid), false, "could not be placed"},
		{"other uid", ctxWith(&guard.Caller{PID: 10}, uid+1), false, "uid"},
		{"tcp", ctxWith(nil, -1), false, "TCP"},
		{"tcp opted in", ctxWith(nil, -1), true, ""},
	}
	for _, tt := range tests {
		err := HumanGate(tt.allowTCP)(tt.ctx)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errdefs.Is(err, errdefs.ErrPermissionDenied)):
			t.Errorf("%s: %v, want permission denied containing %q", tt.name, err, tt.want)
		}
	}
	// The service applies the gate before touching the sheet.
	f := newFixture(t, "")
	f.svc.mayAnswer = HumanGate(false)
	_, err := f.svc.AnswerSheet(ctxWith(&guard.Caller{PID: 10, Inside: true, TabID: "t1"}, uid),
		&authzv1.AnswerSheetRequest{SheetId: "s1", Decision: authzv1.Decision_DECISION_ALWAYS})
	if !errdefs.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("AnswerSheet from a tab: %v", err)
	}
}
