package main

import (
	"bufio"
	"encoding/json"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCanonID: the spellings of one id compare equal, and distinct ids
// stay distinct.
func TestCanonID(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"7", "7"}, {"7", "7.0"}, {"-3", "-3"}, {`"a"`, `"\u0061"`}, {`"x\"y"`, `"x\u0022y"`}, {"1e2", "100"},
	} {
		if canonID(tc.a) != canonID(tc.b) {
			t.Errorf("canonID(%s) = %s, canonID(%s) = %s: want them equal", tc.a, canonID(tc.a), tc.b, canonID(tc.b))
		}
	}
	for _, tc := range []struct{ a, b string }{{"7", `"7"`}, {"1", "2"}, {`"a"`, `"b"`}} {
		if canonID(tc.a) == canonID(tc.b) {
			t.Errorf("canonID(%s) = canonID(%s) = %s: want them apart", tc.a, tc.b, canonID(tc.a))
		}
	}
}

// gatewayRequest is what a fake gateway reads of a line from the bridge:
// a request or notification, the id a cancellation names, a progress
// token.
type gatewayRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

// holdGateway is a fake gateway that answers "hold" requests only once
// the client cancels them (as go-sdk v1.8.0 answers a cancelled call when
// its handler returns), other requests at once, and dies on "crash"
// without answering it. Before it answers a request that has a
// progressToken, it sends a progress notification for it.
func holdGateway(c *net.UnixConn, br *bufio.Reader, n int) {
	tokens := map[string]json.RawMessage{} // request id → progressToken
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		var m gatewayRequest
		json.Unmarshal([]byte(line), &m)
		if tok := m.Params.Meta.ProgressToken; tok != nil {
			tokens[string(m.ID)] = tok
		}
		answer := func(id json.RawMessage) {
			if tok, ok := tokens[string(id)]; ok {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
					"params": map[string]any{"progressToken": tok, "progress": 1, "message": "still waiting"}})
				c.Write(append(b, '\n'))
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"conn": n}})
			c.Write(append(b, '\n'))
		}
		switch {
		case m.Method == "crash":
			return
		case m.Method == "notifications/cancelled":
			answer(m.Params.RequestID)
		case m.ID != nil && m.Method != "hold":
			answer(m.ID)
		}
	}
}

// startPipeBridge runs a bridge to sock for a pipe client, initialized;
// the channel gets what the bridge returned.
func startPipeBridge(t *testing.T, sock string) (*pipeClient, chan error) {
	t.Helper()
	pc, stdin, stdout := newPipeClient(t)
	errc := make(chan error, 1)
	go func() {
		errc <- runBridge(target{socket: sock, from: "--socket"}, "fake", bridgeTimes{drain: 10 * time.Second, reconnect: 20 * time.Second, retry: time.Second}, stdin, stdout)
	}()
	pc.send(initLine)
	pc.next()
	return pc, errc
}

// TestBridgeDropsCancelled: a request the client cancelled gets no
// response through the bridge — not the gateway's answer that raced the
// cancellation (under another spelling of its id too), nor progress about
// it, nor the bridge's
// own "went away" error when the gateway dies with it in flight — while
// a call the client still waits for gets that error, and later calls
// their answers.
func TestBridgeDropsCancelled(t *testing.T) {
	var conns atomic.Int32
	sock, _ := fakeGateway(t, func(c *net.UnixConn, br *bufio.Reader, _ <-chan struct{}) {
		n := int(conns.Add(1))
		c.Write([]byte(okHello))
		holdGateway(c, br, n)
	})
	pc, errc := startPipeBridge(t, sock)
	pc.send(initializedLine)
	cancel := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"user"}}`
	}
	pc.send(`{"jsonrpc":"2.0","id":2,"method":"hold","params":{"_meta":{"progressToken":"p2"}}}`)
	pc.send(cancel("2"))
	pc.send(`{"jsonrpc":"2.0","id":"s-1","method":"hold","params":{"_meta":{"progressToken":7}}}`)
	pc.send(cancel(`"s\u002d1"`))
	pc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"progressToken":"p3"}}}`)
	if r := pc.next(); r["method"] != "notifications/progress" || r["params"].(map[string]any)["progressToken"] != "p3" {
		t.Fatalf("first line after two cancelled calls = %v; want the progress of call 3 (none about the cancelled calls)", r)
	}
	if r := pc.next(); r["id"] != 3.0 {
		t.Fatalf("line after call 3's progress = %v; want its answer (the cancelled calls get none)", r)
	}
	// Calls 4 and 5 are in flight, 4 cancelled, when the gateway dies
	// on call 6: calls 5 and 6 get the bridge's error, 4 nothing.
	pc.send(`{"jsonrpc":"2.0","id":4,"method":"hold"}`)
	pc.send(`{"jsonrpc":"2.0","id":5,"method":"hold"}`)
	pc.send(cancel("4"))
	pc.send(`{"jsonrpc":"2.0","id":6,"method":"crash"}`)
	got := map[float64]bool{}
	for range 2 {
		r := pc.next()
		e, _ := r["error"].(map[string]any)
		id, _ := r["id"].(float64)
		if e == nil || !strings.Contains(e["message"].(string), "went away") || id != 5 && id != 6 {
			t.Fatalf("line after the gateway died = %v; want the bridge's error for call 5 or 6 (none for cancelled call 4)", r)
		}
		got[id] = true
	}
	pc.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if r := pc.next(); r["id"] != 7.0 || !len2(got) {
		t.Fatalf("after the restart: %v (errors for %v); want the answer to call 7 and errors for 5 and 6", r, got)
	}
	pc.stdin.Close()
	if err := <-errc; err != nil {
		t.Errorf("bridge: %v", err)
	}
	select {
	case l, ok := <-pc.lines:
		if ok {
			t.Errorf("the bridge wrote %s after the last answer", l)
		}
	case <-time.After(time.Second):
	}
}

func len2(m map[float64]bool) bool { return len(m) == 2 }

// TestBridgeAbandoned: a call in flight when the client closed its input
// and the gateway then went away gets no error from the bridge: the
// client is gone, and "make the call again" would be said to no one.
func TestBridgeAbandoned(t *testing.T) {
	sock, _ := fakeGateway(t, func(c *net.UnixConn, br *bufio.Reader, _ <-chan struct{}) {
		c.Write([]byte(okHello))
		holdGateway(c, br, 1) // returns, closing, at the end of the input
	})
	pc, errc := startPipeBridge(t, sock)
	pc.send(`{"jsonrpc":"2.0","id":2,"method":"hold"}`)
	pc.stdin.Close()
	if err := <-errc; err != nil {
		t.Errorf("bridge: %v", err)
	}
	select {
	case l, ok := <-pc.lines:
		if ok {
			t.Errorf("the bridge answered the abandoned call: %s", l)
		}
	case <-time.After(time.Second):
	}
}
