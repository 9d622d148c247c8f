package terminald

import (
	"cmp"
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// cpuTime is the process's CPU time so far: on a busy machine the wall
// time per operation says more about the neighbours than about the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkListTerminals measures terminald's side of list_terminals —
// the workspace's list, the conversion and the encoding gRPC does — with
// 1 and 200 tabs, for the human and for an agent in the first tab (who
// sees the other tabs without the text their programs control; with
// "opened", every other tab was opened for it, so it sees them in full),
// and reports CPU time per call.
func BenchmarkListTerminals(b *testing.B) {
	for _, n := range []int{1, 200} {
		for _, who := range []string{"human", "agent", "agent-opened"} {
			b.Run(fmt.Sprintf("%d/%s", n, who), func(b *testing.B) { benchList(b, n, who) })
		}
	}
}

// benchList is one of BenchmarkListTerminals' runs: n tabs, listed by
// who.
func benchList(b *testing.B, n int, who string) {
	env := testenv.New(b)
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.New(workspace.Options{Config: cfg, Layout: env.Layout, Env: env.Vars})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Shutdown()
	var first string
	for range n {
		spec := workspace.CreateSpec{Directory: "/", Command: []string{"cat"}}
		if who == "agent-opened" {
			spec.OpenedBy = first
		}
		t, err := ws.Create(spec)
		if err != nil {
			b.Fatal(err)
		}
		first = cmp.Or(first, t.ID)
	}
	time.Sleep(1500 * time.Millisecond) // programs started, a poll done
	s := NewService(ws)
	caller := guard.Caller{} // the human
	if who != "human" {
		caller = guard.Caller{Inside: true, ForAgent: true, TabID: first}
	}
	ctx := guard.NewContext(context.Background(), caller)
	b.ResetTimer()
	start := cpuTime()
	for range b.N {
		resp, err := s.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := proto.Marshal(resp); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
