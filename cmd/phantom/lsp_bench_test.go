package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
)

// TestLspListServersSpeed measures tools/call list_language_servers
// through the gateway socket against the same call made directly over
// gRPC to lspd, alternating call by call as TestMCPSpeed does, with one
// gopls running so the answer describes a real server (its memory read
// from /proc each time). The target is p99 under 1 ms through
// the gateway. It reports figures and asserts only that nothing failed.
// Set PHANTOM_BENCH=1 to run it.
func TestLspListServersSpeed(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	const n = 10000
	env, mod := lspUp(t)
	cc, err := daemon.Dial(env.Layout.DaemonAddr("lspd"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	lc := lspv1.NewLanguageServerServiceClient(cc)
	ctx := context.Background()
	if _, err := lc.ListDiagnostics(ctx, &lspv1.ListDiagnosticsRequest{Path: filepath.Join(mod, "main.go"), WaitMs: 90000}); err != nil {
		t.Fatal(err)
	}

	c, br := dialInitialized(t, env.Layout.MCPSocket)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_language_servers"}}` + "\n")
	paths := []struct {
		name  string
		call  func() error
		times []time.Duration
	}{
		{name: "gateway (MCP socket)", call: func() error {
			c.Write(req)
			l, err := br.ReadString('\n')
			// The gateway's caller is an agent in no tab: it sees only its
			// own confinement's servers, not the human's gopls.
			if err != nil || !strings.Contains(l, `"result"`) {
				return fmt.Errorf("%v %.300s", err, l)
			}
			return nil
		}},
		{name: "direct gRPC", call: func() error {
			r, err := lc.ListLanguageServers(ctx, &lspv1.ListLanguageServersRequest{})
			if err == nil && len(r.GetServers()) != 1 {
				err = fmt.Errorf("%d servers, want 1", len(r.GetServers()))
			}
			return err
		}},
	}
	for i := range paths {
		paths[i].times = make([]time.Duration, n)
	}
	for i := range n {
		for j := range paths {
			p := &paths[j]
			start := time.Now()
			if err := p.call(); err != nil {
				t.Fatalf("%s call %d: %v", p.name, i, err)
			}
			p.times[i] = time.Since(start)
		}
	}
	t.Logf("list_language_servers x%d, alternating, one gopls listed:", n)
	for _, p := range paths {
		t.Logf("  %-22s %s  (median %.2fx direct gRPC)", p.name, stats(p.times), float64(median(p.times))/float64(median(paths[1].times)))
	}
}
