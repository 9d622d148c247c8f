// Package guard closes the back door around the gateway: a process inside a
// Phantom tab that calls a daemon itself — `phantom read OTHER_TAB`, or
// grpcurl on a daemon's socket — is treated as that tab's agent, and each of
// its calls that is an MCP tool is put to authz exactly as the gateway
// would. Which calls need which capability is authz's policy, not the
// daemon's: the guard only asks.
//
// Callers outside every tab are the human's own terminal and Phantom's
// daemons; they pass. Some methods (attaching as the human, reporting agent
// state) are refused to callers inside tabs outright.
//
// Processes of one user can always reach each other (ptrace, /proc), so this
// is a fence against agents wandering through the obvious doors, not a wall
// against a determined same-uid attacker.
package guard

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabident"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// Guard is one daemon's gate. Create it with New, pass ServerOptions to
// daemon.New, and Close it after the server stopped.
type Guard struct {
	layout paths.Layout
	opts   Options
	tools  map[string]string // full method name → MCP tool name

	once  sync.Once
	cc    *grpc.ClientConn
	authz authzv1.AuthzServiceClient
	err   error
}

// peer is what the guard learns of a connection once, at its handshake.
type peer struct {
	pid   int
	tabID string // "" outside every tab
}

// Options says what a daemon's guard must know besides its tools.
type Options struct {
	// Refuse maps full method names that callers inside tabs may never
	// use to the reason they are told.
	Refuse map[string]string
	// ClientName names the agent of a tab, as authz's grants know it;
	// "shell" when nil or when it returns "".
	ClientName func(tabID string) string
}

// New makes the guard of a daemon whose tools are the methods of fd
// carrying the MCP tool option.
func New(layout paths.Layout, fd protoreflect.FileDescriptor, opts Options) *Guard {
	return &Guard{layout: layout, opts: opts, tools: toolMethods(fd)}
}

// ServerOptions are the gRPC options that install the guard: peer identity
// once per connection, and the check on every call.
func (g *Guard) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.Creds(peercred.TransportCredentials(g.identify)),
		grpc.ChainUnaryInterceptor(g.unary),
		grpc.ChainStreamInterceptor(g.stream),
	}
}

// toolMethods maps each method carrying the MCP tool option to its tool.
func toolMethods(fd protoreflect.FileDescriptor) map[string]string {
	out := map[string]string{}
	svcs := fd.Services()
	for i := range svcs.Len() {
		ms := svcs.Get(i).Methods()
		for j := range ms.Len() {
			m := ms.Get(j)
			if t, ok := proto.GetExtension(m.Options(), mcpv1.E_Tool).(*mcpv1.Tool); ok && t.GetName() != "" {
				out[fmt.Sprintf("/%s/%s", svcs.Get(i).FullName(), m.Name())] = t.GetName()
			}
		}
	}
	return out
}

// identify runs once per connection (peercred.TransportCredentials).
func (g *Guard) identify(c peercred.Creds) any {
	p := peer{pid: c.PID}
	if g.isDaemon(c.PID) {
		return p
	}
	if st, ok, err := tabident.Find(procfs.Default, g.layout.TabStateDir(), c.PID); err == nil && ok {
		p.tabID = st.TabID
	}
	return p
}

// isDaemon reports whether pid is one of Phantom's own daemons, as recorded
// by `phantom up`. A daemon started from a tab descends from it for as long
// as `phantom up` runs, yet it is not that tab's agent.
func (g *Guard) isDaemon(pid int) bool {
	for _, name := range paths.Daemons {
		b, err := os.ReadFile(g.layout.PIDFile(name))
		if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			return true
		}
	}
	return pid == os.Getpid()
}

func callerOf(ctx context.Context) peer {
	id, _ := peercred.IdentityFromContext(ctx)
	p, _ := id.(peer)
	return p
}

func (g *Guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := g.check(ctx, info.FullMethod, req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (g *Guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := g.check(ss.Context(), info.FullMethod, nil); err != nil {
		return err
	}
	return h(srv, ss)
}

// check lets a call through, or says why not.
func (g *Guard) check(ctx context.Context, method string, req any) error {
	c := callerOf(ctx)
	if c.tabID == "" {
		return nil
	}
	if why, ok := g.opts.Refuse[method]; ok {
		return status.Errorf(codes.PermissionDenied, "%s (the caller runs in Phantom tab %s)", why, c.tabID)
	}
	tool, ok := g.tools[method]
	if !ok {
		return nil
	}
	args := "{}"
	if m, ok := req.(proto.Message); ok {
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
		if err != nil {
			return status.Errorf(codes.Internal, "encode %s arguments: %v", tool, err)
		}
		args = string(b)
	}
	az, err := g.client()
	if err != nil {
		return status.Errorf(codes.Unavailable, "calls from inside Phantom tab %s need authz, which is unreachable: %v", c.tabID, err)
	}
	client := "shell"
	if g.opts.ClientName != nil {
		if name := g.opts.ClientName(c.tabID); name != "" {
			client = name
		}
	}
	resp, err := az.Authorize(ctx, &authzv1.AuthorizeRequest{
		Caller:        &authzv1.Caller{Client: client, ConnectionId: "peer-" + strconv.Itoa(c.pid), TabId: c.tabID, Pid: int32(c.pid)},
		Tool:          tool,
		ArgumentsJson: args,
	})
	if err != nil {
		switch st := status.Convert(err); st.Code() {
		case codes.Canceled, codes.DeadlineExceeded:
			// The caller gave up while the permission check (perhaps a
			// sheet) was pending: say so, not that authz is down.
			return status.Errorf(st.Code(), "%s from inside Phantom tab %s: gave up waiting for the permission check: %s", tool, c.tabID, st.Message())
		default:
			return status.Errorf(codes.Unavailable, "calls from inside Phantom tab %s need authz: %s", c.tabID, st.Message())
		}
	}
	if !resp.GetAllowed() {
		return status.Errorf(codes.PermissionDenied, "%s from inside Phantom tab %s: %s", tool, c.tabID, resp.GetReason())
	}
	return nil
}

// client dials authz on first use; gRPC reconnects by itself after that.
func (g *Guard) client() (authzv1.AuthzServiceClient, error) {
	g.once.Do(func() {
		cc, err := daemon.Dial(g.layout.DaemonAddr("authz"))
		if err != nil {
			g.err = err
			return
		}
		g.cc, g.authz = cc, authzv1.NewAuthzServiceClient(cc)
	})
	return g.authz, g.err
}

// Close drops the authz connection, if one was made.
func (g *Guard) Close() {
	g.once.Do(func() { g.err = fmt.Errorf("the daemon is stopping") })
	if g.cc != nil {
		g.cc.Close()
	}
}
