// Package guard is the one gate in front of every daemon's gRPC methods.
// Who calls is decided once per connection from the kernel: the socket
// peer's credentials, and where that process sits in the process tree
// (internal/lineage) — never from files or variables the caller could have
// written.
//
//   - A process outside Phantom is the human's own terminal or one of
//     Phantom's daemons: it passes. A daemon that acts for an agent (the
//     gateway) says so in the call's metadata (ForAgent), which the guard
//     honours only from callers outside Phantom.
//
//   - A process inside Phantom — in a tab, or one that double-forked out of
//     its tab's tree — gets exactly what its MCP tools would give it: only
//     methods that are tools, never the fields hidden from agents, and each
//     call put to authz exactly as the gateway would put it. Every other
//     method (closing or resizing tabs, attaching, the watch streams,
//     reporting agent state, …) is the human's or the daemons', and is
//     refused.
//
//   - A peer over TCP (the compose stack) has no credentials to place it:
//     it is known by its client certificate, which mutual TLS verified
//     against the instance's CA (daemon.ServerCredentials), and may call
//     only what that certificate's holder needs (peers.go). Only the
//     gateway's certificate may say it calls for an agent.
//
// Calls that cannot be placed fail closed.
package guard

import (
	"context"
	"fmt"
	"slices"
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
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/toolreg"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// Guard is one daemon's gate. Create it with New, pass ServerOptions to
// daemon.New, and Close it after the server stopped.
type Guard struct {
	opts     Options
	tools    map[string]*toolreg.Tool // full method name → its MCP tool
	toolsErr error                    // the daemon's tools could not be placed: refuse them all

	once  sync.Once
	cc    *grpc.ClientConn
	authz authzv1.AuthzServiceClient
	err   error

	tabs *Tabs // terminald, for ForInstance's guards; closed by Close
}

// Options say how a daemon's guard places callers and reaches authz.
type Options struct {
	// Locate places a process in the instance's process tree.
	Locate func(pid int) (lineage.Place, error)
	// TabOf names the tab of a process placed inside Phantom; "" when it
	// left its tab's tree.
	TabOf func(ctx context.Context, pid int, p lineage.Place) (string, error)
	// AuthzAddr is where authz listens.
	AuthzAddr string
	// Open lists full method names, besides the tools, that callers inside
	// Phantom may use (they reveal or change nothing of the human's).
	Open []string
	// Refuse gives the reason told to callers inside Phantom for methods
	// that are not tools; a method not listed gets a generic reason.
	Refuse map[string]string
	// ClientName names the agent of a tab, as authz's grants know it;
	// "shell" when nil or when it returns "".
	ClientName func(tabID string) string
}

// New makes the guard of a daemon whose tools are the methods of fd
// carrying the MCP tool option, as the tool registry knows them. Should
// the registry not load, every call from inside Phantom is refused with
// the reason.
func New(fd protoreflect.FileDescriptor, opts Options) *Guard {
	g := &Guard{opts: opts, tools: map[string]*toolreg.Tool{}}
	reg, err := toolreg.Default()
	if err == nil {
		var tools []*toolreg.Tool
		tools, err = reg.ForFile(fd)
		for _, t := range tools {
			g.tools[t.Method] = t
		}
	}
	g.toolsErr = err
	return g
}

// ServerOptions are the gRPC options that install the guard: the caller
// placed once per connection, and the check on every call.
func (g *Guard) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		// Unix peers are placed by their credentials; TCP peers must
		// bring a client certificate of our CA (daemon.ServerCredentials).
		grpc.Creds(daemon.ServerCredentials(peercred.TransportCredentials(g.identify))),
		grpc.ChainUnaryInterceptor(g.unary),
		grpc.ChainStreamInterceptor(g.stream),
	}
}

// identify places a connecting process once, while its pidfd is open
// (peercred checks the process is still alive afterwards).
func (g *Guard) identify(c peercred.Creds) any {
	return Place(context.Background(), c, g.opts.Locate, g.opts.TabOf)
}

func (g *Guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := g.check(ctx, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (g *Guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, err := g.check(ss.Context(), info.FullMethod, nil)
	if err != nil {
		return err
	}
	return h(srv, &contextStream{ServerStream: ss, ctx: ctx})
}

// contextStream is a server stream with the guard's caller in its context.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *contextStream) Context() context.Context { return s.ctx }

// alwaysOpen are services any caller may use: health and reflection tell
// nothing an agent could not learn from the protos.
var alwaysOpen = []string{"/grpc.health.v1.Health/", "/grpc.reflection."}

// check lets a call through with its caller in the context, or says why
// not.
func (g *Guard) check(ctx context.Context, method string, req any) (context.Context, error) {
	c, err := callerOf(ctx)
	if err != nil {
		return ctx, status.Errorf(codes.PermissionDenied, "%s refused: %v", shortMethod(method), err)
	}
	ctx = NewContext(ctx, c)
	if c.Peer != "" && !peerMayCall(c.Peer, method) {
		return ctx, status.Errorf(codes.PermissionDenied, "%s refused: the certificate of %q may not call it (over TCP each certificate reaches only what its holder needs)",
			shortMethod(method), c.Peer)
	}
	if !c.Inside {
		return ctx, nil
	}
	for _, p := range alwaysOpen {
		if strings.HasPrefix(method, p) {
			return ctx, nil
		}
	}
	if slices.Contains(g.opts.Open, method) {
		return ctx, nil
	}
	if g.toolsErr != nil {
		return ctx, status.Errorf(codes.Internal, "%s refused: this daemon's tools are unknown: %v", shortMethod(method), g.toolsErr)
	}
	tool, ok := g.tools[method]
	if !ok {
		why, ok := g.opts.Refuse[method]
		if !ok {
			why = shortMethod(method) + " is for the human and Phantom's daemons, not for processes inside Phantom"
		}
		return ctx, status.Errorf(codes.PermissionDenied, "%s (the caller, process %d, runs %s)", why, c.PID, c.where())
	}
	m, _ := req.(proto.Message)
	if f := setHiddenField(m, tool); f != "" {
		return ctx, status.Errorf(codes.PermissionDenied, "%s: field %s is for the human's CLI only; processes inside Phantom may not set it (process %d runs %s)",
			tool.Name, f, c.PID, c.where())
	}
	return ctx, g.authorize(ctx, c, tool.Name, m)
}

// setHiddenField returns the first field hidden from agents that m sets,
// in the proto's order.
func setHiddenField(m proto.Message, tool *toolreg.Tool) string {
	if m == nil {
		return ""
	}
	r := m.ProtoReflect()
	for _, name := range tool.Option.GetHiddenFields() {
		if f := r.Descriptor().Fields().ByName(protoreflect.Name(name)); f != nil && r.Has(f) {
			return name
		}
	}
	return ""
}

// authorize puts a call from inside Phantom to authz as that process's
// own: its connection is the process (pid and start time), so a "once"
// answer dies with it.
func (g *Guard) authorize(ctx context.Context, c Caller, tool string, m proto.Message) error {
	args := "{}"
	if m != nil {
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
		if err != nil {
			return status.Errorf(codes.Internal, "encode %s arguments: %v", tool, err)
		}
		args = string(b)
	}
	az, err := g.client()
	if err != nil {
		return status.Errorf(codes.Unavailable, "calls from inside Phantom need authz, which is unreachable: %v", err)
	}
	client := "shell"
	if g.opts.ClientName != nil && c.TabID != "" {
		if name := g.opts.ClientName(c.TabID); name != "" {
			client = name
		}
	}
	resp, err := az.Authorize(ctx, &authzv1.AuthorizeRequest{
		Caller: &authzv1.Caller{
			Client:           client,
			ConnectionId:     ProcessConnection(c.PID, c.StartTime),
			TabId:            c.TabID,
			Pid:              int32(c.PID),
			ProcessStartTime: c.StartTime,
			InsideWithoutTab: c.TabID == "",
			// The process itself asks (the CLI, a script): a standing
			// grant is for what it runs, whatever name its tab records.
			Program: lineage.Program(procfs.Default, c.PID),
		},
		Tool:          tool,
		ArgumentsJson: args,
	})
	if err != nil {
		switch st := status.Convert(err); st.Code() {
		case codes.Canceled, codes.DeadlineExceeded:
			// The caller gave up while the permission check (perhaps a
			// sheet) was pending: say so, not that authz is down.
			return status.Errorf(st.Code(), "%s from inside Phantom (%s): gave up waiting for the permission check: %s", tool, c.where(), st.Message())
		default:
			return status.Errorf(codes.Unavailable, "calls from inside Phantom need authz: %s", st.Message())
		}
	}
	if !resp.GetAllowed() {
		return status.Errorf(codes.PermissionDenied, "%s from inside Phantom (%s): %s", tool, c.where(), resp.GetReason())
	}
	return nil
}

// ProcessConnection is the connection id of a process that calls daemons
// directly: its pid and start time, so that a reused pid is another
// connection.
func ProcessConnection(pid int, start uint64) string {
	return "proc-" + strconv.Itoa(pid) + "-" + strconv.FormatUint(start, 10)
}

// shortMethod is "CloseTerminal" for "/phantom.terminal.v1.TerminalService/CloseTerminal".
func shortMethod(full string) string {
	return full[strings.LastIndexByte(full, '/')+1:]
}

// client dials authz on first use; gRPC reconnects by itself after that.
func (g *Guard) client() (authzv1.AuthzServiceClient, error) {
	g.once.Do(func() {
		cc, err := daemon.Dial(g.opts.AuthzAddr)
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
	if g.tabs != nil {
		g.tabs.Close()
	}
}
