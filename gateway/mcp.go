package gateway

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// ProtocolVersions are the MCP revisions the gateway negotiates, newest
// first: each client is answered in the one it asks for. 2025-06-18 is the
// product text's; 2026-07-28 is stateless (server/discover).
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// newMCPServer is the gateway's one MCP server, shared by every
// connection: the tool table, the protocol revisions, no capability but
// tools (the SDK would otherwise advertise logging). A tool handler finds
// its connection in its context (connFrom).
func newMCPServer(tools *toolTable, logger *slog.Logger) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "phantom", Title: "Phantom", Version: "1"}, &mcp.ServerOptions{
		Instructions:              serverInstructions(tools),
		Logger:                    slog.New(minLevel{logger.Handler(), slog.LevelWarn}),
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: ProtocolVersions,
	})
	for _, t := range tools.sorted() {
		srv.AddTool(t.listing, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return connFrom(ctx).callTool(ctx, t, req), nil
		})
	}
	return srv
}

// conn is one verified MCP connection.
type conn struct {
	s      *Server
	nc     net.Conn
	id     string
	peer   peer
	logger *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	state  *agentState // nil outside any tab
	lc     *lineConn   // the connection as the SDK sees it
}

// connKey carries the *conn in the contexts of its tool handlers.
type connKey struct{}

func connFrom(ctx context.Context) *conn { return ctx.Value(connKey{}).(*conn) }

// serveConn answers the hello and serves MCP with the SDK until the client
// goes away, the connection breaks or the gateway stops.
func (s *Server) serveConn(ctx context.Context, nc net.Conn, br *bufio.Reader, p peer) {
	c := &conn{s: s, nc: nc, id: s.newConnID(p), peer: p}
	c.ctx, c.cancel = context.WithCancel(ctx)
	defer c.cancel()
	c.logger = s.logger.With("conn", c.id, "client", p.hello.Client, "pid", p.hello.PID, "tab", p.tabID())
	nc.SetDeadline(time.Time{})
	if !s.register(c) {
		return
	}
	nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := nc.Write(okLine(c.id)); err != nil {
		s.unregister(c)
		return
	}
	c.logger.Info("connected")
	stateDone := make(chan struct{})
	if p.tabID() != "" {
		c.state = newAgentState(p.tabID(), p.hello.Client, s.setAgentState)
		go func() { defer close(stateDone); c.state.run(c.ctx) }()
	} else {
		close(stateDone)
	}
	lc := newLineConn(nc, br, c.ctx.Done())
	c.lc = lc
	if ss, err := s.mcp.Connect(context.WithValue(c.ctx, connKey{}, c), lc, nil); err == nil {
		ss.Wait()
	}
	c.cancel()
	lc.finish()
	<-stateDone
	s.unregister(c)
	c.logger.Info("disconnected")
}

// shutdown cancels the connection's calls and unblocks its reader.
func (c *conn) shutdown() {
	c.cancel()
	c.nc.SetReadDeadline(time.Now())
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

// minLevel passes on the records of at least level: the SDK logs every
// session at Info, which the gateway's own connection log already covers.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}
