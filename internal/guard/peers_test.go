package guard

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/lineage"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestPeerMayCall checks the call graph over TCP, edge by edge.
func TestPeerMayCall(t *testing.T) {
	tests := []struct {
		peer, method string
		want         bool
	}{
		{"gateway", terminalv1.TerminalService_ListTerminals_FullMethodName, true},
		{"gateway", gitv1.GitService_ListWorktrees_FullMethodName, true},
		{"gateway", lspv1.LanguageServerService_ListLanguageServers_FullMethodName, true},
		{"gateway", authzv1.AuthzService_Authorize_FullMethodName, true},
		{"terminald", authzv1.AuthzService_WatchSheets_FullMethodName, true},
		{"terminald", authzv1.AuthzService_RecordEvent_FullMethodName, true},
		{"terminald", authzv1.AuthzService_ListGrants_FullMethodName, true},
		{"terminald", authzv1.AuthzService_RevokeGrant_FullMethodName, true},
		{"terminald", authzv1.AuthzService_AcceptGrant_FullMethodName, false},
		{"gateway", authzv1.AuthzService_RecordEvent_FullMethodName, false},
		{"gitd", authzv1.AuthzService_RecordEvent_FullMethodName, false},
		{"human", authzv1.AuthzService_RecordEvent_FullMethodName, false},
		{"gateway", authzv1.AuthzService_AnswerSheet_FullMethodName, false},
		{"gateway", authzv1.AuthzService_RevokeGrant_FullMethodName, false},
		{"lspd", authzv1.AuthzService_AnswerSheet_FullMethodName, false},
		{"terminald", gitv1.GitService_ListWorktrees_FullMethodName, false},
		{"lspd", authzv1.AuthzService_Authorize_FullMethodName, true},
		{"lspd", terminalv1.TerminalService_RunCommand_FullMethodName, false},
		{"gitd", terminalv1.TerminalService_CreateTerminal_FullMethodName, true},
		{"gitd", terminalv1.TerminalService_RunCommand_FullMethodName, false},
		{"authz", terminalv1.TerminalService_ListTerminals_FullMethodName, true},
		{"authz", terminalv1.TerminalService_Attach_FullMethodName, false},
		{"human", authzv1.AuthzService_AnswerSheet_FullMethodName, true},
		{"human", authzv1.AuthzService_ListSheets_FullMethodName, true},
		{"human", authzv1.AuthzService_RevokeGrant_FullMethodName, false},
		{"human", terminalv1.TerminalService_ListTerminals_FullMethodName, false},
		{"human", "/grpc.health.v1.Health/Check", true},
		{"human", "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", true},
		{"stranger", "/grpc.health.v1.Health/Check", true},
		{"stranger", terminalv1.TerminalService_ListTerminals_FullMethodName, false},
		{"", terminalv1.TerminalService_ListTerminals_FullMethodName, false},
	}
	for _, tt := range tests {
		if got := peerMayCall(tt.peer, tt.method); got != tt.want {
			t.Errorf("peerMayCall(%q, %s) = %v, want %v", tt.peer, tt.method, got, tt.want)
		}
	}
}

// fakeTerminald records the caller the guard let through.
type fakeTerminald struct {
	terminalv1.UnimplementedTerminalServiceServer
	callers chan Caller
}

func (f fakeTerminald) ListTerminals(ctx context.Context, _ *terminalv1.ListTerminalsRequest) (*terminalv1.ListTerminalsResponse, error) {
	c, _ := CallerFrom(ctx)
	f.callers <- c
	return &terminalv1.ListTerminalsResponse{}, nil
}

// TestGuardOverTLS runs a guarded terminald on TCP with mutual TLS and
// calls it with each identity's certificate: the call graph holds, and
// only the gateway and the daemons that open tabs for agents may act for
// one.
func TestGuardOverTLS(t *testing.T) {
	dir := t.TempDir()
	if err := daemon.WriteCerts(daemon.CertRequest{Dir: dir, Daemons: []string{"terminald", "gateway", "gitd", "lspd"}, Clients: []string{"human"}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(daemon.TLSDirEnv, dir)
	t.Setenv(daemon.TLSNameEnv, "terminald")
	g := New(terminalv1.File_phantom_terminal_v1_terminal_proto, Options{
		Locate: func(int) (lineage.Place, error) { t.Error("a TCP peer was placed by pid"); return lineage.Place{}, nil },
	})
	defer g.Close()
	srv, err := daemon.New("terminald", slog.New(slog.NewTextHandler(io.Discard, nil)), g.ServerOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeTerminald{callers: make(chan Caller, 1)}
	terminalv1.RegisterTerminalServiceServer(srv.GRPC, fake)
	lis, err := daemon.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	defer func() { cancel(); <-done }()

	conn := func(name string) *grpc.ClientConn {
		cfg, err := daemon.TLSFiles{Dir: dir, Name: name}.ClientTLSConfig()
		if err != nil {
			t.Fatal(err)
		}
		cc, err := grpc.NewClient("passthrough:///"+lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	}
	tests := []struct {
		name     string
		peer     string
		forAgent bool
		want     codes.Code
		caller   Caller
	}{
		{name: "gateway", peer: "gateway", want: codes.OK, caller: Caller{Peer: "gateway"}},
		{name: "gateway for an agent", peer: "gateway", forAgent: true, want: codes.OK, caller: Caller{Peer: "gateway", ForAgent: true, TabID: "t7"}},
		{name: "gitd", peer: "gitd", want: codes.OK, caller: Caller{Peer: "gitd"}},
		{name: "gitd for an agent", peer: "gitd", forAgent: true, want: codes.OK, caller: Caller{Peer: "gitd", ForAgent: true, TabID: "t7"}},
		{name: "lspd for an agent", peer: "lspd", forAgent: true, want: codes.PermissionDenied},
		{name: "human", peer: "human", want: codes.PermissionDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer ccancel()
			if tt.forAgent {
				cctx = ForAgent(cctx, "t7")
			}
			cc := conn(tt.peer)
			_, err := terminalv1.NewTerminalServiceClient(cc).ListTerminals(cctx, &terminalv1.ListTerminalsRequest{})
			if got := status.Code(err); got != tt.want {
				t.Fatalf("ListTerminals as %s = %v, want %v", tt.peer, err, tt.want)
			}
			if tt.want == codes.OK {
				if got := <-fake.callers; got != tt.caller {
					t.Errorf("caller = %+v, want %+v", got, tt.caller)
				}
			}
			// Health answers every certificate of the CA (probes, grpcurl).
			hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer hcancel()
			if _, err := healthpb.NewHealthClient(cc).Check(hctx, &healthpb.HealthCheckRequest{}); err != nil {
				t.Errorf("health as %s: %v", tt.peer, err)
			}
		})
	}
}
