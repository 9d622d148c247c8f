package workspace

import (
	"testing"
	"time"
)

// TestBellGate checks the per-tab rate limit: the first bell passes, the
// ones within bellGap after it do not, the next after the gap does.
func TestBellGate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name string
		at   []time.Duration // offsets from t0
		want []bool
	}{
		{"one", []time.Duration{0}, []bool{true}},
		{"flood within the gap", []time.Duration{0, time.Millisecond, 50 * time.Millisecond, 99 * time.Millisecond}, []bool{true, false, false, false}},
		{"after the gap", []time.Duration{0, bellGap, bellGap + time.Millisecond, 2 * bellGap}, []bool{true, true, false, true}},
		{"a clock that stepped back", []time.Duration{time.Second, 0}, []bool{true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g bellGate
			for i, d := range tt.at {
				if got := g.pass(t0.Add(d), bellGap); got != tt.want[i] {
					t.Errorf("bell %d at +%v: pass = %v, want %v", i, d, got, tt.want[i])
				}
			}
		})
	}
}

// TestWatchBells checks that a program's BEL reaches a bell subscriber
// with its tab's id, and that a flood of them is rate-limited.
func TestWatchBells(t *testing.T) {
	w := newWorkspace(t)
	bells, stop := w.WatchBells()
	defer stop()
	tm, err := w.Create(CreateSpec{Directory: "/", Command: []string{"sh", "-c", `printf '\a'; i=0; while [ $i -lt 2000 ]; do printf '\a'; i=$((i+1)); done; sleep 1000`}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-bells:
		if id != tm.ID {
			t.Fatalf("bell from %q, want %q", id, tm.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no bell within 10s")
	}
	// 2001 BELs written in well under a second are a few bells, not
	// thousands (nor more than the buffer holds).
	time.Sleep(300 * time.Millisecond)
	if n := len(bells); n >= bellBuffer {
		t.Errorf("%d bells queued after a flood, want it rate-limited", n)
	}
}
