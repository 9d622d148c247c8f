package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestListTerminalsCost measures list_terminals at 1, 10 and 100 tabs
// (PHANTOM_BENCH_TABS, e.g. "1,10,100"), each tab a real shell at its
// prompt, two ways side by side: through the gateway's MCP socket, as an
// agent calls it, and directly over gRPC to terminald. One instance grows
// from size to size; at each, calls alternate between the two paths so
// both see the same machine. It reports the p50/p99 of a call on each
// path, terminald's CPU per ListTerminals it serves (one per call on
// either path) and the gateway's per call through it: their CPU during
// the calls less what they burn idle over the same time. Nothing is
// asserted on timings; the target (gateway p99 < 1 ms at 10 tabs) is
// printed beside the figure. Set PHANTOM_BENCH=1 to run it.
func TestListTerminalsCost(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	sizes := []int{1, 10, 100}
	if v := os.Getenv("PHANTOM_BENCH_TABS"); v != "" {
		sizes = nil
		for f := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("PHANTOM_BENCH_TABS=%q: want positive numbers of tabs separated by commas", v)
			}
			sizes = append(sizes, n)
		}
		slices.Sort(sizes)
	}
	calls := 1000
	if os.Getenv("PHANTOM_BENCH_QUICK") == "1" {
		calls = 300
	}
	in := newCostInstance(t)
	t.Logf("list_terminals, %d calls per path at each size, alternating gateway (MCP socket) and direct gRPC; load %s", calls, loadAvg1())
	t.Logf("  %5s | %-9s %-9s | %-9s %-9s | %-8s | %-12s %-12s | %s", "tabs", "gw p50", "gw p99", "gRPC p50", "gRPC p99", "gw/gRPC", "terminald", "gateway", "target: gw p99 < 1 ms at 10 tabs")
	t.Logf("  %5s | %-9s %-9s | %-9s %-9s | %-8s | %-12s %-12s |", "", "", "", "", "", "p50", "CPU/call", "CPU/gw call")
	for _, n := range sizes {
		in.grow(t, n)
		gw, direct, tdCall, gwCall := in.measure(t, calls)
		verdict := ""
		if n == 10 {
			verdict = "MISSED"
			if quantileOf(gw, 0.99) < time.Millisecond {
				verdict = "ok"
			}
		}
		t.Logf("  %5d | %-9s %-9s | %-9s %-9s | %7.2fx | %-12s %-12s | %s", n,
			msOf(quantileOf(gw, 0.5)), msOf(quantileOf(gw, 0.99)), msOf(quantileOf(direct, 0.5)), msOf(quantileOf(direct, 0.99)),
			float64(quantileOf(gw, 0.5))/float64(quantileOf(direct, 0.5)), msOf(tdCall), msOf(gwCall), verdict)
	}
}

// costInstance is the Phantom instance of TestListTerminalsCost, with a
// connection on each path.
type costInstance struct {
	env                *testenv.Env
	tc                 terminalv1.TerminalServiceClient
	terminald, gateway int
	tabs               int
	conn               net.Conn
	br                 *bufio.Reader
}

// newCostInstance starts an instance and connects to its gateway's MCP
// socket and to terminald.
func newCostInstance(t *testing.T) *costInstance {
	t.Helper()
	env, _ := up(t)
	cc, err := daemon.Dial(env.Layout.DaemonAddr("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	in := &costInstance{env: env, tc: terminalv1.NewTerminalServiceClient(cc)}
	for _, d := range getStatus(t, env).Daemons {
		switch d.Name {
		case "terminald":
			in.terminald = d.PID
		case "gateway":
			in.gateway = d.PID
		}
	}
	if in.terminald == 0 || in.gateway == 0 {
		t.Fatalf("no terminald or gateway pid in phantom status")
	}
	in.conn, in.br = dialInitialized(t, env.Layout.MCPSocket)
	return in
}

// grow opens shells until the instance has tabs of them (`up` may have
// opened a first one) and waits until each sits at its prompt.
func (in *costInstance) grow(t *testing.T, tabs int) {
	t.Helper()
	have, err := in.tc.ListTerminals(tctx(t), &terminalv1.ListTerminalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for range tabs - len(have.GetTerminals()) {
		if _, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{}); err != nil {
			t.Fatalf("open tab %d of %d: %v", len(have.GetTerminals())+1, tabs, err)
		}
	}
	testenv.EventuallyWithin(t, 2*time.Minute, fmt.Sprintf("%d idle tabs", tabs), func() (bool, string) {
		r, err := in.tc.ListTerminals(tctx(t), &terminalv1.ListTerminalsRequest{})
		idle := 0
		for _, tm := range r.GetTerminals() {
			if tm.GetIdle() {
				idle++
			}
		}
		return err == nil && idle == tabs, fmt.Sprintf("%v: %d of %d idle", err, idle, tabs)
	})
	in.tabs = tabs
}

// measure makes calls list_terminals calls on each path, alternating, and
// returns each path's call times, terminald's CPU per ListTerminals (it
// serves 2*calls) and the gateway's per call through it, beyond what each
// burns idle (measured for two seconds before).
func (in *costInstance) measure(t *testing.T, calls int) (gw, direct []time.Duration, tdCall, gwCall time.Duration) {
	t.Helper()
	const idleFor = 2 * time.Second
	td0, gw0 := cpuTime(in.terminald), cpuTime(in.gateway)
	time.Sleep(idleFor)
	idleTD, idleGW := cpuTime(in.terminald)-td0, cpuTime(in.gateway)-gw0

	td0, gw0 = cpuTime(in.terminald), cpuTime(in.gateway)
	start := time.Now()
	for i := range calls {
		t0 := time.Now()
		if err := in.viaGateway(); err != nil {
			t.Fatalf("%d tabs, gateway call %d: %v", in.tabs, i, err)
		}
		t1 := time.Now()
		if err := in.direct(); err != nil {
			t.Fatalf("%d tabs, direct call %d: %v", in.tabs, i, err)
		}
		gw, direct = append(gw, t1.Sub(t0)), append(direct, time.Since(t1))
	}
	elapsed := time.Since(start)
	scale := func(idle time.Duration) time.Duration {
		return time.Duration(float64(idle) * float64(elapsed) / float64(idleFor))
	}
	tdCall = (cpuTime(in.terminald) - td0 - scale(idleTD)) / time.Duration(2*calls)
	gwCall = (cpuTime(in.gateway) - gw0 - scale(idleGW)) / time.Duration(calls)
	return gw, direct, tdCall, gwCall
}

var listReq = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_terminals"}}` + "\n")

// viaGateway makes one list_terminals call through the MCP socket and
// checks it listed every tab.
func (in *costInstance) viaGateway() error {
	in.conn.Write(listReq)
	l, err := in.br.ReadString('\n')
	if err != nil || !strings.Contains(l, "structuredContent") {
		return fmt.Errorf("%v %.300s", err, l)
	}
	if n := strings.Count(l, `\"foreground_process\"`); n != in.tabs {
		return fmt.Errorf("listed %d tabs, want %d: %.300s", n, in.tabs, l)
	}
	return nil
}

// direct makes the same call over gRPC to terminald.
func (in *costInstance) direct() error {
	r, err := in.tc.ListTerminals(context.Background(), &terminalv1.ListTerminalsRequest{})
	if err == nil && len(r.GetTerminals()) != in.tabs {
		err = fmt.Errorf("listed %d tabs, want %d", len(r.GetTerminals()), in.tabs)
	}
	return err
}

// cpuTime is a process's user and system CPU time (/proc/<pid>/stat
// fields 14 and 15), or 0.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * (time.Second / 100) // USER_HZ is 100 on Linux
}

// quantileOf is the q-quantile of ds (which it leaves unsorted).
func quantileOf(ds []time.Duration, q float64) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[min(int(float64(len(s))*q), len(s)-1)]
}

// msOf prints d in milliseconds with three decimals.
func msOf(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }

// loadAvg1 is the one-minute load average as /proc/loadavg prints it.
func loadAvg1() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
