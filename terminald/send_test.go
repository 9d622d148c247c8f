package terminald

import (
	"context"
	"os/exec"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/phantom-dev/phantom/internal/guard"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestSendKeysAndClose: the human's SendKeys types key names and text
// into a busy tab (C-c stops what runs) and says what it typed; a key
// name that names no key is refused, naming it, and types nothing;
// CloseTerminal says what it closed, and the tab is gone.
func TestSendKeysAndClose(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not installed")
	}
	in := start(t, sh)
	tab := in.create(t, &terminalv1.CreateTerminalRequest{}).GetId()
	if _, err := in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"sleep 1000", "Enter"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "sleep in the foreground", func() (bool, string) {
		tm := in.get(t, tab)
		return tm.GetForegroundProcess().GetName() == "sleep", tm.String()
	})
	_, err = in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"C-Foo"}})
	wantCode(t, err, codes.InvalidArgument, `"C-Foo", is not a key name`)
	r, err := in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"C-c"}})
	if err != nil || r.GetTyped() != "␃" {
		t.Fatalf("SendKeys C-c = %v, %v; want typed ␃", r, err)
	}
	eventually(t, "sleep to end", func() (bool, string) {
		tm := in.get(t, tab)
		return tm.GetIdle() && tm.GetForegroundProcess().GetName() != "sleep", tm.String()
	})
	closed, err := in.c.CloseTerminal(ctx(t), &terminalv1.CloseTerminalRequest{TerminalId: tab})
	if err != nil || closed.GetTerminal().GetId() != tab || closed.GetClosed() == "" {
		t.Fatalf("CloseTerminal = %v, %v", closed, err)
	}
	_, err = in.c.SendKeys(ctx(t), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"x"}})
	wantCode(t, err, codes.NotFound, tab)
}

// eventLog keeps the events terminald reports.
type eventLog struct {
	mu  sync.Mutex
	got []*authzv1.RecordEventRequest
}

func (l *eventLog) RecordEvent(_ context.Context, in *authzv1.RecordEventRequest, _ ...grpc.CallOption) (*authzv1.RecordEventResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, in)
	return &authzv1.RecordEventResponse{}, nil
}

// TestSendKeysNotTypedIsAudited: an agent's send_keys that authz allowed
// but that reached no tab (it closed in between) leaves keys_not_typed in
// the audit log; the human's leaves nothing there.
func TestSendKeysNotTypedIsAudited(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not installed")
	}
	in := start(t, sh)
	s := NewService(in.ws)
	events := &eventLog{}
	s.SetEventRecorder(events, nil)
	tab := in.create(t, &terminalv1.CreateTerminalRequest{}).GetId()
	if _, err := in.c.CloseTerminal(ctx(t), &terminalv1.CloseTerminalRequest{TerminalId: tab}); err != nil {
		t.Fatal(err)
	}
	agent := guard.NewContext(ctx(t), guard.Caller{Inside: true, ForAgent: true, TabID: "t99"})
	if _, err := s.SendKeys(agent, &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"C-c"}}); err == nil {
		t.Fatal("keys into a closed tab typed")
	}
	if _, err := s.SendKeys(guard.NewContext(ctx(t), guard.Caller{}), &terminalv1.SendKeysRequest{TerminalId: tab, Keys: []string{"x"}}); err == nil {
		t.Fatal("the human's keys into a closed tab typed")
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	if len(events.got) != 1 || events.got[0].GetEvent() != authzv1.ReportedEvent_REPORTED_EVENT_KEYS_NOT_TYPED ||
		events.got[0].GetTarget() != tab || events.got[0].GetCaller().GetTabId() != "t99" {
		t.Errorf("reported %v, want one keys_not_typed for tab %s from t99", events.got, tab)
	}
}
