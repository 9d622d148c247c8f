package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// rawBridge is `phantom +mcp-server` run by the test, spoken to in raw
// JSON-RPC over its stdio, as an MCP client would.
type rawBridge struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]any
}

func startRawBridge(t *testing.T, env *testenv.Env, client string) *rawBridge {
	t.Helper()
	c := exec.Command(phantomBin, "+mcp-server", "--client="+client)
	c.Env, c.Dir = env.Vars, env.Home
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	b := &rawBridge{t: t, in: in, lines: make(chan map[string]any, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"unparsed": sc.Text()}
			}
			b.lines <- m
		}
		close(b.lines)
	}()
	t.Cleanup(func() { in.Close(); c.Process.Kill(); c.Wait() })
	b.send(initLine)
	if r := b.next(); r["id"] != 1.0 || r["result"] == nil {
		t.Fatalf("initialize through the bridge = %v", r)
	}
	b.send(initializedLine)
	return b
}

func (b *rawBridge) send(line string) {
	b.t.Helper()
	if _, err := io.WriteString(b.in, line+"\n"); err != nil {
		b.t.Fatalf("write to the bridge: %v", err)
	}
}

// call sends tools/call of tool with args under id.
func (b *rawBridge) call(id int, tool string, args map[string]any) {
	b.t.Helper()
	p, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	b.send(string(p))
}

func (b *rawBridge) cancel(id int) {
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"the user stopped it"}}`, id))
}

// next is the next line the bridge wrote.
func (b *rawBridge) next() map[string]any {
	b.t.Helper()
	select {
	case m, ok := <-b.lines:
		if !ok {
			b.t.Fatal("the bridge closed its stdout")
		}
		return m
	case <-time.After(testenv.WaitTimeout):
		b.t.Fatalf("no line from the bridge within %s", testenv.WaitTimeout)
	}
	return nil
}

// nextAnswer is the next response the bridge wrote (notifications, such
// as progress, are skipped).
func (b *rawBridge) nextAnswer() map[string]any {
	b.t.Helper()
	for {
		if m := b.next(); m["id"] != nil || m["method"] == nil {
			return m
		}
	}
}

// answerSheets answers, as the human, the sheet the client's call raised
// with "always" for every tab.
func answerSheet(t *testing.T, env *testenv.Env, client string) {
	t.Helper()
	var id string
	eventually(t, "a sheet for "+client, func() (bool, string) {
		for _, s := range sheetsJSON(t, env) {
			if s["client"] == client {
				id, _ = s["id"].(string)
			}
		}
		return id != "", mustPhantom(t, env, "sheet", "list")
	})
	mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all")
}

// TestBridgeCancelEndToEnd: through the real bridge and gateway, a
// tools/call the client cancelled gets no response at all — not when its
// handler returns after the cancellation, nor when the gateway is killed
// and restarted while it waits — while a call still awaited gets the
// bridge's error and later calls their answers, in order.
func TestBridgeCancelEndToEnd(t *testing.T) {
	env, tab := shellUp(t, "/usr/bin/bash")
	b := startRawBridge(t, env, "rawcancel")

	// A run_command that waits for its command: cancelled while it runs.
	b.call(2, "run_command", map[string]any{"terminal_id": tab, "command": "sleep 3", "wait_seconds": 60})
	answerSheet(t, env, "rawcancel")
	eventually(t, "sleep running in tab "+tab, func() (bool, string) {
		ts := tabs(t, env)
		return tabByID(ts, tab)["idle"] == false, fmt.Sprint(ts)
	})
	b.cancel(2)
	b.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := b.nextAnswer(); r["id"] != 3.0 {
		t.Fatalf("first answer after cancelling call 2 = %v; want the answer to ping 3", r)
	}
	// The command ends; had the gateway answered call 2 then, that
	// answer would come before the next one.
	runTabIdle(t, env, tab)
	time.Sleep(time.Second)
	b.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if r := b.nextAnswer(); r["id"] != 4.0 {
		t.Fatalf("first answer after call 2's command ended = %v; want the answer to ping 4 (none to cancelled call 2)", r)
	}

	// Two waits in flight, one cancelled, when the gateway is killed.
	wait := map[string]any{"terminal_id": tab, "wait_for": "^never printed$", "wait_seconds": 120}
	b.call(5, "read_output", wait)
	b.call(6, "read_output", wait)
	b.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if r := b.nextAnswer(); r["id"] != 7.0 {
		t.Fatalf("answer to ping 7 = %v", r)
	}
	b.cancel(5)
	// The ping's answer comes after the bridge took the cancellation.
	b.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if r := b.nextAnswer(); r["id"] != 9.0 {
		t.Fatalf("answer to ping 9 = %v", r)
	}
	gw := 0
	for _, d := range getStatus(t, env).Daemons {
		if d.Name == "gateway" {
			gw = d.PID
		}
	}
	if err := syscall.Kill(gw, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 the gateway (pid %d): %v", gw, err)
	}
	r := b.nextAnswer()
	e, _ := r["error"].(map[string]any)
	if r["id"] != 6.0 || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "went away") {
		t.Fatalf("first answer after the gateway was killed = %v; want the bridge's error for call 6 (none for cancelled call 5)", r)
	}
	eventually(t, "the killed gateway to be gone", func() (bool, string) {
		return !running(gw), fmt.Sprintf("pid %d still runs", gw)
	})
	mustPhantom(t, env, "up")
	b.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if r := b.nextAnswer(); r["id"] != 8.0 || r["result"] == nil {
		t.Fatalf("answer after the gateway came back = %v; want the answer to ping 8 (none to cancelled call 5)", r)
	}
}
