package gateway

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"buf.build/go/protovalidate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/peercred"
)

// writeTimeout bounds one write to a client; a client that stops reading
// is disconnected rather than left holding a goroutine.
const writeTimeout = 10 * time.Second

// Options configure a Server.
type Options struct {
	// TabStateDir is terminald's tab-state directory (Layout.TabStateDir).
	TabStateDir string
	// Addr returns the gRPC address of the named daemon.
	Addr func(name string) string
	// Logger receives connection and backend events.
	Logger *slog.Logger
	// Limits bound connections and buffered input; zero fields take
	// their defaults (see Limits).
	Limits Limits
	// BackendHealth, when set, is told each time a daemon the gateway
	// calls starts or stops serving as the gateway sees it (its health
	// watch over the gateway's own connection), so that `phantom up` can
	// wait until the gateway, not just the daemon, sees it serve.
	BackendHealth func(daemon string, serving bool)
	// creds reads peer credentials; nil means the kernel's (tests inject).
	creds credsReader
	// locate places a peer in the process tree; nil means the instance's
	// (tests inject).
	locate locator
	// program names the program behind a peer; nil means the process
	// tree's (tests inject).
	program func(pid int) string
}

// Server is the MCP gateway: it accepts connections on the MCP socket,
// verifies each hello against the socket's peer credentials and the tab
// it claims, and serves MCP (the official Go SDK's server) over
// newline-delimited JSON-RPC, turning each
// tool call into one gRPC call to the daemon that serves it, after authz
// allowed it.
type Server struct {
	opts      Options
	logger    *slog.Logger
	tools     *toolTable
	mcp       *mcp.Server
	backends  *backends
	verifier  verifier
	validator protovalidate.Validator
	policy    freeTools
	limiter   *limiter
	// progressEvery paces progress notifications while a call waits on a
	// permission sheet (tests shorten it).
	progressEvery time.Duration

	connSeq atomic.Uint64
	wg      sync.WaitGroup

	mu    sync.Mutex
	conns map[*conn]struct{}
	// tabConns counts live connections per tab, so that only the last one
	// to close clears the tab's agent state.
	tabConns map[string]int
}

// NewServer builds the tool table and the daemon connections.
func NewServer(opts Options) (*Server, error) {
	tools, err := buildTools()
	if err != nil {
		return nil, err
	}
	validator, err := protovalidate.New()
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	creds := opts.creds
	if creds == nil {
		creds = readPeerCreds
	}
	bs := newBackends(opts.Addr, logger)
	bs.onHealth = opts.BackendHealth
	return &Server{
		opts:          opts,
		logger:        logger,
		tools:         tools,
		mcp:           newMCPServer(tools, logger),
		progressEvery: progressEvery,
		backends:      bs,
		verifier:      newVerifier(opts, creds, bs),
		validator:     validator,
		limiter:       newLimiter(opts.Limits.withDefaults(), logger),
		conns:         map[*conn]struct{}{},
		tabConns:      map[string]int{},
	}, nil
}

// Serve accepts connections on lis until ctx is done, then closes every
// connection (cancelling their calls), waits for them to clean up and
// closes the daemon connections.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	// Connect to authz and every daemon with tools up front, so their
	// health is known before the first call.
	s.backends.get(authzDaemon)
	for _, t := range s.tools.byName {
		s.backends.get(t.daemon)
	}
	stop := context.AfterFunc(ctx, func() { lis.Close() })
	defer stop()
	err := s.acceptLoop(ctx, lis)
	s.mu.Lock()
	for c := range s.conns {
		c.shutdown()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.backends.close()
	if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// acceptLoop accepts connections until the listener is closed. Any other
// accept error (out of file descriptors, buffers or memory; an aborted
// connection) passes as connections close, so it backs off and retries
// rather than ending the gateway for every client.
func (s *Server) acceptLoop(ctx context.Context, lis net.Listener) error {
	retry := acceptBackoff{logger: s.logger}
	for {
		nc, err := lis.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			if !retry.wait(ctx, err) {
				return ctx.Err()
			}
			continue
		}
		retry.succeeded()
		s.admit(ctx, nc)
	}
}

// admit starts serving nc, or turns it away when it is over a connection
// cap. A refusal is written and closed at once, in the accept loop: a
// flood costs no goroutine and holds no descriptor past its refusal.
func (s *Server) admit(ctx context.Context, nc net.Conn) {
	mc, r := s.limiter.admit(nc)
	if r != nil {
		s.limiter.log.refused(r)
		// A new socket's send buffer is empty, so this write does not
		// block; the deadline is only a guard.
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		nc.Write(refusalLine(r))
		nc.Close()
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.handle(ctx, mc)
	}()
}

// handle runs one connection from hello to close. The hello must arrive
// within HelloTimeout; a silent connection is closed then.
func (s *Server) handle(ctx context.Context, mc *meteredConn) {
	defer mc.Close()
	mc.SetDeadline(time.Now().Add(s.limiter.limits.HelloTimeout))
	// A connection still in its hello when the gateway stops is ended
	// now, not at its deadline.
	stop := context.AfterFunc(ctx, func() { mc.SetReadDeadline(time.Now()) })
	br := bufio.NewReaderSize(mc, readBufferSize)
	line, err := readLine(br, MaxHello)
	// A sandbox's connect gate made this connection: its vouch line says
	// for whom, and the hello follows (gateway/vouch.go).
	var vc *vouched
	if err == nil && peercred.IsVouch(line) {
		pid, start, perr := peercred.ParseVouch(line)
		if perr != nil {
			stop()
			s.refuse(mc, refuse(RefuseVouch, "%v", perr))
			return
		}
		vc = &vouched{pid: pid, start: start}
		line, err = readLine(br, MaxHello)
	}
	stop()
	switch {
	case errors.Is(err, errLineTooLong):
		s.refuse(mc, refuse(RefuseBadHello, "hello longer than %d bytes", MaxHello))
		return
	case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil:
		s.refuse(mc, refuse(RefuseBadHello, "no hello within %s of connecting", s.limiter.limits.HelloTimeout))
		return
	case err != nil:
		return // gone, stopping, or errOverBudget (mc told the client)
	}
	p, r := s.verifyHello(mc, line, vc)
	if r == nil {
		r = s.limiter.verified(mc, callerKey(p))
	}
	if r != nil {
		s.refuse(mc, r)
		return
	}
	s.serveConn(ctx, mc, br, p)
}

// verifyHello parses the hello line and checks it against the socket's
// peer.
func (s *Server) verifyHello(nc net.Conn, line []byte, vc *vouched) (peer, *Refusal) {
	h, r := ParseHello(line)
	if r != nil {
		return peer{}, r
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return peer{}, refuse(RefusePeerUnreadable, "not a Unix socket")
	}
	return s.verifier.verify(sc, h, vc)
}

// refuse sends the one refusal line and closes.
func (s *Server) refuse(nc net.Conn, r *Refusal) {
	if r.Code == RefuseTooManyConnections {
		s.limiter.log.refused(r) // a flood must not flood the log
	} else {
		s.logger.Warn("refused a connection", "code", r.Code, "reason", r.Message)
	}
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write(refusalLine(r))
	lingeringClose(nc)
}

// lingeringClose half-closes nc and drains what the client still sends
// (briefly), so that closing with unread input does not reset the
// connection and destroy the last line we wrote.
func lingeringClose(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	nc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	io.Copy(io.Discard, io.LimitReader(nc, 64<<20))
	nc.Close()
}

// newConnID returns a connection id unique to this gateway's life and
// unguessable across restarts, bound to the bridge process p:
// "proc-<pid>-<start>-c<counter>-<random>". authz lets the connection's
// once-grants die with that process even if the gateway never says the
// connection ended (it crashed).
func (s *Server) newConnID(p peer) string {
	var b [4]byte
	rand.Read(b[:])
	return guard.ProcessConnection(p.caller.PID, p.caller.StartTime) + "-c" + itoa(s.connSeq.Add(1)) + "-" + hex.EncodeToString(b[:])
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
