package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/testenv"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// heldTool is the tool whose permission check the fake authz holds until
// the test releases it, as a sheet waiting for the human would.
const heldTool = "read_output"

// fakeAuthz allows every call at once, except heldTool's, which waits for
// release (then allowed) or for its call to be cancelled.
type fakeAuthz struct {
	authzv1.UnimplementedAuthzServiceServer
	waiting   chan string // a held call's connection id, when it starts waiting
	release   chan struct{}
	cancelled chan struct{} // a held call's context ended
	ended     chan string   // connection ids EndConnection was told about
}

func newFakeAuthz() *fakeAuthz {
	return &fakeAuthz{waiting: make(chan string, 16), release: make(chan struct{}, 16),
		cancelled: make(chan struct{}, 16), ended: make(chan string, 64)}
}

func (f *fakeAuthz) Authorize(ctx context.Context, req *authzv1.AuthorizeRequest) (*authzv1.AuthorizeResponse, error) {
	if req.GetTool() != heldTool {
		return &authzv1.AuthorizeResponse{Allowed: true}, nil
	}
	f.waiting <- req.GetCaller().GetConnectionId()
	select {
	case <-f.release:
		return &authzv1.AuthorizeResponse{Allowed: true}, nil
	case <-ctx.Done():
		f.cancelled <- struct{}{}
		return nil, ctx.Err()
	}
}

func (f *fakeAuthz) ListPolicy(context.Context, *authzv1.ListPolicyRequest) (*authzv1.ListPolicyResponse, error) {
	return &authzv1.ListPolicyResponse{Tools: []*authzv1.ToolPolicy{{Tool: "list_terminals"}}}, nil
}

func (f *fakeAuthz) EndConnection(_ context.Context, req *authzv1.EndConnectionRequest) (*authzv1.EndConnectionResponse, error) {
	select {
	case f.ended <- req.GetConnectionId():
	default:
	}
	return &authzv1.EndConnectionResponse{}, nil
}

// fakeTerminald serves two tabs, one with a foreground process and one
// without (a null message in structuredContent), and records agent states.
type fakeTerminald struct {
	terminalv1.UnimplementedTerminalServiceServer
	mu     sync.Mutex
	states []terminalv1.AgentState
	// running is told of each RunCommand, which then waits, as a command
	// run with wait_seconds does, until finish (or its call ends).
	running, finish chan struct{}
}

func (f *fakeTerminald) RunCommand(ctx context.Context, req *terminalv1.RunCommandRequest) (*terminalv1.RunCommandResponse, error) {
	f.running <- struct{}{}
	select {
	case <-f.finish:
		return &terminalv1.RunCommandResponse{Result: &terminalv1.CommandResult{Command: req.GetCommand()}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeTerminald) ListTerminals(context.Context, *terminalv1.ListTerminalsRequest) (*terminalv1.ListTerminalsResponse, error) {
	return &terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{
		{Id: "t1", Title: "bash", Directory: "/src", Idle: true, DevServerPorts: []uint32{3000, 8080},
			ForegroundProcess: &terminalv1.Process{Pid: 42, Name: "bash"}, AgentState: terminalv1.AgentState_AGENT_STATE_WORKING},
		{Id: "t2"},
	}}, nil
}

func (f *fakeTerminald) ReadOutput(_ context.Context, req *terminalv1.ReadOutputRequest) (*terminalv1.ReadOutputResponse, error) {
	return &terminalv1.ReadOutputResponse{TerminalId: req.GetTerminalId(), Lines: []string{"$ make", "ok"}}, nil
}

func (f *fakeTerminald) SetAgentState(_ context.Context, req *terminalv1.SetAgentStateRequest) (*terminalv1.SetAgentStateResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states = append(f.states, req.GetState())
	return &terminalv1.SetAgentStateResponse{}, nil
}

func (f *fakeTerminald) sawState(s terminalv1.AgentState) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, got := range f.states {
		if got == s {
			return true
		}
	}
	return false
}

// fakeGateway is a real gateway on a Unix socket with fake authz and
// terminald behind it over gRPC; every peer is placed in tab t1.
type fakeGateway struct {
	s         *Server
	sock      string
	authz     *fakeAuthz
	terminald *fakeTerminald
}

// startFakeGateway serves a gateway and its fake daemons until the test
// ends, then stops them and checks that no goroutine was left behind.
func startFakeGateway(t testing.TB, progressEvery time.Duration) *fakeGateway {
	t.Helper()
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	g := &fakeGateway{sock: filepath.Join(dir, "mcp.sock"), authz: newFakeAuthz(),
		terminald: &fakeTerminald{running: make(chan struct{}, 16), finish: make(chan struct{}, 16)}}
	var daemons []*grpc.Server
	for name, register := range map[string]func(*grpc.Server){
		"authz":     func(s *grpc.Server) { authzv1.RegisterAuthzServiceServer(s, g.authz) },
		"terminald": func(s *grpc.Server) { terminalv1.RegisterTerminalServiceServer(s, g.terminald) },
	} {
		lis, err := net.Listen("unix", filepath.Join(dir, name+".sock"))
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		register(srv)
		go srv.Serve(lis)
		daemons = append(daemons, srv)
	}
	s, err := NewServer(Options{
		TabStateDir: dir,
		Addr:        func(n string) string { return "unix://" + dir + "/" + n + ".sock" },
		Logger:      slog.New(slog.DiscardHandler),
		locate: func(pid int) (guard.Caller, error) {
			return guard.Caller{Inside: true, PID: pid, TabID: "t1"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.progressEvery = progressEvery
	g.s = s
	lis, err := net.Listen("unix", g.sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return 10 s after the gateway was stopped")
		}
		for _, d := range daemons {
			d.Stop()
		}
		testenv.Eventually(t, "the gateway's goroutines to end", func() (bool, string) {
			n := runtime.NumGoroutine()
			buf := make([]byte, 1<<20)
			return n <= before, fmt.Sprintf("%d goroutines, %d before\n%s", n, before, buf[:runtime.Stack(buf, true)])
		})
	})
	return g
}

// dialHello connects to sock and completes the hello, as the bridge does;
// the reader holds whatever followed the hello's answer.
func dialHello(t testing.TB, sock string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	b, _ := json.Marshal(Hello{Hello: "phantom", Version: HelloVersion, PID: os.Getpid(), Client: "sdk-test"})
	nc.Write(append(b, '\n'))
	br := bufio.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if l, _ := br.ReadString('\n'); !strings.Contains(l, `"hello":"ok"`) {
		t.Fatalf("hello answered %q", l)
	}
	nc.SetReadDeadline(time.Time{})
	return nc, br
}

// readCloser reads from the hello's reader and closes the socket.
type readCloser struct {
	io.Reader
	io.Closer
}

// connectSDK opens an MCP session with the official Go SDK client pinned
// to version, over a socket that passed the hello.
func connectSDK(t *testing.T, sock, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	nc, br := dialHello(t, sock)
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: readCloser{br, nc}, Writer: nc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect pinned to %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rawClient speaks JSON-RPC lines over a socket that passed the hello.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, sock string) *rawClient {
	nc, br := dialHello(t, sock)
	return &rawClient{t: t, nc: nc, br: br}
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next line, failing the test after 10 s.
func (c *rawClient) next() string {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := c.br.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading: %v (got %q)", err, l)
	}
	return l
}

// initialize opens the session at version.
func (c *rawClient) initialize(version string) string {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	l := c.next()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return l
}
