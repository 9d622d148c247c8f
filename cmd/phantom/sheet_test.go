package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// stubAuthz stands in for authz until `phantom up` runs the real one:
// every Authorize asks the human with a sheet and waits for the answer.
type stubAuthz struct {
	authzv1.UnimplementedAuthzServiceServer
	mu      sync.Mutex
	queue   []*authzv1.Sheet
	answers map[string]chan authzv1.Decision
	changed chan struct{}
	n       int
}

func (f *stubAuthz) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *stubAuthz) Authorize(ctx context.Context, r *authzv1.AuthorizeRequest) (*authzv1.AuthorizeResponse, error) {
	var args struct {
		TerminalID string `json:"terminal_id"`
	}
	if err := json.Unmarshal([]byte(r.GetArgumentsJson()), &args); err != nil {
		return nil, err
	}
	ch := make(chan authzv1.Decision, 1)
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("s%d", f.n)
	f.queue = append(f.queue, &authzv1.Sheet{Id: id, Client: r.GetCaller().GetClient(), TabId: r.GetCaller().GetTabId(),
		Capability: authzv1.Capability_CAPABILITY_READ, Reach: authzv1.Scope_SCOPE_GROUP, Tool: r.GetTool(),
		Subject: "tab " + args.TerminalID, SecondsLeft: 60})
	f.answers[id] = ch
	f.notifyLocked()
	f.mu.Unlock()
	select {
	case d := <-ch:
		return &authzv1.AuthorizeResponse{Allowed: d != authzv1.Decision_DECISION_DENY}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *stubAuthz) WatchSheets(_ *authzv1.WatchSheetsRequest, st grpc.ServerStreamingServer[authzv1.WatchSheetsResponse]) error {
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

func (f *stubAuthz) AnswerSheet(_ context.Context, r *authzv1.AnswerSheetRequest) (*authzv1.AnswerSheetResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.queue, func(s *authzv1.Sheet) bool { return s.GetId() == r.GetSheetId() })
	if i < 0 {
		return nil, fmt.Errorf("no sheet %s", r.GetSheetId())
	}
	f.queue = slices.Delete(f.queue, i, i+1)
	f.answers[r.GetSheetId()] <- r.GetDecision()
	f.notifyLocked()
	return &authzv1.AnswerSheetResponse{}, nil
}

// serveStubAuthz serves a stubAuthz on the instance's authz socket.
func serveStubAuthz(t *testing.T, in *instance) {
	t.Helper()
	srv, err := daemon.New("authz", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	authzv1.RegisterAuthzServiceServer(srv.GRPC, &stubAuthz{answers: map[string]chan authzv1.Decision{}, changed: make(chan struct{})})
	lis, err := daemon.Listen(in.env.Layout.DaemonAddr("authz"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.GRPC.Serve(lis) }()
	t.Cleanup(func() { srv.GRPC.Stop(); <-done })
}

// TestAttachAnswersSheet asks authz for read_output from one tab of
// another; the sheet shows up in `phantom attach`, where the human
// allows it once.
func TestAttachAnswersSheet(t *testing.T) {
	in := startPhantom(t)
	if !slices.Contains(paths.Daemons, "authz") {
		serveStubAuthz(t, in)
	}
	t1 := in.list(t)[0].GetId()
	r2, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: in.env.Home, Name: "logs"})
	if err != nil {
		t.Fatal(err)
	}
	t2 := r2.GetTerminal().GetId()

	c := in.attach(t, 100, 30, nil)
	c.waitStatus("shown", func(s string) bool { return strings.Contains(s, "2:logs") })

	cc, err := daemon.Dial(in.env.Layout.DaemonAddr("authz"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	type result struct {
		resp *authzv1.AuthorizeResponse
		err  error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		resp, err := authzv1.NewAuthzServiceClient(cc).Authorize(ctx, &authzv1.AuthorizeRequest{
			Caller:        &authzv1.Caller{Client: "test", ConnectionId: "c1", TabId: t1},
			Tool:          "read_output",
			ArgumentsJson: fmt.Sprintf(`{"terminal_id":%q}`, t2),
		}, grpc.WaitForReady(true))
		done <- result{resp, err}
	}()

	c.waitStatus("the sheet marker", func(s string) bool { return strings.Contains(s, "1 sheet") })
	c.send(prefix + "s")
	c.waitText("test in tab " + t1)
	c.waitText("wants to READ")
	c.waitText("read_output: ")
	c.waitText(t2)
	c.send("o")
	select {
	case r := <-done:
		if r.err != nil || !r.resp.GetAllowed() {
			t.Fatalf("Authorize after allowing once: %v, %v", r.resp, r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Authorize did not return after the answer; the client shows:\n%s", c.text())
	}
	c.waitFor("the box closed", func(s string) bool { return !strings.Contains(s, "wants to READ") })
	c.waitStatus("no marker", func(s string) bool { return !strings.Contains(s, "sheet (prefix s)") })
	c.send(prefix + "d")
	if code, _ := c.wait(); code != 0 {
		t.Fatalf("detach: exit %d", code)
	}
}
