package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestMCPSpeed measures tools/call list_terminals through the gateway
// socket against the same call made directly over gRPC to terminald, and
// 64 concurrent agent connections. It reports figures and asserts only
// that nothing failed. Set PHANTOM_BENCH=1 to run it.
func TestMCPSpeed(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	const n = 10000
	env, _ := up(t)
	c, br, line := dialMCP(t, env, nil)
	if !strings.Contains(line, `"hello":"ok"`) {
		t.Fatalf("hello: %s", line)
	}
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_terminals"}}` + "\n")
	c.SetReadDeadline(time.Time{})
	cc, err := daemon.Dial(env.Layout.DaemonAddr("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	tc := terminalv1.NewTerminalServiceClient(cc)
	// The two paths alternate call by call, so both see the same machine.
	viaGateway, direct := make([]time.Duration, n), make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		c.Write(req)
		l, err := br.ReadString('\n')
		viaGateway[i] = time.Since(start)
		if err != nil || !strings.Contains(l, "structuredContent") {
			t.Fatalf("call %d: %v %s", i, err, l)
		}
		start = time.Now()
		if _, err := tc.ListTerminals(context.Background(), &terminalv1.ListTerminalsRequest{}); err != nil {
			t.Fatal(err)
		}
		direct[i] = time.Since(start)
	}
	t.Logf("list_terminals x%d  gateway: %s   direct gRPC: %s", n, stats(viaGateway), stats(direct))

	// 64 agents at once, 200 calls each.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	start := time.Now()
	for a := 0; a < 64; a++ {
		c, br, line := dialMCP(t, env, nil)
		if !strings.Contains(line, `"hello":"ok"`) {
			t.Fatalf("agent %d hello: %s", a, line)
		}
		c.SetReadDeadline(time.Time{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				c.Write(req)
				l, err := br.ReadString('\n')
				var r struct {
					Result struct {
						IsError bool `json:"isError"`
					} `json:"result"`
					Error any `json:"error"`
				}
				if err != nil || json.Unmarshal([]byte(l), &r) != nil || r.Error != nil || r.Result.IsError {
					errs <- fmt.Errorf("agent %d call %d: %v %.200s", a, i, err, l)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("64 agents x 200 calls: %s (%.0f calls/s)", time.Since(start), 64*200/time.Since(start).Seconds())
}

func stats(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("median %s p99 %s", s[len(s)/2], s[len(s)*99/100])
}
