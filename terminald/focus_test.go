package terminald

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/guard"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// fakeRecorder keeps the events reported to it.
type fakeRecorder struct {
	mu     sync.Mutex
	events []*authzv1.RecordEventRequest
}

func (f *fakeRecorder) RecordEvent(_ context.Context, r *authzv1.RecordEventRequest, _ ...grpc.CallOption) (*authzv1.RecordEventResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, r)
	return &authzv1.RecordEventResponse{}, nil
}

func (f *fakeRecorder) all() []*authzv1.RecordEventRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*authzv1.RecordEventRequest(nil), f.events...)
}

// TestFocusTerminalCallers: the human's call switches at once and is not
// an agent's event; an agent's call (from inside Phantom, or relayed by
// the gateway) switches only a quiet client, says what it did, and is
// reported for the audit log with who asked.
func TestFocusTerminalCallers(t *testing.T) {
	ws := start(t, "/bin/bash").ws
	var ids []string
	for range 3 {
		tab, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tab.ID)
	}
	s := NewService(ws)
	rec := &fakeRecorder{}
	s.SetEventRecorder(rec, nil)
	human := guard.NewContext(context.Background(), guard.Caller{})
	inside := guard.NewContext(context.Background(), guard.Caller{Inside: true, ForAgent: true, PID: 4242, StartTime: 77, TabID: ids[1]})
	relayed := guard.NewContext(context.Background(), guard.Caller{ForAgent: true, TabID: ids[1], PID: 1})
	focus := func(ctx context.Context, id string) *terminalv1.FocusTerminalResponse {
		t.Helper()
		resp, err := s.FocusTerminal(ctx, &terminalv1.FocusTerminalRequest{TerminalId: id})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	// Nobody attached.
	if r := focus(human, ids[2]); r.GetOutcome() != terminalv1.FocusTerminalResponse_OUTCOME_NO_CLIENT || !r.GetTerminal().GetFocused() {
		t.Errorf("the human, nobody attached: %v", r)
	}
	if r := focus(inside, ids[0]); r.GetOutcome() != terminalv1.FocusTerminalResponse_OUTCOME_NO_CLIENT || !r.GetTerminal().GetFocused() {
		t.Errorf("an agent, nobody attached: %v", r)
	}
	ev := rec.all()
	if len(ev) != 1 {
		t.Fatalf("reported %v; want the agent's call only", ev)
	}
	if c := ev[0].GetCaller(); ev[0].GetEvent() != authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NO_CLIENT || ev[0].GetTarget() != ids[0] ||
		c.GetClient() != "shell" || c.GetTabId() != ids[1] || c.GetPid() != 4242 || c.GetConnectionId() != guard.ProcessConnection(4242, 77) {
		t.Errorf("reported %v", ev[0])
	}

	// A client attached, typing.
	in := make(chan attach.Msg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		attach.Run(ctx, attach.Options{Workspace: ws, Focus: s.focuses}, attach.Hello{Cols: 80, Rows: 24}, in, func([]byte) error { return nil })
	}()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for s.focuses.Attached(ws.Windows()[0].ID) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the client never attached")
		}
		time.Sleep(10 * time.Millisecond)
	}
	in <- attach.Msg{Input: []byte("echo typing")}
	r := focus(relayed, ids[2])
	if r.GetOutcome() != terminalv1.FocusTerminalResponse_OUTCOME_NOTICE || r.GetNotifiedClients() != 1 || r.GetMovedClients() != 0 ||
		r.GetTerminal().GetFocused() || !strings.Contains(r.GetNote(), "NOT brought forward") {
		t.Errorf("an agent while the human types: %v", r)
	}
	ev = rec.all()
	if last := ev[len(ev)-1]; last.GetEvent() != authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NOTICE || last.GetCaller().GetConnectionId() != "relayed-by-pid-1" ||
		last.GetCaller().GetPid() != 0 || !strings.Contains(last.GetDetail(), "not switched") {
		t.Errorf("reported %v", last)
	}
	// The human's own call still switches at once.
	if r := focus(human, ids[2]); r.GetOutcome() != terminalv1.FocusTerminalResponse_OUTCOME_MOVED || r.GetMovedClients() != 1 || !r.GetTerminal().GetFocused() {
		t.Errorf("the human while typing: %v", r)
	}
	if n := len(rec.all()); n != len(ev) {
		t.Errorf("the human's call was reported as an agent's")
	}
}
