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
