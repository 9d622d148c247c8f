package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// maxInFlight bounds the requests one connection runs at once; the reader
// waits for a slot, so a flooding client is slowed, not served without
// limit.
const maxInFlight = 32

// lineConn is one verified connection as the MCP SDK sees it: an
// mcp.Transport and mcp.Connection speaking newline-delimited JSON-RPC
// over the metered socket, after the hello.
//
// It is written for the gateway rather than taken from mcp.IOTransport
// for four reasons:
//   - it reads from the bufio.Reader that read the hello (bytes the
//     client sent behind it are already there) with the 4 MiB line cap
//     whose overflow is answered before the connection closes;
//   - a malformed line is answered by the connection and the next one is
//     read, where the SDK would end the connection;
//   - it bounds the requests in flight (maxInFlight);
//   - it drops the response to a request the client cancelled: go-sdk
//     v1.8.0 still sends it when the handler returns, and the spec says a
//     cancelled request is not answered.
type lineConn struct {
	nc     net.Conn
	br     *bufio.Reader
	done   <-chan struct{} // the gateway connection's end
	slots  chan struct{}
	closed chan struct{}

	wmu sync.Mutex

	mu       sync.Mutex
	inflight map[jsonrpc.ID]bool // requests read and not answered: cancelled?
	tooLong  bool                // the read ended on a line over MaxLine

	// results are the tool results spliced into responses as they are
	// written (cost_splice.go).
	results resultSplicer

	closeOnce sync.Once
}

func newLineConn(nc net.Conn, br *bufio.Reader, done <-chan struct{}) *lineConn {
	return &lineConn{
		nc: nc, br: br, done: done,
		slots:    make(chan struct{}, maxInFlight),
		closed:   make(chan struct{}),
		inflight: map[jsonrpc.ID]bool{},
	}
}

// Connect implements mcp.Transport: the connection is already there.
func (l *lineConn) Connect(context.Context) (mcp.Connection, error) { return l, nil }

// SessionID implements mcp.Connection; a socket connection has none.
func (l *lineConn) SessionID() string { return "" }

// Read returns the next message for the SDK, answering malformed lines
// itself. A request waits for a free slot first.
func (l *lineConn) Read(context.Context) (jsonrpc.Message, error) {
	for {
		line, err := readLine(l.br, MaxLine)
		if errors.Is(err, errLineTooLong) {
			l.mu.Lock()
			l.tooLong = true
			l.mu.Unlock()
			l.writeLine(errorResponse(nullID, codeInvalidRequest,
				fmt.Sprintf("invalid request: a message longer than %d bytes; closing the connection", MaxLine)).encode())
			return nil, err
		}
		if errors.Is(err, io.EOF) {
			l.drain()
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		msg, resp := parseLine(line)
		if resp != nil {
			if err := l.writeLine(resp.encode()); err != nil {
				return nil, err
			}
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		switch {
		case msg == nil:
			continue
		case !ok:
			return msg, nil // a response from the client
		case !req.IsCall():
			if req.Method == "notifications/cancelled" {
				l.cancelled(req.Params)
			}
			return req, nil
		}
		if err := l.admit(req.ID); err != nil {
			if errors.Is(err, errDuplicateID) {
				if err := l.writeLine(errorResponse(rawID(req.ID), codeInvalidRequest,
					"invalid request: the id of a request still in progress; use a new id").encode()); err != nil {
					return nil, err
				}
				continue
			}
			return nil, err
		}
		return req, nil
	}
}

var errDuplicateID = errors.New("request id in use")

// drainPoll is how often drain looks at the requests in flight and the
// socket.
const drainPoll = 20 * time.Millisecond

// drain holds back the end of the input until every request read has been
// answered. A client (or the bridge, for it) that writes its requests and
// closes its side at once still expects the replies: go-sdk v1.8.0 cancels
// every request in flight and stops writing as soon as Read fails. A client
// that hung up entirely (the socket reports POLLHUP, not just the half-close
// of POLLRDHUP) wants nothing more: its calls end at once, and their sheets
// are withdrawn.
func (l *lineConn) drain() {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		l.mu.Lock()
		n := len(l.inflight)
		l.mu.Unlock()
		if n == 0 || l.hungUp() {
			return
		}
		select {
		case <-t.C:
		case <-l.closed:
			return
		case <-l.done:
			return
		}
	}
}

// hungUp reports whether the peer closed both directions of the socket.
func (l *lineConn) hungUp() bool {
	sc, ok := l.nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	hup := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			hup = fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
		}
	})
	return hup
}

// admit waits for a slot for a request and records it in flight.
func (l *lineConn) admit(id jsonrpc.ID) error {
	l.mu.Lock()
	_, dup := l.inflight[id]
	l.mu.Unlock()
	if dup {
		return errDuplicateID
	}
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return io.EOF
	case <-l.done:
		return io.EOF
	}
	l.mu.Lock()
	l.inflight[id] = false
	l.mu.Unlock()
	return nil
}

// cancelled marks the request a notifications/cancelled names, if it is
// in flight, so that its response is dropped. The SDK, which sees the
// notification too, cancels the handler.
func (l *lineConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.inflight[id]; ok {
		l.inflight[id] = true
	}
}

// Write sends one message; the response to a cancelled request is
// dropped instead.
func (l *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		l.mu.Lock()
		cancelled, tracked := l.inflight[resp.ID]
		delete(l.inflight, resp.ID)
		l.mu.Unlock()
		if tracked {
			<-l.slots
		}
		if cancelled {
			l.results.forget(resp.Result)
			return nil
		}
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode a message: %w", err)
	}
	if _, ok := msg.(*jsonrpc.Response); ok {
		var done func()
		b, done = l.results.splice(b)
		defer done()
	}
	return l.writeLine(append(b, '\n'))
}

// writeLine writes one whole line; a client that stops reading is cut off
// after writeTimeout.
func (l *lineConn) writeLine(b []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := l.nc.Write(b)
	return err
}

// Close implements mcp.Connection: it closes the socket, which ends a
// blocked Read. After a line over MaxLine the socket is left to finish,
// which drains what the client still sends so that the error is not lost
// to a reset.
func (l *lineConn) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		if !l.endedTooLong() {
			l.nc.Close()
		}
	})
	return nil
}

// finish closes the socket once the SDK is done with the connection.
func (l *lineConn) finish() {
	if l.endedTooLong() {
		lingeringClose(l.nc)
	}
	l.nc.Close()
}

func (l *lineConn) endedTooLong() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tooLong
}
