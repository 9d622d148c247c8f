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
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"buf.build/go/protovalidate"
)

// handshakeTimeout bounds how long a client may take to send its hello.
const handshakeTimeout = 10 * time.Second

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
	// creds reads peer credentials; nil means the kernel's (tests inject).
	creds credsReader
	// locate places a peer in the process tree; nil means the instance's
	// (tests inject).
	locate locator
}

// Server is the MCP gateway: it accepts connections on the MCP socket,
// verifies each hello against the socket's peer credentials and the tab
// it claims, and serves MCP over newline-delimited JSON-RPC, turning each
// tool call into one gRPC call to the daemon that serves it, after authz
// allowed it.
type Server struct {
	opts      Options
	logger    *slog.Logger
	tools     *toolTable
	backends  *backends
	verifier  verifier
	validator protovalidate.Validator
	policy    freeTools

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
	return &Server{
		opts:      opts,
		logger:    logger,
		tools:     tools,
		backends:  bs,
		verifier:  newVerifier(opts, creds, bs),
		validator: validator,
		conns:     map[*conn]struct{}{},
		tabConns:  map[string]int{},
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
	var err error
	for {
		var nc net.Conn
		nc, err = lis.Accept()
		if err != nil {
			break
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(ctx, nc)
		}()
	}
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

// handle runs one connection from hello to close.
func (s *Server) handle(ctx context.Context, nc net.Conn) {
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReaderSize(nc, 64<<10)
	line, err := readLine(br, MaxHello)
	if err != nil {
		if errors.Is(err, errLineTooLong) {
			s.refuse(nc, refuse(RefuseBadHello, "hello longer than %d bytes", MaxHello))
		}
		return
	}
	h, r := ParseHello(line)
	if r == nil {
		sc, ok := nc.(syscall.Conn)
		if !ok {
			r = refuse(RefusePeerUnreadable, "not a Unix socket")
		} else {
			var p peer
			p, r = s.verifier.verify(sc, h)
			if r == nil {
				s.serveConn(ctx, nc, br, p)
				return
			}
		}
	}
	s.refuse(nc, r)
}

// refuse sends the one refusal line and closes.
func (s *Server) refuse(nc net.Conn, r *Refusal) {
	s.logger.Warn("refused a connection", "code", r.Code, "reason", r.Message)
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
// unguessable across restarts: "c<counter>-<random>".
func (s *Server) newConnID() string {
	var b [4]byte
	rand.Read(b[:])
	return "c" + itoa(s.connSeq.Add(1)) + "-" + hex.EncodeToString(b[:])
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
