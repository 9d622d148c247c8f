package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Refusal codes for load: the gateway is healthy but will not take more
// from this client right now. Retrying later may work.
const (
	// RefuseTooManyConnections means a connection cap was reached: the
	// gateway's total, the connections still in their hello, those of one
	// process before its hello, or those of one caller (tab or process).
	RefuseTooManyConnections = "too_many_connections"
	// RefuseOverloaded means the input the gateway buffers for all its
	// connections reached its budget, or a message took too long to arrive.
	RefuseOverloaded = "overloaded"
)

// codeServerBusy is the JSON-RPC error (in the range the spec leaves to
// servers) sent before closing a verified connection under load.
const codeServerBusy = -32000

// readBufferSize is each connection's fixed read buffer. Lines up to this
// size are read in place; a longer line is copied out as it grows and must
// reserve those bytes from the shared input budget.
const readBufferSize = 16 << 10

// Default limits; see Limits.
const (
	defaultMaxConnections       = 1024
	defaultMaxInHello           = 64
	defaultMaxInHelloPerProcess = 16
	defaultMaxPerCaller         = 32
	defaultMaxBufferedInput     = 64 << 20
	defaultHelloTimeout         = 10 * time.Second
	defaultLineTimeout          = 30 * time.Second
)

// Limits bound what clients can make the gateway hold, so that a flood of
// connections or of input is refused instead of exhausting the process's
// file descriptors or memory. A zero (or negative) field takes its default.
type Limits struct {
	// MaxConnections caps live connections (file descriptors).
	// Default 1024, or half the process's open-file limit when that is
	// lower, so that the gateway keeps descriptors for its daemons.
	MaxConnections int
	// MaxInHello caps connections that have not finished their hello; a
	// hello is one short line sent at once, so few are ever in flight.
	// Default 64.
	MaxInHello int
	// MaxInHelloPerProcess caps those of one peer process, by the pid the
	// kernel reports for the socket (SO_PEERCRED), so that one process
	// cannot take every hello slot. Default 16.
	MaxInHelloPerProcess int
	// MaxPerCaller caps the verified connections of one caller: one tab,
	// or one process outside any tab. An agent needs one; subagents and
	// restarts a few more. Default 32.
	MaxPerCaller int
	// MaxBufferedInput caps the bytes of unfinished lines held across all
	// connections beyond their fixed read buffers. Each connection may
	// send a line of up to MaxLine (4 MiB), so without it 1,000 of them
	// could hold 4 GiB. Default 64 MiB.
	MaxBufferedInput int64
	// HelloTimeout closes a connection that has not sent its hello by
	// then. Default 10 s.
	HelloTimeout time.Duration
	// LineTimeout closes a connection whose line, once it outgrew the
	// read buffer and holds part of the budget, is still unfinished after
	// this long, so an idle client cannot sit on the budget. An idle
	// connection between messages is never closed. Default 30 s.
	LineTimeout time.Duration
}

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxConnections, defaultMaxConnectionsFor(openFileLimit()))
	def(&l.MaxInHello, defaultMaxInHello)
	def(&l.MaxInHelloPerProcess, defaultMaxInHelloPerProcess)
	def(&l.MaxPerCaller, defaultMaxPerCaller)
	if l.MaxBufferedInput <= 0 {
		l.MaxBufferedInput = defaultMaxBufferedInput
	}
	if l.HelloTimeout <= 0 {
		l.HelloTimeout = defaultHelloTimeout
	}
	if l.LineTimeout <= 0 {
		l.LineTimeout = defaultLineTimeout
	}
	return l
}

// defaultMaxConnectionsFor is the default connection cap under an
// open-file limit of nofile (0 when unknown).
func defaultMaxConnectionsFor(nofile uint64) int {
	if nofile == 0 || nofile/2 >= defaultMaxConnections {
		return defaultMaxConnections
	}
	return max(int(nofile/2), 1)
}

// openFileLimit is the process's soft RLIMIT_NOFILE, 0 when unreadable.
// (Go raises the soft limit to the hard one at start-up.)
func openFileLimit() uint64 {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return rl.Cur
}

// limiter enforces Limits: it counts connections by phase, process and
// caller, and owns the shared input budget.
type limiter struct {
	limits Limits
	budget inputBudget
	log    *loadLog

	mu       sync.Mutex
	total    int
	inHello  int
	byPID    map[int]int    // connections in their hello, by peer pid
	byCaller map[string]int // verified connections, by callerKey
}

func newLimiter(l Limits, logger *slog.Logger) *limiter {
	return &limiter{
		limits:   l,
		budget:   inputBudget{max: l.MaxBufferedInput},
		log:      &loadLog{logger: logger, every: 5 * time.Second},
		byPID:    map[int]int{},
		byCaller: map[string]int{},
	}
}

// admit counts a new connection in, or says which cap it is over. The
// peer's pid comes from SO_PEERCRED, a getsockopt that opens no file, so
// it is cheap even when descriptors are short.
func (l *limiter) admit(nc net.Conn) (*meteredConn, *Refusal) {
	pid := peerPID(nc)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total >= l.limits.MaxConnections:
		return nil, refuse(RefuseTooManyConnections,
			"the gateway already serves %d connections, its limit; close one and retry", l.limits.MaxConnections)
	case l.inHello >= l.limits.MaxInHello:
		return nil, refuse(RefuseTooManyConnections,
			"%d connections are still waiting to finish their hello, the gateway's limit; retry in a moment", l.limits.MaxInHello)
	case l.byPID[pid] >= l.limits.MaxInHelloPerProcess:
		return nil, refuse(RefuseTooManyConnections,
			"process %d already has %d connections waiting to finish their hello, the limit per process", pid, l.limits.MaxInHelloPerProcess)
	}
	l.total++
	l.inHello++
	l.byPID[pid]++
	return &meteredConn{Conn: nc, lim: l, pid: pid, inHello: true}, nil
}

// verified moves c from its hello to the count of its caller, or refuses
// it when the caller already has MaxPerCaller connections.
func (l *limiter) verified(c *meteredConn, key string) *Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leaveHello(c)
	if l.byCaller[key] >= l.limits.MaxPerCaller {
		return refuse(RefuseTooManyConnections,
			"%s already has %d connections to the gateway, the limit per caller; close one and retry", key, l.limits.MaxPerCaller)
	}
	l.byCaller[key]++
	c.caller = key
	c.verified.Store(true)
	return nil
}

// release counts c out of every cap it was counted in.
func (l *limiter) release(c *meteredConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leaveHello(c)
	if c.caller != "" {
		if l.byCaller[c.caller]--; l.byCaller[c.caller] <= 0 {
			delete(l.byCaller, c.caller)
		}
		c.caller = ""
	}
	l.total--
}

// leaveHello ends c's hello phase in the counts; l.mu must be held.
func (l *limiter) leaveHello(c *meteredConn) {
	if !c.inHello {
		return
	}
	c.inHello = false
	l.inHello--
	if l.byPID[c.pid]--; l.byPID[c.pid] <= 0 {
		delete(l.byPID, c.pid)
	}
}

// callerKey names whom the per-caller cap counts a verified connection
// against: its tab, or its process when it runs in no tab. It doubles as
// the caller's description in the refusal.
func callerKey(p peer) string {
	if tab := p.tabID(); tab != "" {
		return "tab " + tab
	}
	return "process " + strconv.Itoa(p.hello.PID)
}

// peerPID is the socket peer's pid as the kernel recorded it at
// connect(), or -1 when it cannot be read (the hello will then be refused
// as an unreadable peer).
func peerPID(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	pid := -1
	raw.Control(func(fd uintptr) {
		if u, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(u.Pid)
		}
	})
	return pid
}

// inputBudget is the byte budget shared by every connection's unfinished
// line. It is lock-free: reservations happen once per socket read.
type inputBudget struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes, or reports that they do not fit.
func (b *inputBudget) take(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// give returns n reserved bytes.
func (b *inputBudget) give(n int64) { b.used.Add(-n) }

// errOverBudget ends a connection whose unfinished line did not fit the
// shared input budget; the client was told before the read failed.
var errOverBudget = errors.New("input budget exhausted")

// meteredConn is an accepted connection as the limiter sees it. Its Read
// tracks the unfinished line — the bytes since the last newline, held in
// the read buffer and, once longer, in the line being assembled — and
// reserves it from the shared budget when it outgrows the read buffer.
// Its Write serialises whole lines, so a refusal it sends itself never
// interleaves with a response.
type meteredConn struct {
	net.Conn
	lim *limiter
	pid int
	// verified is set once the hello passed: refusals are then JSON-RPC
	// errors rather than handshake refusal lines.
	verified atomic.Bool

	// inHello and caller are guarded by lim.mu.
	inHello bool
	caller  string

	wmu sync.Mutex

	mu      sync.Mutex
	partial int64       // bytes of the unfinished line
	held    int64       // bytes reserved from the budget
	expiry  *time.Timer // LineTimeout of the line holding budget
	// draining is set by CloseWrite: what is still read is discarded
	// (lingeringClose), so it needs no budget.
	draining bool
	closed   bool
}

// Read reads from the socket and accounts for what arrived. When the
// unfinished line does not fit the budget the client is told, and the
// read fails with errOverBudget.
func (c *meteredConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.account(p[:n]) {
		c.refuse(refuse(RefuseOverloaded,
			"the gateway already buffers %s of unfinished messages from its clients, its limit, and cannot take more of this one; closing the connection, retry later",
			sizeString(c.lim.limits.MaxBufferedInput)))
		return 0, errOverBudget
	}
	return n, err
}

// account updates the unfinished line with b and resizes the reservation
// to match: nothing while the line fits the read buffer, all of it once
// it does not. It reports false when the budget cannot cover the line.
func (c *meteredConn) account(b []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return true
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		c.partial = int64(len(b) - i - 1)
	} else {
		c.partial += int64(len(b))
	}
	want := int64(0)
	if c.partial > readBufferSize {
		want = c.partial
	}
	return c.reserve(want)
}

// reserve moves the reservation to want bytes, arming the line timeout
// when the connection starts holding budget and disarming it when it
// stops. c.mu must be held.
func (c *meteredConn) reserve(want int64) bool {
	if c.closed {
		return false
	}
	switch {
	case want > c.held:
		if !c.lim.budget.take(want - c.held) {
			return false
		}
	case want < c.held:
		c.lim.budget.give(c.held - want)
	}
	switch {
	case c.held == 0 && want > 0:
		c.expiry = time.AfterFunc(c.lim.limits.LineTimeout, c.lineExpired)
	case c.held > 0 && want == 0:
		c.expiry.Stop()
		c.expiry = nil
	}
	c.held = want
	return true
}

// lineExpired ends a connection whose line held budget for LineTimeout.
// Closing the socket ends its reader; the handler then cleans up.
func (c *meteredConn) lineExpired() {
	c.mu.Lock()
	stale := c.closed || c.held == 0
	c.mu.Unlock()
	if stale {
		return // the line completed (or the connection ended) meanwhile
	}
	c.refuse(refuse(RefuseOverloaded,
		"a message longer than %s was still unfinished %s after it began; closing the connection",
		sizeString(readBufferSize), c.lim.limits.LineTimeout))
	c.Close()
}

// refuse logs r (sparingly) and sends it as the one line the client gets
// before the connection closes: a handshake refusal line during the hello,
// a JSON-RPC error after it.
func (c *meteredConn) refuse(r *Refusal) {
	c.lim.log.refused(r)
	line := refusalLine(r)
	if c.verified.Load() {
		line = errorResponse(nullID, codeServerBusy, r.Code+": "+r.Message).encode()
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	c.Conn.Write(line)
}

// Write writes b whole before any other line.
func (c *meteredConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.Conn.Write(b)
}

// Close releases the connection's reservation and its place in the caps,
// then closes the socket. It may be called more than once.
func (c *meteredConn) Close() error {
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	c.releaseLine()
	c.mu.Unlock()
	if first {
		c.lim.release(c)
	}
	return c.Conn.Close()
}

// releaseLine gives back the unfinished line's reservation and disarms
// its timeout. c.mu must be held.
func (c *meteredConn) releaseLine() {
	c.lim.budget.give(c.held)
	c.held = 0
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
}

// CloseWrite half-closes the socket when it can (see lingeringClose).
// The connection is ending: what it still reads is discarded, so its
// reservation is given back and no more is taken.
func (c *meteredConn) CloseWrite() error {
	c.mu.Lock()
	c.draining = true
	c.releaseLine()
	c.mu.Unlock()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// SyscallConn exposes the socket, for reading the peer's credentials.
func (c *meteredConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("a %T connection is not a socket", c.Conn)
	}
	return sc.SyscallConn()
}

// Accept back-off: a failed accept is retried after minAcceptDelay,
// doubling up to maxAcceptDelay while failures continue.
const (
	minAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay = time.Second
)

// acceptBackoff paces the accept loop through a burst of failures — out of
// file descriptors (EMFILE, ENFILE), of buffers or memory (ENOBUFS,
// ENOMEM), aborted connections — which pass when connections close. It
// logs the first failure of a burst and the recovery, not every failure.
type acceptBackoff struct {
	logger   *slog.Logger
	delay    time.Duration
	failures int
	since    time.Time
}

// wait sleeps before the next attempt after err; false when ctx ended
// first.
func (b *acceptBackoff) wait(ctx context.Context, err error) bool {
	if b.failures == 0 {
		b.since, b.delay = time.Now(), minAcceptDelay
		b.logger.Warn("cannot accept connections on the MCP socket; retrying with back-off until it works", "err", err)
	} else {
		b.delay = min(2*b.delay, maxAcceptDelay)
	}
	b.failures++
	t := time.NewTimer(b.delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// succeeded ends a burst of failures.
func (b *acceptBackoff) succeeded() {
	if b.failures == 0 {
		return
	}
	b.logger.Info("accepting connections on the MCP socket again",
		"failed_attempts", b.failures, "after", time.Since(b.since).Round(time.Millisecond))
	b.failures = 0
}

// loadLog logs refusals under load at most once per interval, with how
// many it held back, so that a flood of thousands of connections makes a
// few log lines rather than thousands.
type loadLog struct {
	logger *slog.Logger
	every  time.Duration

	mu       sync.Mutex
	last     time.Time
	heldBack int
}

// refused logs r unless a refusal was logged less than l.every ago.
func (l *loadLog) refused(r *Refusal) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.last) < l.every {
		l.heldBack++
		l.mu.Unlock()
		return
	}
	heldBack := l.heldBack
	l.last, l.heldBack = now, 0
	l.mu.Unlock()
	l.logger.Warn("refused a connection under load", "code", r.Code, "reason", r.Message, "similar_refusals_not_logged", heldBack)
}

// sizeString renders a byte count for people: "64 MiB", "1.5 MiB",
// "16 KiB", "300 bytes".
func sizeString(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		switch {
		case n >= u.size && n%u.size == 0:
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		case n >= u.size:
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
