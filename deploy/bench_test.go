package deploy

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// benchStats is mcpbench's output.
type benchStats struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	Mean float64 `json:"mean_us"`
}

// benchCalls is how many list_terminals calls each side times.
const benchCalls = 1000

// benchRounds is how many times each side is measured.
const benchRounds = 3

// bench (PHANTOM_BENCH=1) measures, in one run and side by side: the
// stack's cold start (given: up -d from nothing to all healthy) and warm
// start (stop, then start, to all healthy) against `phantom up` of a local
// instance, and list_terminals through the gateway from inside the stack
// (gateway to terminald over TCP with mutual TLS) against the local
// Unix-socket setup. Both clients are mcpbench on the official Go SDK
// client, through `phantom +mcp-server`, outside any tab.
func (s *stack) bench(t *testing.T, cold time.Duration) {
	env := testenv.New(t)
	phantom := filepath.Join(s.bins, "phantom")
	run := func(args ...string) string {
		cmd := exec.Command(phantom, args...)
		cmd.Env = env.Vars
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("local phantom %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	t1 := time.Now()
	run("up")
	localUp := time.Since(t1)
	defer run("down")

	var warm []time.Duration
	for range benchRounds {
		s.must("stop", "-t", "5")
		t0 := time.Now()
		s.must("start")
		s.waitHealthy()
		warm = append(warm, time.Since(t0))
	}

	// Rounds alternate between the two setups, so that whatever else the
	// machine does falls on both alike; each figure is the rounds' median.
	parse := func(where string, b []byte) benchStats {
		var st benchStats
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("mcpbench %s: %v\n%s", where, err, b)
		}
		return st
	}
	var inStack, local []benchStats
	for range benchRounds {
		inStack = append(inStack, parse("in the stack",
			[]byte(s.mustExec("gateway", "", "mcpbench", "phantom", "list_terminals", itoa(benchCalls)))))
		cmd := exec.Command(filepath.Join(s.bins, "mcpbench"), phantom, "list_terminals", itoa(benchCalls))
		cmd.Env = env.Vars
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("mcpbench locally: %v\n%s", err, b)
		}
		local = append(local, parse("locally", b))
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	us := func(v float64) string { return ftoa(v) + " µs" }
	med := func(sts []benchStats, f func(benchStats) float64) string {
		v := make([]float64, len(sts))
		for i, st := range sts {
			v[i] = f(st)
		}
		slices.Sort(v)
		return us(v[len(v)/2])
	}
	slices.Sort(warm)
	row := "\n%-30s %-22s %s"
	t.Logf("list_terminals: %d rounds of %d calls each side, median shown; rounds: stack %+v, local %+v"+
		row+row+row+row+row+row,
		benchRounds, benchCalls, inStack, local,
		"", "compose stack (TLS)", "local (Unix sockets)",
		"start, cold", ms(cold)+" (up -d)", ms(localUp)+" (phantom up)",
		"start, warm (stop; start)", ms(warm[len(warm)/2]), "-",
		"list_terminals p50", med(inStack, func(b benchStats) float64 { return b.P50 }), med(local, func(b benchStats) float64 { return b.P50 }),
		"list_terminals p90", med(inStack, func(b benchStats) float64 { return b.P90 }), med(local, func(b benchStats) float64 { return b.P90 }),
		"list_terminals p99", med(inStack, func(b benchStats) float64 { return b.P99 }), med(local, func(b benchStats) float64 { return b.P99 }))
}

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
