package authz

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/sheets"
)

// budgetClock starts a fake clock for a budget.
func budgetClock() *sheets.FakeClock {
	return sheets.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
}

// line is a caller's line of at most size bytes, and close to it.
func line(client, tab, event string, size int) audit.Entry {
	e := audit.Entry{Event: event, Client: client, Tab: tab, Tool: "run_command", Subject: strings.Repeat("s", size)}
	for over := audit.LineSize(e) - size; over > 0 && e.Subject != ""; over = audit.LineSize(e) - size {
		e.Subject = e.Subject[:max(0, len(e.Subject)-over)]
	}
	return e
}

// TestBudgetBuckets: a caller's lines take from its own bucket and from
// the one all callers share; what finds either short is counted, not
// written; the buckets refill at their hourly rate.
func TestBudgetBuckets(t *testing.T) {
	b := Budget{PerCaller: 10_000, All: 25_000, SummaryEvery: time.Minute}
	type step struct {
		after time.Duration
		e     audit.Entry
		want  bool
	}
	k := func(tab string) audit.Entry { return line("flood", tab, audit.Withdrawn, 1000) }
	var steps []step
	// Tab a: ten lines fit its bucket, the eleventh does not.
	for range 10 {
		steps = append(steps, step{0, k("a"), true})
	}
	steps = append(steps, step{0, k("a"), false})
	// Tab b has its own: ten fit; then the shared bucket (25) is short
	// for tab c after five.
	for range 10 {
		steps = append(steps, step{0, k("b"), true})
	}
	for range 5 {
		steps = append(steps, step{0, k("c"), true})
	}
	steps = append(steps, step{0, k("c"), false})
	// Six minutes later the shared bucket earned 2,500 bytes, tab a
	// 1,000: one line of a, then a is short again while the shared
	// bucket still has room for c.
	steps = append(steps, step{6 * time.Minute, k("a"), true}, step{0, k("a"), false}, step{0, k("c"), true})
	// A line larger than a caller's whole bucket never fits.
	steps = append(steps, step{10 * time.Hour, line("flood", "d", audit.SheetRaised, 10_001), false})
	clock := budgetClock()
	g := newBudget(b, clock.Now)
	left := 0
	for i, st := range steps {
		clock.Advance(st.after)
		if got := g.admit(st.e); got != st.want {
			t.Errorf("step %d (%s): admitted %v, want %v", i, st.e.Tab, got, st.want)
		}
		if !st.want {
			left++
		}
	}
	e, ok := g.summary()
	if !ok {
		t.Fatal("no summary after lines were left out")
	}
	n := 0
	for _, c := range e.Counts {
		n += c.N
	}
	if n != left || e.Event != audit.Summary || !e.Since.Equal(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("summary %+v counts %d, want %d since the first left out", e, n, left)
	}
	if _, ok := g.summary(); ok {
		t.Error("a second summary with nothing left out since")
	}
}

// TestBudgetRepeatedCounted: a line over budget that stood for others
// (Repeated) counts them too.
func TestBudgetRepeatedCounted(t *testing.T) {
	clock := budgetClock()
	g := newBudget(Budget{PerCaller: 100, All: 100, SummaryEvery: time.Minute}, clock.Now)
	e := line("flood", "t1", audit.TurnedAway, 500)
	e.Repeated = 41
	if g.admit(e) {
		t.Fatal("a line over budget was admitted")
	}
	s, _ := g.summary()
	if len(s.Counts) != 1 || s.Counts[0] != (audit.Count{Client: "flood", Tab: "t1", Event: audit.TurnedAway, Tool: "run_command", N: 42}) {
		t.Errorf("summary counts %+v, want the line and its 41 repeats", s.Counts)
	}
}

// TestSummaryBounded: however many callers were left out, a summary
// lists a bounded number of rows and fits its byte bound; the rest are
// counted as others, so the counts add up.
func TestSummaryBounded(t *testing.T) {
	clock := budgetClock()
	g := newBudget(Budget{PerCaller: 1, All: 1, SummaryEvery: time.Minute}, clock.Now)
	total := 0
	for i := range 3 * maxTallyKeys {
		e := line(strings.Repeat("\x1b", 100)+fmt.Sprint(i), fmt.Sprintf("t%d", i), audit.Refused, 300)
		e.Tool = strings.Repeat("\u202e", 200)
		g.admit(e)
		total++
	}
	s, ok := g.summary()
	if !ok {
		t.Fatal("no summary")
	}
	if n := audit.LineSize(s); n > maxSummaryBytes {
		t.Errorf("summary takes %d bytes, more than %d", n, maxSummaryBytes)
	}
	n, others := 0, false
	for _, c := range s.Counts {
		n += c.N
		others = others || c.Others
	}
	if n != total || !others || len(s.Counts) > maxSummaryRows+1 {
		t.Errorf("summary: %d rows counting %d (others %v), want at most %d rows counting %d", len(s.Counts), n, others, maxSummaryRows+1, total)
	}
}

// TestBudgetBound: a flood by many callers, for hours, with lines of
// every size and a summary whenever one is due, adds no more than Bound
// says — with the default budget and with one where summaries outpace
// the refill.
func TestBudgetBound(t *testing.T) {
	for _, b := range []Budget{DefaultBudget, {PerCaller: 4 << 10, All: 16 << 10, SummaryEvery: time.Minute}} {
		t.Run(fmt.Sprintf("%d per hour", b.All), func(t *testing.T) {
			clock := budgetClock()
			g := newBudget(b, clock.Now)
			var written int64
			const d = 3 * time.Hour
			next := b.SummaryEvery
			const step = 30 * time.Second
			var sizes [20]audit.Entry
			for i := range sizes {
				sizes[i] = line("flood", "t", audit.SheetRaised, 200+i*420)
			}
			for elapsed := time.Duration(0); elapsed < d; elapsed += step {
				clock.Advance(step)
				for i := range 20 {
					e := sizes[i]
					e.Tab = fmt.Sprintf("t%d", (int(elapsed/time.Second)+i)%300)
					if g.admit(e) {
						written += int64(audit.LineSize(e))
					}
				}
				if elapsed+step >= next {
					next += b.SummaryEvery
					if s, ok := g.summary(); ok {
						written += int64(audit.LineSize(s))
					}
				}
			}
			t.Logf("wrote %d bytes in %s; the bound is %d", written, d, b.Bound(d))
			if bound := b.Bound(d); written > bound {
				t.Errorf("wrote %d bytes in %s, more than the bound %d", written, d, bound)
			}
			if written < b.All*int64(d/time.Hour)/2 {
				t.Errorf("wrote only %d bytes in %s: the flood did not test the bound", written, d)
			}
		})
	}
}

// TestBudgetForgetsFullBuckets: callers whose bucket refilled are
// forgotten, and beyond the bound new callers share one bucket.
func TestBudgetForgetsFullBuckets(t *testing.T) {
	clock := budgetClock()
	g := newBudget(Budget{PerCaller: 1000, All: 1 << 40, SummaryEvery: time.Minute}, clock.Now)
	for i := range maxCallerBuckets {
		g.admit(line("flood", fmt.Sprint("t", i), audit.Refused, 600))
	}
	if n := len(g.callers); n > maxCallerBuckets {
		t.Errorf("%d caller buckets, want at most %d", n, maxCallerBuckets)
	}
	// Beyond the bound, the newcomers share one bucket: one line fits.
	if !g.admit(line("flood", "new1", audit.Refused, 600)) || g.admit(line("flood", "new2", audit.Refused, 600)) {
		t.Error("newcomers beyond the bound do not share one bucket")
	}
	clock.Advance(2 * time.Hour)
	g.admit(line("flood", "later", audit.Refused, 600))
	if n := len(g.callers); n != 1 {
		t.Errorf("%d caller buckets after they all refilled, want the one new", n)
	}
}

// TestBudgetStatement keeps the package doc and the README honest: with
// the default sizes, the worst flood of agents without grants leaves the
// four old files (32 MiB) standing for more than five days, and with
// standing grants acting too, for more than 13 hours.
func TestBudgetStatement(t *testing.T) {
	capacity := int64(audit.DefaultKeep)*audit.DefaultMaxSize - int64(audit.DefaultKeep)*maxSummaryBytes*2 // each file is full but for less than a line
	if b := DefaultBudget.Bound(5 * 24 * time.Hour); b > capacity {
		t.Errorf("five days of the worst flood without grants: %d bytes, more than the %d the log keeps", b, capacity)
	}
	const d = 13 * time.Hour
	if b := DefaultBudget.Bound(d) + DefaultActBudget.Bound(d); b > capacity {
		t.Errorf("13 hours of the worst flood with standing grants: %d bytes, more than the %d the log keeps", b, capacity)
	}
}
