package main

import (
	"bufio"
	"encoding/json"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestBridgeReusedCancelledID: a client that cancels call 5 and at once
// sends another call 5 gets the answer to the new call only — not the
// gateway's late answer to the cancelled one (go-sdk answers a cancelled
// call once its handler returns, which may be after the new call went
// out) — and a cancellation of the new call is honoured too. The fake
// gateway answers a cancelled call only once the next request arrived,
// so the old answer always comes after the id was used again.
func TestBridgeReusedCancelledID(t *testing.T) {
	sock, _ := fakeGateway(t, func(c *net.UnixConn, br *bufio.Reader, _ <-chan struct{}) {
		c.Write([]byte(okHello))
		var late []json.RawMessage // cancelled calls not answered yet
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			var m gatewayRequest
			json.Unmarshal([]byte(line), &m)
			answer := func(id json.RawMessage, what string) {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"what": what}})
				c.Write(append(b, '\n'))
			}
			switch {
			case m.Method == "notifications/cancelled":
				late = append(late, m.Params.RequestID)
			case m.ID != nil:
				for _, id := range late {
					answer(id, "cancelled call")
				}
				late = nil
				if m.Method != "hold" {
					answer(m.ID, m.Method)
				}
			}
		}
	})
	pc, errc := startPipeBridge(t, sock)
	pc.send(initializedLine)
	cancel := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`
	}
	for _, id := range []string{"5", `"s"`} {
		pc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"hold"}`)
		pc.send(cancel(id))
		pc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"again"}`)
		r := pc.next()
		res, _ := r["result"].(map[string]any)
		if res["what"] != "again" {
			t.Fatalf("id %s used again after its call was cancelled: first answer %v; want the new call's (no answer to the cancelled one)", id, r)
		}
	}
	// The reused id cancelled again: no answer to it either.
	pc.send(`{"jsonrpc":"2.0","id":5,"method":"hold"}`)
	pc.send(cancel("5"))
	pc.send(`{"jsonrpc":"2.0","id":5,"method":"hold"}`)
	pc.send(cancel("5"))
	pc.send(`{"jsonrpc":"2.0","id":6,"method":"last"}`)
	if r := pc.next(); r["id"] != 6.0 {
		t.Fatalf("after id 5 was cancelled twice: %v; want only the answer to call 6", r)
	}
	pc.send(`{"jsonrpc":"2.0","id":7,"method":"last"}`)
	if r := pc.next(); r["id"] != 7.0 {
		t.Fatalf("%v; want only the answer to call 7", r)
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

// TestBridgeCancelFloodBounded: a client that cancels many more calls
// than the bridge remembers (a gateway that answers none of them, each
// with a progressToken and its id used again) leaves the bridge's maps
// bounded.
func TestBridgeCancelFloodBounded(t *testing.T) {
	s := &session{inflight: map[string]int{}, serverReqs: map[string]int{}, cancelled: map[string]int{},
		aliases: map[string]string{}, aliasOf: map[string]string{}, tokens: map[string]string{}, tokenOf: map[string]string{}}
	for i := range 3 * maxCancelled {
		id := strconv.Itoa(i)
		gw := id
		if i%2 == 1 { // sent under an alias, as a reused id is
			gw = `"phantom-bridge-reused-` + id + `"`
			s.aliases[gw], s.aliasOf[id] = id, gw
		}
		tok := `"tok-` + id + `"`
		s.tokens[tok], s.tokenOf[gw] = gw, tok
		delete(s.aliasOf, id) // as a cancellation does
		s.keepCancelledLocked(gw, 1)
	}
	if len(s.cancelled) > maxCancelled || len(s.tokens) > maxCancelled || len(s.tokenOf) > maxCancelled || len(s.aliases) > maxCancelled {
		t.Errorf("after %d cancelled calls: %d cancelled, %d tokens, %d aliases remembered; want at most %d each",
			3*maxCancelled, len(s.cancelled), len(s.tokens), len(s.aliases), maxCancelled)
	}
}

// TestBridgeCancelledBeforeSent: a call the client makes while the
// bridge reconnects, and cancels before it could be sent, is never sent
// and gets no answer — not the bridge's "not reachable" error once it
// gives up — while the next call gets that error.
func TestBridgeCancelledBeforeSent(t *testing.T) {
	var conns atomic.Int32
	sock, hellos := fakeGateway(t, func(c *net.UnixConn, br *bufio.Reader, _ <-chan struct{}) {
		if conns.Add(1) > 1 {
			return // the gateway stays away
		}
		c.Write([]byte(okHello))
		holdGateway(c, br, 1)
	})
	go func() { // the bridge tries again and again: take every hello
		for {
			select {
			case <-hellos:
			case <-t.Context().Done():
				return
			}
		}
	}()
	pc, stdin, stdout := newPipeClient(t)
	errc := make(chan error, 1)
	go func() {
		errc <- runBridge(target{socket: sock, from: "--socket"}, "fake", bridgeTimes{drain: 10 * time.Second, reconnect: 2 * time.Second, retry: time.Second}, stdin, stdout)
	}()
	pc.send(initLine)
	pc.next()
	pc.send(initializedLine)
	pc.send(`{"jsonrpc":"2.0","id":2,"method":"crash"}`)
	if r := pc.next(); r["id"] != 2.0 || r["error"] == nil {
		t.Fatalf("after the gateway died: %v; want the bridge's error for call 2", r)
	}
	pc.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	pc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	pc.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if r := pc.next(); r["id"] != 4.0 || r["error"] == nil {
		t.Fatalf("first line after cancelled call 3 and call 4 = %v; want the bridge's error for call 4 only", r)
	}
	pc.stdin.Close()
	if err := <-errc; err != nil {
		t.Logf("bridge: %v", err)
	}
	select {
	case l, ok := <-pc.lines:
		if ok {
			t.Errorf("the bridge wrote %s after the last answer", l)
		}
	case <-time.After(time.Second):
	}
}
