package daemon

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/errdefs"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// fakeTerminals is a tiny TerminalService for exercising the chain:
// ListThemeColors panics, ReadOutput fails with a wrapped domain error,
// ListTerminals succeeds and WatchTerminals (a stream) fails with one.
type fakeTerminals struct {
	terminalv1.UnimplementedTerminalServiceServer
}

func (fakeTerminals) ListThemeColors(context.Context, *terminalv1.ListThemeColorsRequest) (*terminalv1.ListThemeColorsResponse, error) {
	panic("boom in ListThemeColors")
}

func (fakeTerminals) ReadOutput(_ context.Context, r *terminalv1.ReadOutputRequest) (*terminalv1.ReadOutputResponse, error) {
	return nil, fmt.Errorf("tab %q: %w", r.GetTerminalId(), errdefs.ErrNotFound)
}

func (fakeTerminals) ListTerminals(context.Context, *terminalv1.ListTerminalsRequest) (*terminalv1.ListTerminalsResponse, error) {
	return &terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{{Id: "t1"}}}, nil
}

func (fakeTerminals) WatchTerminals(*terminalv1.WatchTerminalsRequest, grpc.ServerStreamingServer[terminalv1.WatchTerminalsResponse]) error {
	return fmt.Errorf("watch: %w", errdefs.ErrUnavailable)
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// served is a fake daemon serving on a Unix socket, with a client.
type served struct {
	srv    *Server
	client terminalv1.TerminalServiceClient
	health healthpb.HealthClient
	cc     *grpc.ClientConn
	sock   string
	log    *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

// serveFake starts the fake behind daemon.New's chain. stop (also run at
// cleanup) cancels the context and returns what Serve returned.
func serveFake(t *testing.T) *served {
	t.Helper()
	log := &syncBuffer{}
	srv, err := New("faked", slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	terminalv1.RegisterTerminalServiceServer(srv.GRPC, fakeTerminals{})
	sock := shortDir(t) + "/faked.sock"
	addr := "unix://" + sock
	lis, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{srv: srv, sock: sock, log: log, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(ctx, lis) }()
	s.cc, err = Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	s.client = terminalv1.NewTerminalServiceClient(s.cc)
	s.health = healthpb.NewHealthClient(s.cc)
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop closes the client, cancels Serve and waits for it; it may be called
// more than once.
func (s *served) stop(t *testing.T) error {
	t.Helper()
	if s.cancel == nil {
		return nil
	}
	s.cc.Close()
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		return err
	case <-time.After(GracePeriod + 10*time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
		return nil
	}
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitServing polls health until the overall status is SERVING: Serve marks
// it so just before it starts accepting.
func waitServing(t *testing.T, h healthpb.HealthClient) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := h.Check(callCtx(t), &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		last = fmt.Sprint(resp.GetStatus(), err)
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("health never reported SERVING; last: %s", last)
}

// TestChain sends calls through the whole interceptor chain and checks what
// each layer makes of them.
func TestChain(t *testing.T) {
	s := serveFake(t)
	waitServing(t, s.health)

	tests := []struct {
		name string
		call func(ctx context.Context) error
		code codes.Code
		// msg lists substrings the status message must contain.
		msg []string
	}{
		{
			name: "success",
			call: func(ctx context.Context) error {
				resp, err := s.client.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
				if err == nil && len(resp.GetTerminals()) != 1 {
					return fmt.Errorf("got %v", resp)
				}
				return err
			},
			code: codes.OK,
		},
		{
			name: "panic becomes Internal",
			call: func(ctx context.Context) error {
				_, err := s.client.ListThemeColors(ctx, &terminalv1.ListThemeColorsRequest{})
				return err
			},
			code: codes.Internal,
			msg:  []string{"boom in ListThemeColors"},
		},
		{
			name: "wrapped ErrNotFound becomes NotFound",
			call: func(ctx context.Context) error {
				_, err := s.client.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: "t999"})
				return err
			},
			code: codes.NotFound,
			msg:  []string{`tab "t999"`, "not found"},
		},
		{
			name: "empty terminal_id fails validation",
			call: func(ctx context.Context) error {
				_, err := s.client.ReadOutput(ctx, &terminalv1.ReadOutputRequest{})
				return err
			},
			code: codes.InvalidArgument,
			msg:  []string{"terminal_id"},
		},
		{
			name: "out-of-range lines fails validation",
			call: func(ctx context.Context) error {
				n := int32(0)
				_, err := s.client.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: "t1", Lines: &n})
				return err
			},
			code: codes.InvalidArgument,
			msg:  []string{"lines"},
		},
		{
			name: "unimplemented passes through",
			call: func(ctx context.Context) error {
				_, err := s.client.ListGroups(ctx, &terminalv1.ListGroupsRequest{})
				return err
			},
			code: codes.Unimplemented,
		},
		{
			name: "stream error is translated",
			call: func(ctx context.Context) error {
				st, err := s.client.WatchTerminals(ctx, &terminalv1.WatchTerminalsRequest{})
				if err != nil {
					return err
				}
				_, err = st.Recv()
				return err
			},
			code: codes.Unavailable,
			msg:  []string{"watch", "unavailable"},
		},
		{
			name: "server still serves after a panic",
			call: func(ctx context.Context) error {
				_, err := s.client.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
				return err
			},
			code: codes.OK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(callCtx(t))
			st, ok := status.FromError(err)
			if !ok {
				t.Fatalf("error %v carries no status", err)
			}
			if st.Code() != tt.code {
				t.Fatalf("code = %v (%q), want %v", st.Code(), st.Message(), tt.code)
			}
			for _, m := range tt.msg {
				if !strings.Contains(st.Message(), m) {
					t.Errorf("message %q does not contain %q", st.Message(), m)
				}
			}
		})
	}

	// The panic was logged with its value, and every call with its code.
	log := s.log.String()
	for _, want := range []string{"panic in handler", "boom in ListThemeColors", "daemon=faked", "grpc.code=NotFound"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestHealth checks that Serve reports SERVING for the server as a whole
// and for every registered service, and NOT_FOUND for unknown ones.
func TestHealth(t *testing.T) {
	s := serveFake(t)
	waitServing(t, s.health)
	for _, svc := range []string{"", terminalv1.TerminalService_ServiceDesc.ServiceName, "grpc.health.v1.Health"} {
		resp, err := s.health.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v; want SERVING", svc, resp.GetStatus(), err)
		}
	}
	_, err := s.health.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: "no.such.Service"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Check(unknown) = %v, want NotFound", err)
	}
}

// TestGracefulStop checks that cancelling Serve's context stops the server
// cleanly (Serve returns nil, the socket is gone, calls fail) and that no
// goroutine outlives it.
//
// Not parallel: it counts the process's goroutines.
func TestGracefulStop(t *testing.T) {
	before := runtime.NumGoroutine()

	s := serveFake(t)
	waitServing(t, s.health)
	if _, err := s.client.ListTerminals(callCtx(t), &terminalv1.ListTerminalsRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("Serve returned %v after a graceful stop, want nil", err)
	}
	if _, err := os.Lstat(s.sock); !os.IsNotExist(err) {
		t.Errorf("socket %s still there after stop: %v", s.sock, err)
	}
	if !strings.Contains(s.log.String(), "stopped") {
		t.Errorf("log lacks the stop:\n%s", s.log.String())
	}

	// Goroutines wind down asynchronously; poll rather than sleep.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutine leak: %d before, %d after stop:\n%s", before, n, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeReturnsListenerError checks that Serve does not hang when its
// listener is unusable.
func TestServeReturnsListenerError(t *testing.T) {
	srv, err := New("faked", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := Listen("unix://" + shortDir(t) + "/x.sock")
	if err != nil {
		t.Fatal(err)
	}
	lis.Close()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), lis) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Serve on a closed listener returned nil")
		}
	case <-time.After(15 * time.Second):
		srv.GRPC.Stop()
		t.Fatal("Serve on a closed listener did not return")
	}
}
