package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
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
	ch := f.ask(&authzv1.Sheet{Client: r.GetCaller().GetClient(), TabId: r.GetCaller().GetTabId(),
		Capability: mcpv1.Capability_CAPABILITY_READ, Reach: authzv1.Scope_SCOPE_GROUP, Tool: r.GetTool(),
		Subject: "tab " + args.TerminalID, SecondsLeft: 60})
	select {
	case d := <-ch:
		return &authzv1.AuthorizeResponse{Allowed: d != authzv1.Decision_DECISION_DENY}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ask queues sheet s under the next id; the channel gets its answer.
func (f *stubAuthz) ask(s *authzv1.Sheet) <-chan authzv1.Decision {
	ch := make(chan authzv1.Decision, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	s.Id = fmt.Sprintf("s%d", f.n)
	f.queue = append(f.queue, s)
	f.answers[s.Id] = ch
	f.notifyLocked()
	return ch
}

// replace withdraws sheet id and puts s in its place on screen, in one
// change; the channel gets s's answer.
func (f *stubAuthz) replace(id string, s *authzv1.Sheet) <-chan authzv1.Decision {
	ch := make(chan authzv1.Decision, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	s.Id = fmt.Sprintf("s%d", f.n)
	i := slices.IndexFunc(f.queue, func(q *authzv1.Sheet) bool { return q.GetId() == id })
	f.queue[i] = s
	delete(f.answers, id)
	f.answers[s.Id] = ch
	f.notifyLocked()
	return ch
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
			Caller:        &authzv1.Caller{Client: "test", ConnectionId: "c1", TabId: t1, Program: "/outside/test"},
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
	c.waitText("d deny  o once") // the keys arm a second after the box shows
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

// syncBuffer is what the interactive screen wrote.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// screen is what the last full redraw shows.
func (b *syncBuffer) screen() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.b.String()
	const clear = "\x1b[H\x1b[2J"
	i := strings.LastIndex(s, clear)
	if i < 0 {
		return ""
	}
	return s[i+len(clear):]
}

func (b *syncBuffer) waitScreen(t *testing.T, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(b.screen()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; the screen shows:\n%s", what, b.screen())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// interactiveSheetStub runs `phantom sheet`'s screen against a stubAuthz
// served on a socket of its own, width columns wide. Closing keys ends it.
func interactiveSheetStub(t *testing.T, width int) (*stubAuthz, chan<- byte, *syncBuffer) {
	t.Helper()
	stub := &stubAuthz{answers: map[string]chan authzv1.Decision{}, changed: make(chan struct{})}
	srv, err := daemon.New("authz", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	authzv1.RegisterAuthzServiceServer(srv.GRPC, stub)
	addr := "unix://" + filepath.Join(t.TempDir(), "authz.sock")
	lis, err := daemon.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.GRPC.Serve(lis) }()
	cc, err := daemon.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	keys, out, done := make(chan byte), &syncBuffer{}, make(chan error, 1)
	go func() { done <- sheetLoop(context.Background(), authzv1.NewAuthzServiceClient(cc), keys, out, width) }()
	t.Cleanup(func() {
		close(keys)
		if err := <-done; err != nil {
			t.Errorf("phantom sheet: %v", err)
		}
		cc.Close()
		srv.GRPC.Stop()
		<-served
	})
	return stub, keys, out
}

// noAnswer fails if ch got an answer.
func noAnswer(t *testing.T, ch <-chan authzv1.Decision, why string) {
	t.Helper()
	select {
	case d := <-ch:
		t.Fatalf("%s: answered %v", why, d)
	default:
	}
}

func answerOf(t *testing.T, ch <-chan authzv1.Decision) authzv1.Decision {
	t.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("the sheet was not answered")
		return 0
	}
}

// TestInteractiveSheetArmsKeys: `phantom sheet` ignores the answer keys
// until a sheet has shown for a second, so a key meant for a withdrawn
// sheet cannot answer the one that replaced it.
func TestInteractiveSheetArmsKeys(t *testing.T) {
	stub, keys, out := interactiveSheetStub(t, 100)
	first := stub.ask(&authzv1.Sheet{Client: "claude", TabId: "t3", TabTitle: "build", Capability: mcpv1.Capability_CAPABILITY_READ,
		Reach: authzv1.Scope_SCOPE_GROUP, Tool: "read_output", Subject: "tab t5 (server logs)", SecondsLeft: 50})
	out.waitScreen(t, "the sheet, not armed", func(s string) bool {
		return strings.Contains(s, "tab t5 (server logs)") && strings.Contains(s, "keys arm in a second")
	})
	keys <- 'o'
	out.waitScreen(t, "the keys to arm", func(s string) bool { return strings.Contains(s, "d deny") })
	noAnswer(t, first, "a key pressed before the keys armed")

	second := stub.replace("s1", &authzv1.Sheet{Client: "claude", TabId: "t3", Capability: mcpv1.Capability_CAPABILITY_RUN,
		Reach: authzv1.Scope_SCOPE_ALL, Tool: "run_command", Subject: `"git push --force" typed into tab t1`, SecondsLeft: 50})
	keys <- 'a'
	out.waitScreen(t, "the replacing sheet, armed", func(s string) bool {
		return strings.Contains(s, "git push --force") && strings.Contains(s, "d deny")
	})
	noAnswer(t, second, "a key meant for the withdrawn sheet")
	keys <- 'd'
	if d := answerOf(t, second); d != authzv1.Decision_DECISION_DENY {
		t.Errorf("answered %v, want deny", d)
	}
}

// TestInteractiveSheetShowsAll: `phantom sheet` shows a long subject
// whole, wrapped to the terminal, with control and bidi characters made
// visible.
func TestInteractiveSheetShowsAll(t *testing.T) {
	stub, keys, out := interactiveSheetStub(t, 80)
	subject := `"make test" + 3000 spaces + "` + strings.Repeat("x", 500) + `; echo PWNED" typed into tab t2` + "\u202e\x1b]52;c;Zm9v\a"
	ch := stub.ask(&authzv1.Sheet{Client: "cl\x1baude", Capability: mcpv1.Capability_CAPABILITY_RUN,
		Reach: authzv1.Scope_SCOPE_GROUP, Tool: "run_command", Subject: subject, SecondsLeft: 50})
	out.waitScreen(t, "the armed sheet", func(s string) bool { return strings.Contains(s, "d deny") })
	screen := out.screen()
	var joined strings.Builder
	for _, l := range strings.Split(screen, "\r\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("a line wider than the terminal: %q", l)
		}
		joined.WriteString(strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(l, "  subject"), "  "), " "))
	}
	for _, want := range []string{strings.Repeat("x", 500) + `; echo PWNED" typed into tab t2\u202e\x1b]52;c;Zm9v\a`, `cl\x1baude`} {
		if !strings.Contains(joined.String(), want) {
			t.Errorf("the screen does not show %q whole:\n%s", want, screen)
		}
	}
	if strings.ContainsAny(screen, "\x1b\a\u202e") {
		t.Errorf("the screen carries raw control or bidi characters: %q", screen)
	}
	keys <- 'o'
	if d := answerOf(t, ch); d != authzv1.Decision_DECISION_ONCE {
		t.Errorf("answered %v, want once", d)
	}
}
