package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestScanMessage checks what the bridge reads of a line: the top-level
// id and method only, whatever the rest holds.
func TestScanMessage(t *testing.T) {
	for _, tc := range []struct {
		line string
		want message
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":"x","method":"y"}}`, message{kind: kindRequest, id: "7", method: "tools/call"}},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, message{kind: kindNotification, method: "notifications/initialized"}},
		{`{"jsonrpc":"2.0","id":"a\"b","result":{"text":"}{\\\"]["}}`, message{kind: kindResponse, id: `"a\"b"`}},
		{` { "id" : 3 , "error" : {"code":-1,"message":"x"} }` + "\n", message{kind: kindResponse, id: "3", isError: true}},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`, message{}},
		{`{"result":[1,2,{"a":[]}],"id":12}`, message{kind: kindResponse, id: "12"}},
		{`reply to 1`, message{}},
		{`{"id":1,"method":"x"`, message{}},
		{`{"id":"unterminated}`, message{}},
		{``, message{}},
	} {
		if got := scanMessage([]byte(tc.line)); got != tc.want {
			t.Errorf("scanMessage(%q) = %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

// pipeClient is the client side of an in-process bridge: it writes lines
// to the bridge's stdin and reads the lines of its stdout.
type pipeClient struct {
	t     *testing.T
	stdin *io.PipeWriter
	lines chan string
}

func newPipeClient(t *testing.T) (*pipeClient, io.Reader, io.Writer) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	pc := &pipeClient{t: t, stdin: inW, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			pc.lines <- sc.Text()
		}
		close(pc.lines)
	}()
	t.Cleanup(func() { inW.Close(); outW.Close() })
	return pc, inR, outW
}

func (pc *pipeClient) send(line string) {
	pc.t.Helper()
	if _, err := pc.stdin.Write([]byte(line + "\n")); err != nil {
		pc.t.Fatalf("write %s to the bridge: %v", line, err)
	}
}

// next is the next line the bridge wrote, decoded.
func (pc *pipeClient) next() map[string]any {
	pc.t.Helper()
	select {
	case l, ok := <-pc.lines:
		if !ok {
			pc.t.Fatal("the bridge closed its stdout")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			pc.t.Fatalf("bridge wrote %q: %v", l, err)
		}
		return m
	case <-time.After(30 * time.Second):
		pc.t.Fatal("no line from the bridge within 30 s")
	}
	return nil
}

const (
	initLine        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// replyTo answers every request read from br with its id and the
// connection's number, and records every line; it returns at the end of
// input or after a request for "crash" (without answering it).
func replyTo(c *net.UnixConn, br *bufio.Reader, n int, seen func(string)) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSpace(line)
		seen(line)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal([]byte(line), &m)
		if m.Method == "crash" {
			return
		}
		if m.ID != nil && m.Method != "" {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"conn": n, "method": m.Method}})
			c.Write(append(b, '\n'))
		}
	}
}

// TestBridgeReconnects: the gateway dies with a call in flight. That call
// gets an error from the bridge; the bridge connects again, sends a new
// hello, replays initialize (whose reply the client never sees) and
// notifications/initialized, and the next call goes through as if
// nothing happened.
func TestBridgeReconnects(t *testing.T) {
	var conns atomic.Int32
	var mu sync.Mutex
	seen := map[int][]string{}
	sock, hellos := fakeGateway(t, func(c *net.UnixConn, br *bufio.Reader, _ <-chan struct{}) {
		n := int(conns.Add(1))
		c.Write([]byte(okHello))
		replyTo(c, br, n, func(l string) { mu.Lock(); seen[n] = append(seen[n], l); mu.Unlock() })
	})
	pc, stdin, stdout := newPipeClient(t)
	errc := make(chan error, 1)
	go func() {
		errc <- runBridge(target{socket: sock, from: "--socket"}, "fake", bridgeTimes{drain: 10 * time.Second, reconnect: 20 * time.Second, retry: time.Second}, stdin, stdout)
	}()

	pc.send(initLine)
	if r := pc.next(); r["id"] != 1.0 || r["result"] == nil {
		t.Fatalf("reply to initialize = %v", r)
	}
	pc.send(initializedLine)
	pc.send(`{"jsonrpc":"2.0","id":2,"method":"crash"}`)
	r := pc.next()
	e, _ := r["error"].(map[string]any)
	if r["id"] != 2.0 || e == nil || !strings.Contains(e["message"].(string), "went away") {
		t.Fatalf("reply to the call in flight when the gateway went away = %v; want an error saying so", r)
	}
	pc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	r = pc.next()
	if res, _ := r["result"].(map[string]any); r["id"] != 3.0 || res == nil || res["conn"] != 2.0 {
		t.Fatalf("reply to the call after the gateway came back = %v; want a result from the second connection", r)
	}
	pc.stdin.Close()
	if err := <-errc; err != nil {
		t.Errorf("bridge: %v", err)
	}
	if len(hellos) != 2 {
		t.Errorf("%d hellos, want 2", len(hellos))
	}
	mu.Lock()
	defer mu.Unlock()
	second := seen[2]
	if len(second) != 3 {
		t.Fatalf("the second connection got %q; want the replayed initialize, notifications/initialized, tools/list", second)
	}
	var replay map[string]any
	json.Unmarshal([]byte(second[0]), &replay)
	var orig map[string]any
	json.Unmarshal([]byte(initLine), &orig)
	if replay["method"] != "initialize" || replay["id"] == 1.0 || !jsonEqual(replay["params"], orig["params"]) {
		t.Errorf("first line on the new connection = %s; want the client's initialize with the same params under an id of the bridge's", second[0])
	}
	if second[1] != initializedLine || !strings.Contains(second[2], `"id":3`) {
		t.Errorf("the new connection got %q", second)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestBridgeGatewayStaysDown: once the gateway is gone past the bounds, a
// call gets an error naming the socket and `phantom up` (and the bridge
// stays up); when the gateway is back, the next call finds it.
func TestBridgeGatewayStaysDown(t *testing.T) {
	dir, err := os.MkdirTemp("", "fgw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "gw.sock")
	var conns atomic.Int32
	var wg sync.WaitGroup
	serve := func() *net.UnixListener {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for {
				c, err := l.AcceptUnix()
				if err != nil {
					return
				}
				wg.Go(func() {
					defer c.Close()
					br := bufio.NewReader(c)
					if _, err := br.ReadString('\n'); err != nil {
						return
					}
					c.Write([]byte(okHello))
					replyTo(c, br, int(conns.Add(1)), func(string) {})
				})
			}
		})
		return l
	}
	l := serve()
	t.Cleanup(wg.Wait)

	pc, stdin, stdout := newPipeClient(t)
	errc := make(chan error, 1)
	go func() {
		errc <- runBridge(target{socket: sock, from: "--socket"}, "fake", bridgeTimes{drain: 10 * time.Second, reconnect: 300 * time.Millisecond, retry: 200 * time.Millisecond}, stdin, stdout)
	}()
	pc.send(initLine)
	pc.next()
	pc.send(initializedLine)

	l.Close()                                            // the gateway stops listening and removes its socket …
	pc.send(`{"jsonrpc":"2.0","id":2,"method":"crash"}`) // … and dies
	if r := pc.next(); r["id"] != 2.0 || r["error"] == nil {
		t.Fatalf("reply to the call in flight = %v, want an error", r)
	}
	pc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	r := pc.next()
	e, _ := r["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if r["id"] != 3.0 || !strings.Contains(msg, sock) || !strings.Contains(msg, "phantom up") {
		t.Fatalf("reply to a call while the gateway is down = %v; want an error naming %s and `phantom up`", r, sock)
	}

	l = serve()
	defer l.Close()
	pc.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if r := pc.next(); r["id"] != 4.0 || r["result"] == nil {
		t.Fatalf("reply to a call once the gateway is back = %v; want a result", r)
	}
	pc.stdin.Close()
	if err := <-errc; err != nil {
		t.Errorf("bridge: %v", err)
	}
}

// TestBridgeRefusedOnReconnect: a restarted gateway that refuses the
// hello for good ends the bridge with its reason.
func TestBridgeRefusedOnReconnect(t *testing.T) {
	var conns atomic.Int32
	sock, _ := fakeGateway(t, func(c *net.UnixConn, br *bufio.Reader, _ <-chan struct{}) {
		if conns.Add(1) == 1 {
			c.Write([]byte(okHello))
			replyTo(c, br, 1, func(string) {})
			return
		}
		c.Write([]byte(`{"error":{"code":"not_in_tab","message":"the hello claims tab t2, but process 9 runs in tab t1"}}` + "\n"))
	})
	pc, stdin, stdout := newPipeClient(t)
	errc := make(chan error, 1)
	go func() {
		errc <- runBridge(target{socket: sock, from: "--socket"}, "fake", bridgeTimes{drain: 10 * time.Second, reconnect: 20 * time.Second, retry: time.Second}, stdin, stdout)
	}()
	pc.send(`{"jsonrpc":"2.0","id":2,"method":"crash"}`)
	if r := pc.next(); r["id"] != 2.0 || r["error"] == nil {
		t.Fatalf("reply to the call in flight = %v, want an error", r)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "not_in_tab") {
			t.Errorf("bridge ended with %v, want the refusal", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the bridge did not end after the restarted gateway refused it")
	}
}

// TestBridgeAcrossGatewayRestart: an agent (the official Go SDK client in a
// real tab) makes a call, the gateway is killed with -9, `phantom up`
// restarts just the gateway, and the agent's next call succeeds: its
// bridge reconnected without the agent seeing anything.
func TestBridgeAcrossGatewayRestart(t *testing.T) {
	env, _ := up(t)
	before := getStatus(t, env)
	pids := map[string]int{}
	for _, d := range before.Daemons {
		pids[d.Name] = d.PID
	}
	dir := t.TempDir()
	killed, finish := filepath.Join(dir, "killed"), filepath.Join(dir, "finish")
	defer os.WriteFile(finish, nil, 0o600)
	tab, read := runAgent(t, env, []map[string]any{
		{"op": "call", "tool": "list_terminals"}, // 0
		{"op": "wait", "file": killed},           // 1
		{"op": "call", "tool": "list_terminals"}, // 2
		{"op": "wait", "file": finish},           // 3
	})
	if r := resultOf(t, waitStep(t, read, 0)); r.IsError || !strings.Contains(r.text(), `"id":"`+tab+`"`) {
		t.Fatalf("list_terminals before the restart = %+v", r)
	}

	gw := pids["gateway"]
	if err := syscall.Kill(gw, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 the gateway (pid %d): %v", gw, err)
	}
	eventually(t, "the killed gateway to be gone", func() (bool, string) {
		return !running(gw), fmt.Sprintf("pid %d still runs", gw)
	})
	out := mustPhantom(t, env, "up")
	if !strings.Contains(out, "started gateway") {
		t.Errorf("phantom up after the gateway was killed printed:\n%s\nwant it to start the gateway", out)
	}
	for name := range pids {
		if name != "gateway" && strings.Contains(out, "started "+name) {
			t.Errorf("phantom up restarted %s, which was running:\n%s", name, out)
		}
	}
	after := getStatus(t, env)
	for _, d := range after.Daemons {
		if d.Name != "gateway" && d.PID != pids[d.Name] {
			t.Errorf("%s changed pid from %d to %d", d.Name, pids[d.Name], d.PID)
		}
	}

	os.WriteFile(killed, nil, 0o600)
	l := waitStep(t, read, 2)
	if l.Error != "" {
		t.Fatalf("the agent's call after the gateway came back failed: %s", l.Error)
	}
	if r := resultOf(t, l); r.IsError || !strings.Contains(r.text(), `"id":"`+tab+`"`) {
		t.Errorf("list_terminals after the restart = %+v", r)
	}
	for _, l := range read() {
		if l.Op == "fatal" {
			t.Errorf("the agent failed: %s", l.Error)
		}
	}
}

// BenchmarkScanMessage reads a 1 MiB tool result the way the bridge does
// for every line the gateway sends: with "id" first, as the go-sdk writes
// it, and last, which makes it skip the whole result.
func BenchmarkScanMessage(b *testing.B) {
	text := strings.Repeat(`line of output with \"quotes\" and {braces} [1,2]\n`, 1<<20/52)
	result := `"result":{"content":[{"type":"text","text":"` + text + `"}],"structuredContent":{"text":"` + text + `"}}`
	for name, line := range map[string]string{
		"id first": `{"jsonrpc":"2.0","id":42,` + result + "}\n",
		"id last":  `{"jsonrpc":"2.0",` + result + `,"id":42}` + "\n",
	} {
		b.Run(name, func(b *testing.B) {
			line := []byte(line)
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if m := scanMessage(line); m.kind != kindResponse || m.id != "42" {
					b.Fatalf("scanMessage = %+v", m)
				}
			}
		})
	}
}
