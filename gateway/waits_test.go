package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/toolreg"
)

// TestDaemonWaitProgress: while a daemon serves a call of a tool that
// states a wait (run_command), a client that sent a progressToken gets
// notifications/progress saying what the call waits for, with rising
// values; none follows the result, and a call without a token gets none.
func TestDaemonWaitProgress(t *testing.T) {
	every := 20 * time.Millisecond
	g := startFakeGateway(t, every)
	c := dialRaw(t, g.sock)
	c.initialize("2025-11-25")
	type line struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
		Params struct {
			ProgressToken any     `json:"progressToken"`
			Progress      float64 `json:"progress"`
			Message       string  `json:"message"`
		} `json:"params"`
	}
	read := func() line {
		t.Helper()
		var l line
		if raw := c.next(); json.Unmarshal([]byte(raw), &l) != nil {
			t.Fatalf("not JSON: %q", raw)
		}
		return l
	}

	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command","_meta":{"progressToken":"p1"},` +
		`"arguments":{"terminal_id":"t1","command":"sleep 9","wait_seconds":60}}}`)
	<-g.terminald.running
	last := 0.0
	for n := 0; n < 3; n++ {
		l := read()
		if l.Method != "notifications/progress" {
			t.Fatalf("got %+v while the daemon waits, want progress", l)
		}
		if l.Params.ProgressToken != "p1" || l.Params.Progress <= last ||
			!strings.Contains(l.Params.Message, "run_command is waiting for `sleep 9` to finish in tab t1 (") ||
			!strings.Contains(l.Params.Message, "of at most 60 s)") {
			t.Errorf("progress %d = %+v", n, l.Params)
		}
		last = l.Params.Progress
	}
	g.terminald.finish <- struct{}{}
	for l := read(); l.ID == nil; l = read() {
		if l.Method != "notifications/progress" {
			t.Fatalf("got %+v before the result", l)
		}
	}
	// Nothing after the result: a ping's answer is the next line.
	time.Sleep(5 * every)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if l := read(); l.ID != 2.0 {
		t.Errorf("after the result got %+v, want the ping's answer", l)
	}

	// No token, no progress.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_command",` +
		`"arguments":{"terminal_id":"t1","command":"sleep 9","wait_seconds":60}}}`)
	<-g.terminald.running
	time.Sleep(5 * every)
	g.terminald.finish <- struct{}{}
	if l := read(); l.ID != 3.0 {
		t.Errorf("a call without a progressToken got %+v before its result", l)
	}
}

// TestWaitWords: the progress message and the description's sentence
// state what a wait waits for and its bound.
func TestWaitWords(t *testing.T) {
	if got, want := daemonWaitMessage("run_command", "`make test` to finish in tab t3", 20*time.Second+300*time.Millisecond, 120*time.Second),
		"run_command is waiting for `make test` to finish in tab t3 (20 s of at most 120 s)"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if got := daemonWaitMessage("x", "y", 3*time.Second, 0); got != "x is waiting for y (3 s so far)" {
		t.Errorf("unbounded message = %q", got)
	}
	reg, err := toolreg.Default()
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{
		"run_command":             "May wait for `<command>` to finish in tab <terminal_id> (at most `wait_seconds`),",
		"read_output":             "(at most `wait_seconds`, 30 s unless set),",
		"restart_language_server": "May wait for language server <server_id> to start again (at most 70 s),",
		"list_terminals":          "",
	} {
		tl, _ := reg.ByName(tool)
		got := waitSentence(tl)
		if want == "" && got != "" || !strings.Contains(got, want) || want != "" && !strings.Contains(got, "notifications/progress every 5 s") {
			t.Errorf("%s: sentence %q, want it to say %q", tool, got, want)
		}
	}
}
