package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// ProtocolVersion is the MCP version the gateway speaks, whatever the
// client asks for.
const ProtocolVersion = "2025-06-18"

// maxInFlight bounds the tool calls one connection runs at once; the
// reader waits for a slot, so a flooding client is slowed, not served
// without limit.
const maxInFlight = 32

// conn is one verified MCP connection.
type conn struct {
	s      *Server
	nc     net.Conn
	br     *bufio.Reader
	id     string
	peer   peer
	logger interface {
		Info(string, ...any)
		Warn(string, ...any)
	}
	ctx    context.Context
	cancel context.CancelFunc
	state  *agentState // nil outside any tab

	wmu sync.Mutex

	calls    sync.WaitGroup
	slots    chan struct{}
	imu      sync.Mutex
	inflight map[string]*inflightCall // by request id (raw JSON)
}

// inflightCall is a tool call in progress, cancellable by
// notifications/cancelled.
type inflightCall struct{ cancel context.CancelFunc }

// serveConn answers the hello and serves MCP until the client goes away,
// the connection breaks or the gateway stops.
func (s *Server) serveConn(ctx context.Context, nc net.Conn, br *bufio.Reader, p peer) {
	c := &conn{s: s, nc: nc, br: br, id: s.newConnID(p), peer: p, slots: make(chan struct{}, maxInFlight), inflight: map[string]*inflightCall{}}
	c.ctx, c.cancel = context.WithCancel(ctx)
	defer c.cancel()
	c.logger = s.logger.With("conn", c.id, "client", p.hello.Client, "pid", p.hello.PID, "tab", p.tabID())
	nc.SetDeadline(time.Time{})
	if !s.register(c) {
		return
	}
	if !c.write(okLine(c.id)) {
		s.unregister(c)
		return
	}
	c.logger.Info("connected")
	var stateDone chan struct{}
	if p.tabID() != "" {
		c.state = newAgentState(p.tabID(), p.hello.Client, s.setAgentState)
		stateDone = make(chan struct{})
		go func() { defer close(stateDone); c.state.run(c.ctx) }()
	}
	c.readLoop()
	c.cancel()
	c.calls.Wait()
	nc.Close()
	if stateDone != nil {
		<-stateDone
	}
	s.unregister(c)
	c.logger.Info("disconnected")
}

// readLoop reads and dispatches messages until EOF, an error or a line
// over MaxLine (answered, then the connection ends).
func (c *conn) readLoop() {
	for {
		line, err := readLine(c.br, MaxLine)
		if errors.Is(err, errLineTooLong) {
			c.write(errorResponse(nullID, codeInvalidRequest,
				fmt.Sprintf("invalid request: a message longer than %d bytes; closing the connection", MaxLine)).encode())
			c.cancel()
			c.calls.Wait()
			lingeringClose(c.nc)
			return
		}
		if err != nil {
			return
		}
		req, resp := parseMessage(line)
		if resp != nil {
			c.write(resp.encode())
		}
		if req != nil {
			c.dispatch(req)
		}
		if c.ctx.Err() != nil {
			return
		}
	}
}

// write sends one line; a failed write ends the connection.
func (c *conn) write(b []byte) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.nc.Write(b); err != nil {
		c.shutdown()
		return false
	}
	return true
}

// shutdown cancels the connection's calls and unblocks its reader.
func (c *conn) shutdown() {
	c.cancel()
	c.nc.SetReadDeadline(time.Now())
}

// dispatch answers one request or notification. Tool calls run in their
// own goroutine (up to maxInFlight); everything else is answered inline.
func (c *conn) dispatch(req *request) {
	if req.ID == nil {
		c.notification(req)
		return
	}
	switch req.Method {
	case "initialize":
		c.write(resultResponse(req.ID, initializeResult).encode())
	case "ping":
		c.write(resultResponse(req.ID, struct{}{}).encode())
	case "tools/list":
		c.write(resultResponse(req.ID, c.s.tools.list).encode())
	case "tools/call":
		t, msg, perr := c.s.checkCall(req)
		if perr != nil {
			c.write(perr.encode())
			return
		}
		select {
		case c.slots <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		ctx, cancel := context.WithCancel(c.ctx)
		call := &inflightCall{cancel: cancel}
		key := string(req.ID)
		c.imu.Lock()
		c.inflight[key] = call
		c.imu.Unlock()
		c.calls.Add(1)
		go func() {
			defer func() {
				c.imu.Lock()
				if c.inflight[key] == call {
					delete(c.inflight, key)
				}
				c.imu.Unlock()
				cancel()
				<-c.slots
				c.calls.Done()
			}()
			resp := c.callTool(ctx, req.ID, t, msg)
			if c.ctx.Err() == nil {
				c.write(resp.encode())
			}
		}()
	default:
		c.write(errorResponse(req.ID, codeMethodNotFound,
			fmt.Sprintf("method %q not found; this server answers initialize, ping, tools/list and tools/call", req.Method)).encode())
	}
}

// notification handles a message that gets no reply.
func (c *conn) notification(req *request) {
	if req.Method != "notifications/cancelled" {
		return // notifications/initialized and anything else: accepted silently
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) == nil && validID(p.RequestID) {
		c.imu.Lock()
		call := c.inflight[string(p.RequestID)]
		c.imu.Unlock()
		if call != nil {
			call.cancel()
		}
	}
}

// initializeResult is the answer to every initialize.
var initializeResult = map[string]any{
	"protocolVersion": ProtocolVersion,
	"capabilities":    map[string]any{"tools": map[string]any{}},
	"serverInfo":      map[string]any{"name": "phantom", "title": "Phantom", "version": "1"},
	"instructions": "Phantom's terminals, tab groups and (later) editor, language servers and worktrees. " +
		"Sensitive tools (reading another terminal, typing into one) wait for the human to allow them.",
}

// register records c; false when the gateway is already stopping.
func (s *Server) register(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ctx.Err() != nil {
		return false
	}
	s.conns[c] = struct{}{}
	if t := c.peer.tabID(); t != "" {
		s.tabConns[t]++
	}
	return true
}

// unregister forgets c: authz ends its connection (withdrawing its sheets,
// dropping its once-grants), and the tab's agent state is cleared when c
// was the tab's last connection.
func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	tab := c.peer.tabID()
	last := false
	if tab != "" {
		s.tabConns[tab]--
		if last = s.tabConns[tab] <= 0; last {
			delete(s.tabConns, tab)
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if last {
		s.setAgentState(ctx, &terminalv1.SetAgentStateRequest{TerminalId: tab, State: terminalv1.AgentState_AGENT_STATE_UNSPECIFIED})
	}
	s.endConnection(ctx, c.id)
}
