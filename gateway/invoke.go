package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/guard"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// authzDaemon is the daemon every tool call is checked by first.
const authzDaemon = "authz"

// maxCallTime bounds one tool call, the wait for a permission sheet
// included (authz times sheets out well before).
const maxCallTime = 10 * time.Minute

// Encodings of requests and responses: snake_case names as in the protos
// and the tool schemas; every field present in results.
var (
	argsDecoder    = protojson.UnmarshalOptions{DiscardUnknown: false}
	argsEncoder    = protojson.MarshalOptions{UseProtoNames: true}
	resultsEncoder = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}
)

// callTool runs one tools/call: arguments, then authz, then the daemon.
// Anything that goes wrong is a result with isError, worded for the model:
// the SDK answers only the protocol's own errors (an unknown tool).
func (c *conn) callTool(ctx context.Context, t *tool, req *mcp.CallToolRequest) *mcp.CallToolResult {
	msg, err := decodeArgs(t, req.Params.Arguments, c.s.validator)
	if err != nil {
		return toolError("%s was not run: %v. Fix the arguments and call it again.", t.name, err)
	}
	c.state.callStarted()
	defer c.state.callEnded()
	// A call ends with its request (the client cancelled it, or went
	// away), with the connection (the gateway stops) or after maxCallTime.
	ctx, cancel := context.WithTimeout(ctx, maxCallTime)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	return c.run(ctx, t, msg, progressFor(req, c.s.progressEvery))
}

// toolError is a failed call's result.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// run asks authz, then calls the daemon.
func (c *conn) run(ctx context.Context, t *tool, msg protoreflect.ProtoMessage, p progress) *mcp.CallToolResult {
	if t.opt.GetNeedsTab() && c.peer.tabID() == "" {
		return toolError("%s acts on the window of the calling agent's tab, and this agent does not run inside a Phantom tab; start it from a Phantom tab", t.name)
	}
	if err := c.fillCaller(ctx, msg); err != nil {
		return toolError("%s: %v", t.name, err)
	}
	if res := c.authorize(ctx, t, msg, p); res != nil {
		return res
	}
	b, err := c.s.backends.get(t.daemon)
	if err != nil {
		return toolError("%s: %v", t.name, err)
	}
	b.ready(ctx)
	// The daemon learns the call is an agent's: what an agent changes (a
	// tab's group, its name) is marked as the agent's, never the human's.
	agent := c.peer.caller
	agent.ForAgent = true
	ctx = guard.ForAgentCaller(ctx, agent)
	var j, text []byte
	stop := p.whileDaemonWaits(ctx, t, msg)
	defer stop() // before the result is written: no progress follows it
	if t.wire != nil {
		// An answer with lists is encoded from its wire form, each list
		// element's JSON cached (cost_wire.go).
		raw := &rawReply{}
		if err := b.cc.Invoke(ctx, t.method, msg, raw, rawAnswer); err != nil {
			return callError(t, b, err)
		}
		if j, text, err = t.wire.encode(raw.b); err != nil {
			return toolError("%s: decode %s's answer: %v", t.name, t.daemon, err)
		}
	} else {
		out := t.output.New().Interface()
		if err := b.cc.Invoke(ctx, t.method, msg, out); err != nil {
			return callError(t, b, err)
		}
		if j, err = resultJSON(out); err != nil {
			return toolError("%s: encode %s's answer: %v", t.name, t.daemon, err)
		}
	}
	if c.lc != nil {
		return c.lc.results.result(j, text) // spliced in as it is written (cost_splice.go)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(j)}}, StructuredContent: json.RawMessage(j)}
}

// authorize asks authz about the call; nil means allowed. Tools authz's
// policy lists as free skip the round trip. Authz being unreachable refuses
// every other call: the gateway never decides by itself.
func (c *conn) authorize(ctx context.Context, t *tool, msg protoreflect.ProtoMessage, p progress) *mcp.CallToolResult {
	if c.s.isFree(ctx, t.name) {
		return nil
	}
	b, err := c.s.backends.get(authzDaemon)
	if err != nil {
		return toolError("%s was not run: the permission check failed: %v", t.name, err)
	}
	b.ready(ctx)
	args, err := argsEncoder.Marshal(msg)
	if err != nil {
		return toolError("%s was not run: encode its arguments for the permission check: %v", t.name, err)
	}
	req := &authzv1.AuthorizeRequest{
		Caller: &authzv1.Caller{
			Client:           c.peer.hello.Client,
			ConnectionId:     c.id,
			TabId:            c.peer.tabID(),
			Pid:              int32(c.peer.hello.PID),
			InsideWithoutTab: c.peer.caller.Inside && c.peer.tabID() == "",
			Program:          c.peer.program,
		},
		Tool:          t.name,
		ArgumentsJson: string(args),
	}
	done, stop := c.state.authorizing(), p.whileWaiting(ctx, t.name)
	resp, err := authzv1.NewAuthzServiceClient(b.cc).Authorize(ctx, req)
	stop()
	done()
	if err != nil {
		st := status.Convert(err)
		switch st.Code() {
		case codes.Unavailable:
			return toolError("%s was not run: authz, which checks every tool call first, is not running (start it with `phantom up`); no tool can run until it is back", t.name)
		case codes.Canceled:
			return toolError("%s was not run: the call was cancelled", t.name)
		case codes.DeadlineExceeded:
			return toolError("%s was not run: the permission check took too long", t.name)
		}
		return toolError("%s was not run: the permission check failed in authz: %s (%s)", t.name, st.Message(), st.Code())
	}
	if !resp.GetAllowed() {
		reason := resp.GetReason()
		if reason == "" {
			reason = "permission denied"
		}
		return toolError("%s was refused: %s", t.name, reason)
	}
	return nil
}

// callError words a daemon's gRPC error for the model. Messages of the
// codes daemons use for the caller's mistakes are written for models and
// passed through; the others name the daemon.
func callError(t *tool, b *backend, err error) *mcp.CallToolResult {
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.AlreadyExists,
		codes.PermissionDenied, codes.ResourceExhausted, codes.OutOfRange:
		return toolError("%s: %s (%s, from %s)", t.name, st.Message(), st.Code(), t.daemon)
	case codes.Unavailable:
		return toolError("%s failed: %s", t.name, b.downError())
	case codes.Canceled:
		return toolError("%s: the call was cancelled", t.name)
	case codes.DeadlineExceeded:
		return toolError("%s: %s did not finish in time: %s", t.name, t.daemon, st.Message())
	}
	return toolError("%s failed in %s: %s (%s)", t.name, t.daemon, st.Message(), st.Code())
}

// setAgentState tells terminald what the agent in a tab does.
func (s *Server) setAgentState(ctx context.Context, req *terminalv1.SetAgentStateRequest) error {
	b, err := s.backends.get("terminald")
	if err != nil {
		return err
	}
	_, err = terminalv1.NewTerminalServiceClient(b.cc).SetAgentState(ctx, req)
	return err
}

// endConnection tells authz a connection closed.
func (s *Server) endConnection(ctx context.Context, id string) {
	b, err := s.backends.get(authzDaemon)
	if err != nil {
		return
	}
	if _, err := authzv1.NewAuthzServiceClient(b.cc).EndConnection(ctx, &authzv1.EndConnectionRequest{ConnectionId: id}); err != nil &&
		status.Code(err) != codes.Unavailable {
		s.logger.Warn("authz EndConnection failed", "conn", id, "err", err)
	}
}
