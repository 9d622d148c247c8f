package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestListTerminalsCost measures list_terminals through the MCP socket on
// two instances running side by side, one with 1 tab and one with 200
// (PHANTOM_BENCH_TABS), each tab a real shell at its prompt. Calls
// alternate between the instances, so both see the same machine. It
// reports per instance the p50/p99 of a call, terminald's and the gateway's
// CPU per call (their CPU during the calls less what they burn idle over
// the same time) and terminald's OS threads; it asserts only that nothing
// failed. Set PHANTOM_BENCH=1 to run it.
func TestListTerminalsCost(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	many := 200
	if v := os.Getenv("PHANTOM_BENCH_TABS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PHANTOM_BENCH_TABS=%q: want a positive number", v)
		}
		many = n
	}
	const calls = 2000
	insts := []*costInstance{newCostInstance(t, 1), newCostInstance(t, many)}

	// What each daemon burns with no calls: the poll loop, shells' prompts.
	const idleFor = 5 * time.Second
	for _, in := range insts {
		in.mark()
	}
	time.Sleep(idleFor)
	for _, in := range insts {
		in.idleTD, in.idleGW = in.since(idleFor)
	}

	for _, in := range insts {
		in.mark()
		in.start = time.Now()
	}
	for i := range calls {
		for _, in := range insts {
			start := time.Now()
			if err := in.call(); err != nil {
				t.Fatalf("%d tabs, call %d: %v", in.tabs, i, err)
			}
			in.times = append(in.times, time.Since(start))
		}
	}
	elapsed := time.Since(insts[0].start)
	t.Logf("list_terminals through the MCP socket, %d calls per instance, alternating:", calls)
	t.Logf("  %5s  %-32s  %-22s  %-22s  %s", "tabs", "latency", "terminald CPU/call", "gateway CPU/call", "terminald threads")
	var perCall [2]time.Duration
	for i, in := range insts {
		td, gw := in.since(elapsed)
		tdCall := (td - time.Duration(float64(in.idleTD)*float64(elapsed)/float64(idleFor))) / calls
		gwCall := (gw - time.Duration(float64(in.idleGW)*float64(elapsed)/float64(idleFor))) / calls
		perCall[i] = tdCall + gwCall
		t.Logf("  %5d  %-32s  %-22s  %-22s  %d", in.tabs, stats(in.times), tdCall, gwCall, threads(t, in.terminald))
		t.Logf("         idle CPU over %s: terminald %s, gateway %s", idleFor, in.idleTD, in.idleGW)
	}
	t.Logf("  %d tabs / 1 tab: latency p50 %.2fx, daemons' CPU per call %.2fx", many,
		float64(median(insts[1].times))/float64(median(insts[0].times)), float64(perCall[1])/float64(max(perCall[0], 1)))
}

// costInstance is one Phantom instance of TestListTerminalsCost.
type costInstance struct {
	tabs               int
	terminald, gateway int
	conn               net.Conn
	br                 *bufio.Reader
	times              []time.Duration
	start              time.Time
	// cpu marks and idle figures (CPU time, from /proc/<pid>/stat).
	markTD, markGW time.Duration
	idleTD, idleGW time.Duration
}

// newCostInstance starts an instance with tabs shells and waits until each
// sits at its prompt.
func newCostInstance(t *testing.T, tabs int) *costInstance {
	t.Helper()
	env, _ := up(t)
	tc, _ := humanClients(t, env)
	// `up` may open a first tab itself.
	have, err := tc.ListTerminals(tctx(t), &terminalv1.ListTerminalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for range tabs - len(have.GetTerminals()) {
		if _, err := tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.EventuallyWithin(t, 2*time.Minute, fmt.Sprintf("%d idle tabs", tabs), func() (bool, string) {
		r, err := tc.ListTerminals(tctx(t), &terminalv1.ListTerminalsRequest{})
		idle := 0
		for _, tm := range r.GetTerminals() {
			if tm.GetIdle() {
				idle++
			}
		}
		return err == nil && idle == tabs, fmt.Sprintf("%v: %d of %d idle", err, idle, tabs)
	})
	in := &costInstance{tabs: tabs}
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

var listReq = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_terminals"}}` + "\n")

// call makes one list_terminals call and checks it listed every tab.
func (in *costInstance) call() error {
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

// mark records the daemons' CPU time so far.
func (in *costInstance) mark() { in.markTD, in.markGW = cpuTime(in.terminald), cpuTime(in.gateway) }

// since returns the daemons' CPU time since mark.
func (in *costInstance) since(time.Duration) (td, gw time.Duration) {
	return cpuTime(in.terminald) - in.markTD, cpuTime(in.gateway) - in.markGW
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

// threads is how many OS threads pid has.
func threads(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
