package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// TestConnectionsLeaveNothingBehind runs the real gateway (with no daemons
// behind it) and opens many connections that handshake, call, and go away
// — some in the middle of a call — then checks the goroutine count comes
// back and the gateway stops cleanly.
func TestConnectionsLeaveNothingBehind(t *testing.T) {
	env := testenv.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, env.Layout.DaemonAddr("gateway"), env.Layout, slog.New(slog.DiscardHandler))
	}()
	testenv.Eventually(t, "the MCP socket", func() (bool, string) {
		_, err := os.Stat(env.Layout.MCPSocket)
		return err == nil, fmt.Sprint(err)
	})

	session := func(finish bool) {
		c, err := net.Dial("unix", env.Layout.MCPSocket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		hello, _ := json.Marshal(map[string]any{"hello": "phantom", "version": 1, "pid": os.Getpid(), "client": "leak", "tab_state": ""})
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "%s\n", hello)
		if line, _ := br.ReadString('\n'); !strings.Contains(line, `"hello":"ok"`) {
			t.Fatalf("hello answered %q", line)
		}
		fmt.Fprintf(c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`+"\n")
		fmt.Fprintf(c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_output","arguments":{"terminal_id":"t1"}}}`+"\n")
		if !finish {
			return // gone mid-call
		}
		for range 2 {
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
	}
	session(true) // warm up: daemon connections and their health watchers start once
	time.Sleep(100 * time.Millisecond)
	before := runtime.NumGoroutine()
	for i := range 40 {
		session(i%2 == 0)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d, before %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
