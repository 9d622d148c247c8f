package terminald

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
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// guard closes the back door around the gateway: a process inside a Phantom
// tab that calls terminald itself — `phantom read OTHER_TAB`, or grpcurl on
// the socket — is treated as that tab's agent, and each of its calls that is
// an MCP tool is put to authz exactly as the gateway would. Which calls need
// which capability is authz's policy, not terminald's: the guard only asks.
//
// Callers outside every tab are the human's own terminal and Phantom's
// daemons; they pass. The human attaching to a window must not be inside a
// tab either, so Attach from a tab is refused outright.
//
// Processes of one user can always reach each other (ptrace, /proc), so this
// is a fence against agents wandering through the obvious doors, not a wall
// against a determined same-uid attacker.
type guard struct {
	layout paths.Layout
	ws     *workspace.Workspace
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

func newGuard(layout paths.Layout, ws *workspace.Workspace) *guard {
	return &guard{layout: layout, ws: ws, tools: toolMethods(terminalv1.File_phantom_terminal_v1_terminal_proto)}
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
func (g *guard) identify(c peercred.Creds) any {
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
func (g *guard) isDaemon(pid int) bool {
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

func (g *guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := g.check(ctx, info.FullMethod, req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (g *guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := g.check(ss.Context(), info.FullMethod, nil); err != nil {
		return err
	}
	return h(srv, ss)
}

// check lets a call through, or says why not.
func (g *guard) check(ctx context.Context, method string, req any) error {
	c := callerOf(ctx)
	if c.tabID == "" {
		return nil
	}
	switch method {
	case terminalv1.TerminalService_Attach_FullMethodName:
		return status.Errorf(codes.PermissionDenied, "attach from inside Phantom tab %s is refused: attach from a terminal outside Phantom", c.tabID)
	case terminalv1.TerminalService_SetAgentState_FullMethodName:
		return status.Errorf(codes.PermissionDenied, "only the gateway reports agent state; the caller runs in tab %s", c.tabID)
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
	if t, err := g.ws.Get(c.tabID); err == nil && t.AgentClient != "" {
		client = t.AgentClient
	}
	resp, err := az.Authorize(ctx, &authzv1.AuthorizeRequest{
		Caller:        &authzv1.Caller{Client: client, ConnectionId: "peer-" + strconv.Itoa(c.pid), TabId: c.tabID, Pid: int32(c.pid)},
		Tool:          tool,
		ArgumentsJson: args,
	})
	if err != nil {
		return status.Errorf(codes.Unavailable, "calls from inside Phantom tab %s need authz: %v", c.tabID, err)
	}
	if !resp.GetAllowed() {
		return status.Errorf(codes.PermissionDenied, "%s from inside Phantom tab %s: %s", tool, c.tabID, resp.GetReason())
	}
	return nil
}

// client dials authz on first use; gRPC reconnects by itself after that.
func (g *guard) client() (authzv1.AuthzServiceClient, error) {
	g.once.Do(func() {
		cc, err := daemon.Dial(authzAddr(g.layout))
		if err != nil {
			g.err = err
			return
		}
		g.cc, g.authz = cc, authzv1.NewAuthzServiceClient(cc)
	})
	return g.authz, g.err
}

// authzAddr is where authz listens: PHANTOM_AUTHZ_ADDR, or its socket in
// the runtime directory.
func authzAddr(l paths.Layout) string {
	if addr := os.Getenv("PHANTOM_AUTHZ_ADDR"); addr != "" {
		return addr
	}
	return l.DaemonAddr("authz")
}

// close drops the authz connection, if one was made.
func (g *guard) close() {
	g.once.Do(func() { g.err = fmt.Errorf("terminald is stopping") })
	if g.cc != nil {
		g.cc.Close()
	}
}
