package terminald

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/daemon"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// fakeAuthz refuses read_output and allows everything else, recording what
// it was asked.
type fakeAuthz struct {
	authzv1.UnimplementedAuthzServiceServer
	mu    sync.Mutex
	asked []*authzv1.AuthorizeRequest
}

func (f *fakeAuthz) Authorize(_ context.Context, r *authzv1.AuthorizeRequest) (*authzv1.AuthorizeResponse, error) {
	f.mu.Lock()
	f.asked = append(f.asked, r)
	f.mu.Unlock()
	if r.GetTool() == "read_output" {
		return &authzv1.AuthorizeResponse{Reason: "no read grant for this tab"}, nil
	}
	return &authzv1.AuthorizeResponse{Allowed: true}, nil
}

// The guard test runs this test binary inside a tab as a gRPC client of
// terminald: with PHANTOM_GUARD_CLIENT set, it makes the calls and prints
// one line per call, then exits.
func TestMain(m *testing.M) {
	if addr := os.Getenv("PHANTOM_GUARD_CLIENT"); addr != "" {
		guardClient(addr, os.Getenv("PHANTOM_GUARD_TARGET"))
		return
	}
	os.Exit(m.Run())
}

func guardClient(addr, target string) {
	cc, err := daemon.Dial(addr)
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	defer cc.Close()
	c := terminalv1.NewTerminalServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: target})
	fmt.Printf("read_output: %s\n", status.Code(err))
	_, err = c.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
	fmt.Printf("list_terminals: %s\n", status.Code(err))
	stream, err := c.Attach(ctx)
	if err == nil {
		_, err = stream.Recv()
	}
	fmt.Printf("attach: %s\n", status.Code(err))
	// Keep the tab's program alive until the test has read the output.
	time.Sleep(time.Minute)
}

func TestCallsFromInsideATabGoThroughAuthz(t *testing.T) {
	in := start(t, "/bin/bash")
	fake := &fakeAuthz{}
	srv, err := daemon.New("authz", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	authzv1.RegisterAuthzServiceServer(srv.GRPC, fake)
	lis, err := daemon.Listen(in.env.Layout.DaemonAddr("authz"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-done })

	other := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"sleep", "1000"}})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tab := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"env",
		"PHANTOM_GUARD_CLIENT=" + in.addr, "PHANTOM_GUARD_TARGET=" + other.GetId(), exe}})
	in.waitOutput(t, tab.GetId(), "attach:")
	out := strings.Join(in.read(t, tab.GetId(), 10), "\n")
	for _, want := range []string{"read_output: PermissionDenied", "list_terminals: OK", "attach: PermissionDenied"} {
		if !strings.Contains(out, want) {
			t.Errorf("tab printed:\n%s\nwant a line %q", out, want)
		}
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.asked) == 0 || fake.asked[0].GetCaller().GetTabId() != tab.GetId() || !strings.Contains(fake.asked[0].GetArgumentsJson(), other.GetId()) {
		t.Errorf("authz was asked %v; want read_output from tab %s naming %s", fake.asked, tab.GetId(), other.GetId())
	}

	// The test process itself runs outside every tab: it is the human.
	if _, err := in.c.ReadOutput(context.Background(), &terminalv1.ReadOutputRequest{TerminalId: other.GetId()}); err != nil {
		t.Errorf("ReadOutput from outside any tab: %v", err)
	}
}
