package authz

import (
	"fmt"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/sheets"
)

// TestCoalescer: lines a caller can repeat at will are written once a
// minute per key, the next one counting those left out; lines that act
// or that the human causes are written every time.
func TestCoalescer(t *testing.T) {
	read := audit.Entry{Event: audit.Allowed, Client: "claude", Connection: "c1", Tool: "read_output", Capability: "read", Target: "t2", Grant: "g1"}
	run := audit.Entry{Event: audit.Allowed, Client: "claude", Connection: "c1", Tool: "run_command", Capability: "run", Target: "t2", Grant: "g2", Command: "ls"}
	away := audit.Entry{Event: audit.TurnedAway, Client: "claude", Connection: "c1", Tool: "read_output", Capability: "read", Target: "t3"}
	other := read
	other.Target = "t3"
	type step struct {
		after    time.Duration // clock advance before the entry
		e        audit.Entry
		written  bool
		repeated int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"reads in a loop", []step{{0, read, true, 0}, {time.Second, read, false, 0}, {time.Second, read, false, 0},
			{time.Minute, read, true, 2}, {time.Second, read, false, 0}}},
		{"another target is another key", []step{{0, read, true, 0}, {0, other, true, 0}, {0, read, false, 0}}},
		{"commands every time", []step{{0, run, true, 0}, {0, run, true, 0}, {time.Millisecond, run, true, 0}}},
		{"turn-aways in a loop", []step{{0, away, true, 0}, {time.Second, away, false, 0}, {2 * time.Minute, away, true, 1}}},
		{"the human's acts every time", []step{{0, audit.Entry{Event: audit.SheetAnswered}, true, 0},
			{0, audit.Entry{Event: audit.SheetAnswered}, true, 0}, {0, audit.Entry{Event: audit.Denied}, true, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := sheets.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
			c := newCoalescer(clock.Now)
			for i, st := range tt.steps {
				clock.Advance(st.after)
				e := st.e
				if got := c.admit(&e); got != st.written || e.Repeated != st.repeated {
					t.Errorf("step %d: written %v, repeated %d; want %v, %d", i, got, e.Repeated, st.written, st.repeated)
				}
			}
		})
	}
}

// TestCoalescerBounded: a flood of distinct keys keeps memory bounded.
func TestCoalescerBounded(t *testing.T) {
	clock := sheets.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	c := newCoalescer(clock.Now)
	for i := range 3 * coalesceKeys {
		clock.Advance(time.Millisecond)
		e := audit.Entry{Event: audit.Refused, Connection: fmt.Sprint(i)}
		if !c.admit(&e) {
			t.Fatalf("a new key was left out at %d", i)
		}
	}
	if n := len(c.last); n > coalesceKeys {
		t.Errorf("%d keys held, want at most %d", n, coalesceKeys)
	}
}

// TestCoalescerHandsOverWhatNoLineCounts: lines left out whose key no
// later line came for are handed over once their window is over (or all
// of them when authz stops), and so are those of forgotten keys; a
// withdrawal without a sheet coalesces like a turn-away.
func TestCoalescerHandsOverWhatNoLineCounts(t *testing.T) {
	clock := sheets.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	c := newCoalescer(clock.Now)
	lost := map[countKey]int{}
	c.lost = func(k countKey, n int) { lost[k] += n }
	w := audit.Entry{Event: audit.Withdrawn, Client: "flood", Connection: "c1", Tab: "t1", Tool: "run_command"}
	for i := range 5 {
		e := w
		if got := c.admit(&e); got != (i == 0) {
			t.Fatalf("withdrawal %d admitted %v", i, got)
		}
	}
	c.drain(false)
	if len(lost) != 0 {
		t.Fatalf("handed over %v inside the window", lost)
	}
	clock.Advance(coalesceWindow)
	c.drain(false)
	key := countKey{client: "flood", tab: "t1", event: audit.Withdrawn, tool: "run_command"}
	if lost[key] != 4 || len(c.last) != 0 {
		t.Fatalf("after the window: handed over %v, %d keys kept; want 4 for %v and none kept", lost, len(c.last), key)
	}
	// A later line counts nothing twice.
	e := w
	if !c.admit(&e) || e.Repeated != 0 {
		t.Errorf("next line: repeated %d, want 0", e.Repeated)
	}
	// Stopping hands over what waits inside the window too.
	e = w
	c.admit(&e)
	c.drain(true)
	if lost[key] != 5 {
		t.Errorf("after stopping: handed over %d, want 5", lost[key])
	}
	// Forgotten keys hand over theirs.
	clear(lost)
	for i := range 2 * coalesceKeys {
		clock.Advance(time.Millisecond)
		for range 2 {
			e := audit.Entry{Event: audit.Refused, Connection: fmt.Sprint(i)}
			c.admit(&e)
		}
	}
	n := 0
	for _, v := range lost {
		n += v
	}
	c.drain(true)
	m := 0
	for _, v := range lost {
		m += v
	}
	if n == 0 || m != 2*coalesceKeys {
		t.Errorf("handed over %d while forgetting, %d in all; want some, and %d", n, m, 2*coalesceKeys)
	}
}
