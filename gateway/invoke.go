package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

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

// callParams are tools/call's params.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// toolResult is a tools/call result.
type toolResult struct {
	Content           []textContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func toolError(format string, args ...any) *toolResult {
	return &toolResult{Content: []textContent{{Type: "text", Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// checkCall reads a tools/call's params: a known tool and arguments that
// fit its schema, or else a -32602 response.
func (s *Server) checkCall(req *request) (*tool, protoreflect.ProtoMessage, *response) {
	var p callParams
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == "" {
		return nil, nil, errorResponse(req.ID, codeInvalidParams, `invalid params: tools/call needs {"name": TOOL, "arguments": {...}}`)
	}
	t, ok := s.tools.byName[p.Name]
	if !ok {
		return nil, nil, errorResponse(req.ID, codeInvalidParams, fmt.Sprintf("unknown tool %q; tools/list lists the tools", p.Name))
	}
	msg, perr := s.decodeArgs(t, p.Arguments)
	if perr != "" {
		return nil, nil, errorResponse(req.ID, codeInvalidParams, fmt.Sprintf("invalid arguments for %s: %s", t.name, perr))
	}
	return t, msg, nil
}

// callTool runs a checked call: authz first, then the daemon. Anything that
// goes wrong is a result with isError, worded for the model.
func (c *conn) callTool(ctx context.Context, id json.RawMessage, t *tool, msg protoreflect.ProtoMessage) *response {
	c.state.callStarted()
	defer c.state.callEnded()
	ctx, cancel := context.WithTimeout(ctx, maxCallTime)
	defer cancel()
	return resultResponse(id, c.run(ctx, t, msg))
}

// decodeArgs reads a call's arguments into the tool's request message:
// an object of the schema's fields, no unknown or hidden ones, values of
// the right types and within the protos' validation rules.
func (s *Server) decodeArgs(t *tool, args json.RawMessage) (protoreflect.ProtoMessage, string) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return nil, "arguments must be a JSON object"
	}
	for name := range fields {
		if f := t.input.Descriptor().Fields().ByJSONName(name); f != nil && t.hidden[f.Name()] {
			return nil, fmt.Sprintf("unknown field %q", name)
		}
		if t.hidden[protoreflect.Name(name)] {
			return nil, fmt.Sprintf("unknown field %q", name)
		}
	}
	msg := t.input.New().Interface()
	if err := argsDecoder.Unmarshal(args, msg); err != nil {
		return nil, err.Error()
	}
	if err := s.validator.Validate(msg); err != nil {
		return nil, err.Error()
	}
	return msg, ""
}

// run asks authz, then calls the daemon.
func (c *conn) run(ctx context.Context, t *tool, msg protoreflect.ProtoMessage) *toolResult {
	if t.opt.GetNeedsTab() && c.peer.tabID() == "" {
		return toolError("%s acts on the window of the calling agent's tab, and this agent does not run inside a Phantom tab; start it from a Phantom tab", t.name)
	}
	if err := c.fillCaller(ctx, msg); err != nil {
		return toolError("%s: %v", t.name, err)
	}
	if res := c.authorize(ctx, t, msg); res != nil {
		return res
	}
	b, err := c.s.backends.get(t.daemon)
	if err != nil {
		return toolError("%s: %v", t.name, err)
	}
	out := t.output.New().Interface()
	// The daemon learns the call is an agent's: what an agent changes (a
	// tab's group, its name) is marked as the agent's, never the human's.
	if err := b.cc.Invoke(guard.ForAgent(ctx, c.peer.tabID()), t.method, msg, out); err != nil {
		return callError(t, b, err)
	}
	j, err := resultsEncoder.Marshal(out)
	if err != nil {
		return toolError("%s: encode %s's answer: %v", t.name, t.daemon, err)
	}
	return &toolResult{Content: []textContent{{Type: "text", Text: string(j)}}, StructuredContent: j}
}

// authorize asks authz about the call; nil means allowed. Tools authz's
// policy lists as free skip the round trip. Authz being unreachable refuses
// every other call: the gateway never decides by itself.
func (c *conn) authorize(ctx context.Context, t *tool, msg protoreflect.ProtoMessage) *toolResult {
	if c.s.isFree(ctx, t.name) {
		return nil
	}
	b, err := c.s.backends.get(authzDaemon)
	if err != nil {
		return toolError("%s was not run: the permission check failed: %v", t.name, err)
	}
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
		},
		Tool:          t.name,
		ArgumentsJson: string(args),
	}
	done := c.state.authorizing()
	resp, err := authzv1.NewAuthzServiceClient(b.cc).Authorize(ctx, req)
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
func callError(t *tool, b *backend, err error) *toolResult {
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
		return toolError("%s: %s did not answer in time", t.name, t.daemon)
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
