package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// lockedBuffer collects log output from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// count reports how many log lines contain s.
func (l *lockedBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gatewayConfig shapes a gateway under test.
type gatewayConfig struct {
	limits Limits
	// tab is the tab every peer is placed in; "" places them outside.
	tab string
	// wrap, if set, wraps the listening socket.
	wrap func(net.Listener) net.Listener
}

// testGateway is a real gateway serving a Unix socket, its daemons absent.
type testGateway struct {
	s    *Server
	sock string
	log  *lockedBuffer
	// stop stops the gateway and waits for Serve; later calls are no-ops.
	stop func()
}

// startGateway serves a gateway until the test ends, then stops it and
// checks that Serve returned cleanly and left no goroutine behind.
func startGateway(t *testing.T, cfg gatewayConfig) *testGateway {
	t.Helper()
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	sock := filepath.Join(dir, "mcp.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var l net.Listener = lis
	if cfg.wrap != nil {
		l = cfg.wrap(lis)
	}
	logs := &lockedBuffer{}
	s, err := NewServer(Options{
		TabStateDir: dir,
		Addr:        func(n string) string { return "unix://" + dir + "/" + n + ".sock" },
		Logger:      slog.New(slog.NewTextHandler(logs, nil)),
		Limits:      cfg.limits,
		locate: func(pid int) (guard.Caller, error) {
			return guard.Caller{Inside: cfg.tab != "", PID: pid, TabID: cfg.tab}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return 10 s after the gateway was stopped")
			}
		})
	}
	t.Cleanup(func() {
		stop()
		testenv.Eventually(t, "the gateway's goroutines to end", func() (bool, string) {
			n := runtime.NumGoroutine()
			buf := make([]byte, 1<<20)
			return n <= before, fmt.Sprintf("%d goroutines, %d before\n%s", n, before, buf[:runtime.Stack(buf, true)])
		})
	})
	return &testGateway{s: s, sock: sock, log: logs, stop: stop}
}

// counts returns the limiter's live, in-hello and verified-by-caller
// counts.
func (g *testGateway) counts() (total, inHello int) {
	g.s.limiter.mu.Lock()
	defer g.s.limiter.mu.Unlock()
	return g.s.limiter.total, g.s.limiter.inHello
}

// waitAccepted waits until the gateway holds n connections.
func (g *testGateway) waitAccepted(t *testing.T, n int) {
	t.Helper()
	testenv.Eventually(t, fmt.Sprintf("%d accepted connections", n), func() (bool, string) {
		total, inHello := g.counts()
		return total == n, fmt.Sprintf("%d connections, %d in their hello", total, inHello)
	})
}

// buffered is the input the gateway holds across connections.
func (g *testGateway) buffered() int64 { return g.s.limiter.budget.used.Load() }

// client is one connection to the gateway, as the bridge makes it.
type client struct {
	net.Conn
	br *bufio.Reader
}

// dial connects to sock; the connection closes when the test ends.
func dial(t *testing.T, sock string) *client {
	t.Helper()
	c, err := tryDial(t, sock)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tryDial is dial for goroutines other than the test's.
func tryDial(t *testing.T, sock string) (*client, error) {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &client{Conn: nc, br: bufio.NewReader(nc)}, nil
}

// sendHello sends the bridge's hello. Its error is ignored: a gateway
// that refuses at once may close before reading it.
func (c *client) sendHello() {
	b, _ := json.Marshal(Hello{Hello: "phantom", Version: HelloVersion, PID: os.Getpid(), Client: "limits-test"})
	c.Write(append(b, '\n'))
}

// line reads one line; "" at the end of the stream.
func (c *client) line() string {
	l, _ := c.br.ReadString('\n')
	return l
}

// helloOK sends the hello and expects it accepted.
func (c *client) helloOK(t *testing.T) {
	t.Helper()
	c.sendHello()
	if l := c.line(); !strings.Contains(l, `"hello":"ok"`) {
		t.Fatalf("hello answered %q, want ok", l)
	}
}

// refusal reads the one refusal line and checks the connection then ends.
func (c *client) refusal(t *testing.T) Refusal {
	t.Helper()
	l := c.line()
	var r struct{ Error *Refusal }
	if err := json.Unmarshal([]byte(l), &r); err != nil || r.Error == nil {
		t.Fatalf("got %q, want a refusal line", l)
	}
	if more := c.line(); more != "" {
		t.Errorf("after the refusal the gateway sent %q, want the connection closed", more)
	}
	return *r.Error
}

// served reports whether a new client completes its hello and gets a
// ping answered, with what it got otherwise.
func served(t *testing.T, sock string) (bool, string) {
	c := dial(t, sock)
	defer c.Close()
	c.sendHello()
	if l := c.line(); !strings.Contains(l, `"hello":"ok"`) {
		return false, "hello answered " + l
	}
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n")
	l := c.line()
	return strings.Contains(l, `"id":7,"result"`), "ping answered " + l
}

// TestConnectionCaps fills each connection cap, checks the next
// connection gets the one refusal line naming the cap, and that closing a
// connection frees its place.
func TestConnectionCaps(t *testing.T) {
	pid := os.Getpid()
	tests := []struct {
		name   string
		limits Limits
		tab    string
		hello  bool // whether the connections filling the cap finish their hello
		want   string
	}{
		{"total", Limits{MaxConnections: 3}, "", true,
			"the gateway already serves 3 connections, its limit"},
		{"in hello", Limits{MaxInHello: 3, MaxInHelloPerProcess: 10}, "", false,
			"3 connections are still waiting to finish their hello, the gateway's limit"},
		{"in hello per process", Limits{MaxInHelloPerProcess: 3}, "", false,
			fmt.Sprintf("process %d already has 3 connections waiting to finish their hello", pid)},
		{"per caller outside any tab", Limits{MaxPerCaller: 3}, "", true,
			fmt.Sprintf("process %d already has 3 connections to the gateway, the limit per caller", pid)},
		{"per tab", Limits{MaxPerCaller: 3}, "t7", true,
			"tab t7 already has 3 connections to the gateway, the limit per caller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := startGateway(t, gatewayConfig{limits: tt.limits, tab: tt.tab})
			held := make([]*client, 3)
			for i := range held {
				held[i] = dial(t, g.sock)
				if tt.hello {
					held[i].helloOK(t)
				}
			}
			g.waitAccepted(t, len(held))

			c := dial(t, g.sock)
			c.sendHello()
			r := c.refusal(t)
			if r.Code != RefuseTooManyConnections || !strings.Contains(r.Message, tt.want) {
				t.Errorf("refusal = %+v, want code %s and a message containing %q", r, RefuseTooManyConnections, tt.want)
			}

			held[0].Close()
			testenv.Eventually(t, "a new client served after one closed", func() (bool, string) { return served(t, g.sock) })
		})
	}
}

// TestHelloDeadline checks that a connection must send its hello within
// HelloTimeout — silent or dribbling a byte at a time — while a verified
// connection may stay idle for as long as it likes.
func TestHelloDeadline(t *testing.T) {
	const timeout = 200 * time.Millisecond
	g := startGateway(t, gatewayConfig{limits: Limits{HelloTimeout: timeout}})

	idle := dial(t, g.sock)
	idle.helloOK(t)

	tests := []struct {
		name string
		send func(c *client, stop <-chan struct{})
	}{
		{"silent", func(*client, <-chan struct{}) {}},
		{"dribbling", func(c *client, stop <-chan struct{}) {
			for _, b := range []byte(`{"hello":"phantom","version":1,"pid":1,"client":"slow","tab_state":""}`) {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, g.sock)
			start := time.Now()
			stop := make(chan struct{})
			sent := make(chan struct{})
			go func() { defer close(sent); tt.send(c, stop) }()
			r := c.refusal(t)
			close(stop)
			<-sent
			if r.Code != RefuseBadHello || !strings.Contains(r.Message, "no hello within 200ms") {
				t.Errorf("refusal = %+v, want %s: no hello within 200ms", r, RefuseBadHello)
			}
			if d := time.Since(start); d < timeout {
				t.Errorf("closed after %s, before the %s deadline", d, timeout)
			}
		})
	}

	time.Sleep(3 * timeout)
	fmt.Fprintf(idle, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if l := idle.line(); !strings.Contains(l, `"id":1,"result":{}`) {
		t.Errorf("an idle verified connection: ping answered %q", l)
	}
}

// failingListener fails its first accepts with errno, as the kernel does
// when the process is out of descriptors or memory, then accepts.
type failingListener struct {
	net.Listener
	errno syscall.Errno
	fails atomic.Int64 // accepts left to fail
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "unix", Addr: l.Addr(), Err: os.NewSyscallError("accept4", l.errno)}
	}
	return l.Listener.Accept()
}

// TestAcceptErrorsBackOff checks that accept errors are retried with a
// growing back-off, logged once per burst, and that clients are served
// once accepting works again.
func TestAcceptErrorsBackOff(t *testing.T) {
	const fails = 4
	minWait := time.Duration(0) // the back-off sleeps 5, 10, 20, 40 ms
	for i := range fails {
		minWait += minAcceptDelay << i
	}
	for _, errno := range []syscall.Errno{unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM, unix.ECONNABORTED, unix.EPROTO} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			start := time.Now()
			g := startGateway(t, gatewayConfig{wrap: func(l net.Listener) net.Listener {
				fl := &failingListener{Listener: l, errno: errno}
				fl.fails.Store(fails)
				return fl
			}})
			if ok, state := served(t, g.sock); !ok {
				t.Fatalf("after %d failed accepts: %s", fails, state)
			}
			if d := time.Since(start); d < minWait {
				t.Errorf("served after %s; the back-off alone takes %s", d, minWait)
			}
			g.stop()
			if n := g.log.count("cannot accept connections"); n != 1 {
				t.Errorf("logged the failure %d times, want once per burst:\n%s", n, g.log)
			}
			if n := g.log.count(fmt.Sprintf("accepting connections on the MCP socket again\" failed_attempts=%d", fails)); n != 1 {
				t.Errorf("logged the recovery %d times, want once:\n%s", n, g.log)
			}
		})
	}
}

// TestAcceptEndsOnlyWhenClosed checks that accept errors that never pass
// do not end Serve, and that stopping the gateway still ends it at once,
// even in the middle of a back-off.
func TestAcceptEndsOnlyWhenClosed(t *testing.T) {
	var fl *failingListener
	g := startGateway(t, gatewayConfig{wrap: func(l net.Listener) net.Listener {
		fl = &failingListener{Listener: l, errno: unix.EMFILE}
		fl.fails.Store(1 << 62)
		return fl
	}})
	testenv.Eventually(t, "the back-off to reach a second", func() (bool, string) {
		attempts := 1<<62 - fl.fails.Load()
		return attempts >= 9, fmt.Sprintf("%d accept attempts", attempts) // 5 ms · 2⁸ > 1 s
	})
	start := time.Now()
	g.stop()
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Serve took %s to stop during a back-off", d)
	}
	if n := g.log.count("cannot accept connections"); n != 1 {
		t.Errorf("logged the failure %d times, want once per burst:\n%s", n, g.log)
	}
}

// pingPrefix starts a ping whose params carry a long string; the client
// finishes it with pingSuffix.
const (
	pingPrefix = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`
	pingSuffix = `"}}` + "\n"
)

// partialPing is the start of a ping n bytes long, without its end.
func partialPing(n int) []byte {
	return append([]byte(pingPrefix), bytes.Repeat([]byte("a"), n-len(pingPrefix))...)
}

// TestInputBudget checks the shared budget for unfinished lines: a line
// that does not fit is refused with a JSON-RPC error and its connection
// closed, a line that fits is served, a finished line gives its bytes
// back, and a line that holds budget too long is ended.
func TestInputBudget(t *testing.T) {
	g := startGateway(t, gatewayConfig{limits: Limits{MaxBufferedInput: 2 << 20, LineTimeout: 2 * time.Second}})

	a := dial(t, g.sock)
	a.helloOK(t)
	a.Write(partialPing(1536 << 10))
	testenv.Eventually(t, "the first line to hold 1.5 MiB", func() (bool, string) {
		return g.buffered() == 1536<<10, fmt.Sprintf("%d bytes held", g.buffered())
	})

	b := dial(t, g.sock)
	b.helloOK(t)
	go b.Write(partialPing(1 << 20)) // fails when the gateway closes
	l := b.line()
	for _, want := range []string{`"id":null,"error":{"code":-32000`, "overloaded", "already buffers 2 MiB of unfinished messages"} {
		if !strings.Contains(l, want) {
			t.Errorf("a line over the budget: got %q, want it to contain %q", l, want)
		}
	}
	if more := b.line(); more != "" {
		t.Errorf("after the error the gateway sent %q, want the connection closed", more)
	}

	io.WriteString(a, pingSuffix)
	if l := a.line(); !strings.Contains(l, `"id":1,"result":{}`) {
		t.Errorf("the line within the budget: got %q, want its answer", l)
	}
	if n := g.buffered(); n != 0 {
		t.Errorf("%d bytes still held after every line finished or its connection closed", n)
	}

	c := dial(t, g.sock)
	c.helloOK(t)
	c.Write(append(partialPing(1536<<10), pingSuffix...))
	if l := c.line(); !strings.Contains(l, `"id":1,"result":{}`) {
		t.Errorf("a line fitting the freed budget: got %q, want its answer", l)
	}

	d := dial(t, g.sock)
	d.helloOK(t)
	d.Write(partialPing(100 << 10))
	start := time.Now()
	if l := d.line(); !strings.Contains(l, `"code":-32000`) || !strings.Contains(l, "still unfinished 2s after it began") {
		t.Errorf("a stalled line: got %q, want it ended", l)
	}
	if e := time.Since(start); e > 5*time.Second {
		t.Errorf("a stalled line was ended after %s, want about 2s", e)
	}
	testenv.Eventually(t, "the stalled line's bytes given back", func() (bool, string) {
		return g.buffered() == 0, fmt.Sprintf("%d bytes held", g.buffered())
	})
}

// TestOverlongLineDrained checks that a line over MaxLine gets its own
// error, not a budget refusal: the rest of it is drained and discarded,
// holding no budget.
func TestOverlongLineDrained(t *testing.T) {
	g := startGateway(t, gatewayConfig{limits: Limits{MaxBufferedInput: MaxLine + 1<<20}})
	c := dial(t, g.sock)
	c.helloOK(t)
	go c.Write(partialPing(MaxLine + 2<<20)) // fails when the gateway closes
	if l := c.line(); !strings.Contains(l, `"code":-32600`) || !strings.Contains(l, "longer than") {
		t.Errorf("got %q, want the error for a message over MaxLine", l)
	}
	if more := c.line(); more != "" {
		t.Errorf("after the error the gateway sent %q, want the connection closed", more)
	}
	testenv.Eventually(t, "the line's bytes given back", func() (bool, string) {
		return g.buffered() == 0, fmt.Sprintf("%d bytes held", g.buffered())
	})
	if n := g.log.count("under load"); n != 0 {
		t.Errorf("draining an overlong line was logged as a refusal under load:\n%s", g.log)
	}
}

// TestInputFloodMemoryBounded has 40 verified clients each send most of a
// 2 MiB message at once: without the budget the gateway would hold 80 MiB;
// with an 8 MiB budget its heap must grow by far less, the clients over
// the budget are told why, and the others are served.
func TestInputFloodMemoryBounded(t *testing.T) {
	const (
		clients = 40
		size    = 2 << 20
		budget  = 8 << 20
	)
	g := startGateway(t, gatewayConfig{limits: Limits{MaxBufferedInput: budget, MaxPerCaller: clients}})
	payload := partialPing(size)
	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = dial(t, g.sock)
		cs[i].helloOK(t)
	}
	before := heapAlloc()

	var wg sync.WaitGroup
	var refused atomic.Int32
	overBudget := make([]bool, clients)
	for i, c := range cs {
		wg.Go(func() {
			c.Write(payload)
			c.SetReadDeadline(time.Now().Add(time.Second))
			if l := c.line(); strings.Contains(l, "overloaded") {
				overBudget[i] = true
				refused.Add(1)
			} else if l != "" {
				t.Errorf("client %d got %q, want nothing or the overloaded error", i, l)
			}
		})
	}
	wg.Wait()
	grown := heapAlloc() - before
	t.Logf("heap grew by %s; %d of %d clients refused; %s held", sizeString(grown), refused.Load(), clients, sizeString(g.buffered()))
	if grown > 3*budget {
		t.Errorf("heap grew by %s with a %s budget", sizeString(grown), sizeString(budget))
	}
	if held := g.buffered(); held > budget {
		t.Errorf("%s held, over the %s budget", sizeString(held), sizeString(budget))
	}
	if n := refused.Load(); n < clients-budget/size {
		t.Errorf("%d clients refused, want at least %d", n, clients-budget/size)
	}

	for i, c := range cs {
		if overBudget[i] {
			continue
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, pingSuffix)
		if l := c.line(); !strings.Contains(l, `"id":1,"result":{}`) {
			t.Errorf("client %d within the budget: got %q, want its answer", i, l)
		}
	}
	if n := g.buffered(); n != 0 {
		t.Errorf("%d bytes still held after every line finished", n)
	}
}

// heapAlloc is the live heap after a collection.
func heapAlloc() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestFloodThenServe floods a gateway capped at 32 connections with 400
// clients that all hold on: exactly 32 are served, every other one gets
// the refusal line, the log stays short, and once the flood closes a new
// client is served.
func TestFloodThenServe(t *testing.T) {
	const (
		maxConns = 32
		flood    = 400
		workers  = 8
	)
	g := startGateway(t, gatewayConfig{limits: Limits{MaxConnections: maxConns, MaxPerCaller: flood}})
	var (
		mu      sync.Mutex
		held    []*client
		refused atomic.Int32
		wg      sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for range flood / workers {
				c, err := tryDial(t, g.sock)
				if err != nil {
					t.Error(err)
					return
				}
				c.sendHello()
				switch l := c.line(); {
				case strings.Contains(l, `"hello":"ok"`):
					mu.Lock()
					held = append(held, c)
					mu.Unlock()
				case strings.Contains(l, RefuseTooManyConnections):
					refused.Add(1)
					c.Close()
				default:
					t.Errorf("a flooding client got %q", l)
					c.Close()
				}
			}
		})
	}
	wg.Wait()
	if len(held) != maxConns || refused.Load() != flood-maxConns {
		t.Errorf("%d clients served and %d refused, want %d and %d", len(held), refused.Load(), maxConns, flood-maxConns)
	}
	if ok, _ := served(t, g.sock); ok {
		t.Error("a client was served while the gateway was full")
	}
	if n := g.log.count("under load"); n == 0 || n > 5 {
		t.Errorf("%d log lines for %d refusals, want a few:\n%s", n, flood-maxConns, g.log)
	}

	for _, c := range held {
		c.Close()
	}
	testenv.Eventually(t, "a new client served after the flood", func() (bool, string) { return served(t, g.sock) })
}

// fdChildEnv carries the socket path to the child of
// TestOutOfFileDescriptors.
const fdChildEnv = "PHANTOM_GATEWAY_TEST_FD_CHILD"

// TestOutOfFileDescriptors runs a gateway in a child process whose
// open-file limit is 64 and whose caps are out of the way, then floods it
// with 150 connections: the kernel refuses its accept4 with EMFILE (the
// failure that once ended the gateway for good). It must keep running,
// say so once, and serve a new client when the flood closes.
func TestOutOfFileDescriptors(t *testing.T) {
	if sock := os.Getenv(fdChildEnv); sock != "" {
		serveWithFewFiles(t, sock)
		return
	}
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutOfFileDescriptors$", "-test.count=1")
	cmd.Env = append(os.Environ(), fdChildEnv+"="+sock)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the gateway's process: %v\n%s", err, logs)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the gateway's process did not stop\n%s", logs)
		}
	})
	testenv.Eventually(t, "the child's socket", func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, fmt.Sprint(err, "\n", logs)
	})

	flood := make([]net.Conn, 0, 150)
	for range cap(flood) {
		nc, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatalf("after %d connections: %v", len(flood), err)
		}
		flood = append(flood, nc)
	}
	testenv.Eventually(t, "the gateway to run out of descriptors", func() (bool, string) {
		return logs.count("too many open files") > 0, logs.String()
	})
	select {
	case err := <-exited:
		t.Fatalf("the gateway exited when it ran out of descriptors: %v\n%s", err, logs)
	default:
	}
	for _, nc := range flood {
		nc.Close()
	}
	testenv.Eventually(t, "a new client served after the flood", func() (bool, string) { return served(t, sock) })
	// Accepting the closed flood may run out again briefly: each burst
	// must be logged once, with its end.
	failed, recovered := logs.count("cannot accept connections"), logs.count("accepting connections on the MCP socket again")
	if failed == 0 || failed != recovered {
		t.Errorf("logged %d bursts of failures and %d recoveries, want one line for each start and end:\n%s", failed, recovered, logs)
	}
}

// serveWithFewFiles is the child of TestOutOfFileDescriptors: a gateway
// limited to 64 open files, served until stdin closes.
func serveWithFewFiles(t *testing.T, sock string) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	rl.Cur = 64
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(sock)
	s, err := NewServer(Options{
		TabStateDir: dir,
		Addr:        func(n string) string { return "unix://" + dir + "/" + n + ".sock" },
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Limits:      Limits{MaxConnections: 1 << 20, MaxInHello: 1 << 20, MaxInHelloPerProcess: 1 << 20, HelloTimeout: time.Minute},
		locate:      func(pid int) (guard.Caller, error) { return guard.Caller{PID: pid}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := s.Serve(ctx, lis); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
}

// TestDefaultMaxConnections checks the default connection cap against the
// open-file limit.
func TestDefaultMaxConnections(t *testing.T) {
	for _, tt := range []struct {
		nofile uint64
		want   int
	}{{0, 1024}, {1 << 20, 1024}, {2048, 1024}, {1024, 512}, {256, 128}, {1, 1}} {
		if got := defaultMaxConnectionsFor(tt.nofile); got != tt.want {
			t.Errorf("defaultMaxConnectionsFor(%d) = %d, want %d", tt.nofile, got, tt.want)
		}
	}
}

// TestSizeString checks the byte counts shown in refusals.
func TestSizeString(t *testing.T) {
	for n, want := range map[int64]string{300: "300 bytes", 16 << 10: "16 KiB", 1536 << 10: "1.5 MiB", 64 << 20: "64 MiB", 4 << 30: "4 GiB"} {
		if got := sizeString(n); got != want {
			t.Errorf("sizeString(%d) = %q, want %q", n, got, want)
		}
	}
}
