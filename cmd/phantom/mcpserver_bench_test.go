package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestMCPSpeed measures tools/call list_terminals through the gateway
// socket against the same call made directly over gRPC to terminald, and
// concurrent agent connections. With PHANTOM_OLD_BIN naming a phantom
// binary built from an earlier commit, that binary's gateway is run too,
// against the same daemons, and the three paths are measured side by side.
// It reports figures and asserts only that nothing failed. Set
// PHANTOM_BENCH=1 to run it.
func TestMCPSpeed(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	const n = 10000
	env, _ := up(t)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_terminals"}}` + "\n")
	type path struct {
		name  string
		call  func() error
		times []time.Duration
	}
	viaSocket := func(sock string) func() error {
		c, br := dialInitialized(t, sock)
		return func() error {
			c.Write(req)
			l, err := br.ReadString('\n')
			if err != nil || !strings.Contains(l, "structuredContent") {
				return fmt.Errorf("%v %.300s", err, l)
			}
			return nil
		}
	}
	cc, err := daemon.Dial(env.Layout.DaemonAddr("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	tc := terminalv1.NewTerminalServiceClient(cc)
	paths := []*path{
		{name: "gateway (go-sdk)", call: viaSocket(env.Layout.MCPSocket)},
		{name: "direct gRPC", call: func() error {
			_, err := tc.ListTerminals(context.Background(), &terminalv1.ListTerminalsRequest{})
			return err
		}},
	}
	if old := os.Getenv("PHANTOM_OLD_BIN"); old != "" {
		paths = append(paths, &path{name: "gateway (old, " + filepath.Base(old) + ")", call: viaSocket(startOldGateway(t, env, old))})
	}
	// The paths alternate call by call, so all see the same machine.
	for _, p := range paths {
		p.times = make([]time.Duration, n)
	}
	for i := range n {
		for _, p := range paths {
			start := time.Now()
			if err := p.call(); err != nil {
				t.Fatalf("%s call %d: %v", p.name, i, err)
			}
			p.times[i] = time.Since(start)
		}
	}
	t.Logf("list_terminals x%d, alternating:", n)
	base := median(paths[1].times)
	for _, p := range paths {
		t.Logf("  %-40s %s  (median %.2fx direct gRPC)", p.name, stats(p.times), float64(median(p.times))/float64(base))
	}
	if len(paths) == 3 {
		t.Logf("  go-sdk gateway / old gateway: median %.2fx", float64(median(paths[0].times))/float64(median(paths[2].times)))
	}

	// Many agents at once, 200 calls each: as many connections as the gateway
	// takes from one process (it is one caller), less the one open above.
	const agents = 31
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	start := time.Now()
	for a := range agents {
		c, br := dialInitialized(t, env.Layout.MCPSocket)
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
	t.Logf("%d agents x 200 calls: %s (%.0f calls/s)", agents, time.Since(start), agents*200/time.Since(start).Seconds())
}

// dialInitialized connects to an MCP socket, passes the hello and opens
// an MCP session.
func dialInitialized(t *testing.T, sock string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	hello, _ := json.Marshal(map[string]any{"hello": "phantom", "version": 1, "pid": os.Getpid(), "client": "bench", "tab_state": ""})
	br := bufio.NewReaderSize(c, 1<<20)
	for _, line := range [][]byte{hello,
		[]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)} {
		c.Write(append(line, '\n'))
		if l, err := br.ReadString('\n'); err != nil || strings.Contains(l, `"error":`) {
			t.Fatalf("%s → %v %s", line, err, l)
		}
	}
	c.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	return c, br
}

// startOldGateway runs bin's gateway against env's daemons, on a socket of
// its own (another cache directory), until the test ends; it returns the
// socket's path.
func startOldGateway(t *testing.T, env *testenv.Env, bin string) string {
	t.Helper()
	cache, err := os.MkdirTemp("", "oldgw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(cache) })
	cmd := exec.Command(bin, "daemon", "gateway", "--listen", "unix://"+filepath.Join(cache, "health.sock"))
	cmd.Env = append(slices.Clone(env.Vars), "XDG_CACHE_HOME="+cache)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	sock := filepath.Join(cache, "phantom", filepath.Base(env.Layout.MCPSocket))
	eventually(t, "the old gateway's socket", func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, logs.String()
	})
	return sock
}

func stats(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("median %s p99 %s", s[len(s)/2], s[len(s)*99/100])
}
