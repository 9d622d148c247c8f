package terminald

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// fakeSheetAuthz streams a queue of sheets and takes answers.
type fakeSheetAuthz struct {
	authzv1.UnimplementedAuthzServiceServer
	mu      sync.Mutex
	queue   []*authzv1.Sheet
	changed chan struct{}
	answers []*authzv1.AnswerSheetRequest
}

func newFakeSheetAuthz(sheets ...*authzv1.Sheet) *fakeSheetAuthz {
	return &fakeSheetAuthz{queue: sheets, changed: make(chan struct{})}
}

func (f *fakeSheetAuthz) WatchSheets(_ *authzv1.WatchSheetsRequest, st grpc.ServerStreamingServer[authzv1.WatchSheetsResponse]) error {
	for {
		f.mu.Lock()
		resp := &authzv1.WatchSheetsResponse{Waiting: int32(len(f.queue))}
		if len(f.queue) > 0 {
			resp.Sheet = f.queue[0]
		}
		ch := f.changed
		f.mu.Unlock()
		if err := st.Send(resp); err != nil {
			return err
		}
		select {
		case <-ch:
		case <-st.Context().Done():
			return nil
		}
	}
}

func (f *fakeSheetAuthz) AnswerSheet(_ context.Context, r *authzv1.AnswerSheetRequest) (*authzv1.AnswerSheetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, r)
	if len(f.queue) > 0 && f.queue[0].GetId() == r.GetSheetId() {
		f.queue = f.queue[1:]
		close(f.changed)
		f.changed = make(chan struct{})
	}
	return &authzv1.AnswerSheetResponse{}, nil
}

// serveFakeAuthz serves f on addr until the returned stop is called (or
// the test ends); stop cuts open streams, as a crash would.
func serveFakeAuthz(t *testing.T, addr string, f authzv1.AuthzServiceServer) (stop func()) {
	t.Helper()
	srv, err := daemon.New("authz", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	authzv1.RegisterAuthzServiceServer(srv.GRPC, f)
	lis, err := daemon.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.GRPC.Serve(lis) }()
	var once sync.Once
	stop = func() { once.Do(func() { srv.GRPC.Stop(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// waitSheet waits until the watcher shows sheet id ("" for none).
func waitSheet(t *testing.T, w *sheetWatcher, id string) *attach.Sheet {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ch := w.Changed()
		cur, _ := w.Current()
		if (cur == nil && id == "") || (cur != nil && cur.ID == id) {
			return cur
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("watcher shows %+v, want sheet %q", cur, id)
		}
	}
}

func TestSheetWatcher(t *testing.T) {
	addr := testenv.New(t).Layout.DaemonAddr("authz")
	// authz is not up yet: the watcher keeps trying.
	w, err := startSheetWatcher(addr, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	time.Sleep(300 * time.Millisecond)

	fake := newFakeSheetAuthz(&authzv1.Sheet{Id: "s1", Client: "claude", TabId: "t3", TabTitle: "build",
		Capability: mcpv1.Capability_CAPABILITY_READ, Reach: authzv1.Scope_SCOPE_GROUP, Tool: "read_output",
		Subject: "tab t5 (server logs)", Project: "/src/app", SecondsLeft: 42, WaitingBehind: 1},
		&authzv1.Sheet{Id: "s2", Capability: mcpv1.Capability_CAPABILITY_RUN})
	stop := serveFakeAuthz(t, addr, fake)
	s := waitSheet(t, w, "s1")
	if _, n := w.Current(); n != 2 || s.Client != "claude" || s.TabID != "t3" || s.TabTitle != "build" ||
		s.Capability != "read" || s.Reach != attach.ScopeGroup || s.Tool != "read_output" ||
		s.Subject != "tab t5 (server logs)" || s.Project != "/src/app" || s.WaitingBehind != 1 ||
		time.Until(s.Deadline) < 40*time.Second || time.Until(s.Deadline) > 42*time.Second {
		t.Errorf("sheet %+v, %d waiting", s, n)
	}

	// Answers go to authz; the stream brings the next sheet.
	if err := w.Answer(context.Background(), "s1", attach.DecisionOnce, attach.ScopeAll); err != nil {
		t.Fatal(err)
	}
	if s := waitSheet(t, w, "s2"); s.Capability != "run" {
		t.Errorf("second sheet %+v", s)
	}
	if err := w.Answer(context.Background(), "s2", attach.DecisionDeny, attach.ScopeTab); err != nil {
		t.Fatal(err)
	}
	waitSheet(t, w, "")
	fake.mu.Lock()
	got := fake.answers
	fake.mu.Unlock()
	if len(got) != 2 ||
		got[0].GetSheetId() != "s1" || got[0].GetDecision() != authzv1.Decision_DECISION_ONCE || got[0].GetScope() != authzv1.Scope_SCOPE_ALL ||
		got[1].GetSheetId() != "s2" || got[1].GetDecision() != authzv1.Decision_DECISION_DENY {
		t.Errorf("authz got answers %v", got)
	}

	// authz restarts with a sheet waiting: the watcher forgets the old
	// state and picks up the new one.
	fake.mu.Lock()
	fake.queue = []*authzv1.Sheet{{Id: "s3"}}
	close(fake.changed)
	fake.changed = make(chan struct{})
	fake.mu.Unlock()
	waitSheet(t, w, "s3")
	stop()
	waitSheet(t, w, "")
	serveFakeAuthz(t, addr, newFakeSheetAuthz(&authzv1.Sheet{Id: "s4"}))
	waitSheet(t, w, "s4")
}

// TestSheetWatcherStops checks that stopping the watcher ends its
// goroutine even while authz is unreachable.
func TestSheetWatcherStops(t *testing.T) {
	w, err := startSheetWatcher(testenv.New(t).Layout.DaemonAddr("authz"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	stopped := make(chan struct{})
	go func() { w.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher did not stop")
	}
}
