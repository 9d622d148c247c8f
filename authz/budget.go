package authz

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
)

// Budget bounds the audit lines callers can make authz write without the
// human: sheets raised, and calls refused, turned away, withdrawn or
// timed out, or allowed to read (see callerDriven). Each such line takes
// its size in bytes (audit.LineSize, an upper bound) from two buckets:
// its caller's (a tab; outside tabs, a client name), and one that every
// caller shares, which bounds many tabs and connections at once. Each
// bucket holds at most an hour's worth and refills at that rate. A line
// that finds either short is left out and counted, and the counts are
// written as one summary line every SummaryEvery (audit.Summary), which
// also takes from the shared bucket, even into debt, since it must be
// written. So however many agents flood authz, lines they cause add at
// most Bound(d) bytes to the log over any d.
//
// What is not budgeted here is what the human does (answers,
// revocations, grants-file changes, a denial) and the calls that act —
// type a command, change how a language server starts, change worktrees
// — each of which is recorded on its own line, on disk before it happens
// (see Service.allow). Those have a budget of their own (DefaultActBudget):
// an act a standing grant covers that would not fit is refused, not done
// unrecorded; an act the human allowed just now on its sheet always
// proceeds.
type Budget struct {
	// PerCaller is the bytes an hour the lines of one caller may take.
	PerCaller int64
	// All is the bytes an hour the lines of all callers together may
	// take.
	All int64
	// SummaryEvery is how often a summary of the lines left out is
	// written, when there is one.
	SummaryEvery time.Duration
}

// DefaultBudget is authz's budget. With the log's default size (five
// files of 8 MiB, of which four full ones are always kept: 32 MiB), a
// flood by all agents together, at 256 KiB an hour, takes more than five
// days to push a line out (see the package doc).
var DefaultBudget = Budget{PerCaller: 64 << 10, All: 256 << 10, SummaryEvery: 5 * time.Minute}

// DefaultActBudget bounds the lines of acts under standing grants: 512
// KiB an hour per caller (a thousand commands of a few hundred bytes, or
// sixty of the longest, 8 KiB), 2 MiB for all callers. Its SummaryEvery
// is unused: acts are refused, not left out.
var DefaultActBudget = Budget{PerCaller: 512 << 10, All: 2 << 20, SummaryEvery: time.Hour}

// or is b with its zero fields taken from d.
func (b Budget) or(d Budget) Budget {
	return Budget{PerCaller: cmp.Or(b.PerCaller, d.PerCaller), All: cmp.Or(b.All, d.All), SummaryEvery: cmp.Or(b.SummaryEvery, d.SummaryEvery)}
}

// Bounds of a summary line (bounded memory, bounded bytes).
const (
	// maxSummaryBytes bounds a summary line: rows that do not fit are
	// counted in its Others row.
	maxSummaryBytes = 16 << 10
	// maxSummaryRows bounds the rows of a summary listed one by one.
	maxSummaryRows = 32
	// maxTallyKeys bounds the rows counted between summaries; beyond,
	// lines are counted as others.
	maxTallyKeys = 1024
	// maxCallerBuckets bounds the callers with a bucket of their own;
	// beyond, new callers share one.
	maxCallerBuckets = 4096
	// maxRowText bounds a row's client and tool names.
	maxRowText = 128
)

// Bound is the most bytes budgeted lines, summaries included, add to the
// log over d: a full shared bucket, its refill over d, and the debt of
// summaries — one summary when the summaries of an hour take less than
// the bucket's rate (so that debt is paid before the next), else every
// summary of d.
func (b Budget) Bound(d time.Duration) int64 {
	n := int64(d/b.SummaryEvery) + 1
	if maxSummaryBytes*int64(time.Hour/b.SummaryEvery) <= b.All {
		n = 1
	}
	return b.All + int64(float64(b.All)*d.Hours()) + n*maxSummaryBytes
}

// bucket is a token bucket of bytes, full at its hourly rate.
type bucket struct {
	tokens float64
	at     time.Time
}

// fill adds what the time since the last fill earned, up to rate.
func (k *bucket) fill(now time.Time, rate int64) {
	k.tokens = min(float64(rate), k.tokens+float64(rate)*now.Sub(k.at).Hours())
	k.at = now
}

// countKey is a row of a summary.
type countKey struct {
	client, tab, event, tool string
}

// row is the summary row of a caller's line.
func row(client, tab, event, tool string) countKey {
	return countKey{client: clipN(client, maxRowText), tab: clipN(tab, maxRowText), event: event, tool: clipN(tool, maxRowText)}
}

// budget applies a Budget.
type budget struct {
	b   Budget
	now func() time.Time

	mu      sync.Mutex
	all     bucket
	callers map[string]*bucket
	others  bucket // shared by the callers beyond maxCallerBuckets
	counts  map[countKey]int
	more    int       // lines left out beyond maxTallyKeys rows
	since   time.Time // when the first line since the last summary was left out
}

func newBudget(b Budget, now func() time.Time) *budget {
	t := now()
	return &budget{b: b, now: now, all: bucket{float64(b.All), t}, others: bucket{float64(b.PerCaller), t},
		callers: map[string]*bucket{}, counts: map[countKey]int{}}
}

// callerKey is whose bucket e takes from.
func callerKey(e audit.Entry) string {
	if e.Tab != "" {
		return "tab " + e.Tab
	}
	return "client " + e.Client
}

// admit reports whether e may be written, taking its bytes; when not, it
// counts e and the Repeated lines it stood for as left out.
func (g *budget) admit(e audit.Entry) bool {
	cost := float64(audit.LineSize(e))
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.take(e, cost, false); ok {
		return true
	}
	g.leaveOut(row(e.Client, e.Tab, e.Event, e.Tool), 1+e.Repeated, g.now())
	return false
}

// act reports whether the line of an act fits, taking its bytes; when it
// does not, it says how long until it would. With always set (the human
// allowed the act just now), the bytes are taken even into debt.
func (g *budget) act(e audit.Entry, always bool) (time.Duration, bool) {
	cost := float64(audit.LineSize(e))
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.take(e, cost, always)
}

// take takes cost bytes, for e, from its caller's bucket and the shared
// one when both hold them (or anyway, with force); otherwise it reports
// how long until both would. Called with g.mu held.
func (g *budget) take(e audit.Entry, cost float64, force bool) (time.Duration, bool) {
	now := g.now()
	g.all.fill(now, g.b.All)
	own := g.bucketOf(callerKey(e), now)
	own.fill(now, g.b.PerCaller)
	if !force && (g.all.tokens < cost || own.tokens < cost) {
		wait := max(hoursFor(cost-g.all.tokens, g.b.All), hoursFor(cost-own.tokens, g.b.PerCaller))
		return wait, false
	}
	g.all.tokens -= cost
	own.tokens -= cost
	return 0, true
}

// hoursFor is how long a bucket of rate takes to earn need bytes; a
// need larger than the whole bucket is never met.
func hoursFor(need float64, rate int64) time.Duration {
	if need <= 0 {
		return 0
	}
	return time.Duration(need / float64(rate) * float64(time.Hour))
}

// bucketOf returns key's bucket, made full when new. Called with g.mu
// held.
func (g *budget) bucketOf(key string, now time.Time) *bucket {
	if k, ok := g.callers[key]; ok {
		return k
	}
	if len(g.callers) >= maxCallerBuckets {
		// A full bucket is as good as none: forget those.
		maps.DeleteFunc(g.callers, func(_ string, k *bucket) bool {
			k.fill(now, g.b.PerCaller)
			return k.tokens >= float64(g.b.PerCaller)
		})
	}
	if len(g.callers) >= maxCallerBuckets {
		return &g.others
	}
	k := &bucket{tokens: float64(g.b.PerCaller), at: now}
	g.callers[key] = k
	return k
}

// leftOut counts n lines of row left out (by the coalescer, whose counts
// no later line will carry).
func (g *budget) leftOut(row countKey, n int) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.leaveOut(row, n, now)
}

// leaveOut counts n lines of row. Called with g.mu held.
func (g *budget) leaveOut(row countKey, n int, now time.Time) {
	if n <= 0 {
		return
	}
	if g.since.IsZero() {
		g.since = now
	}
	if _, ok := g.counts[row]; ok || len(g.counts) < maxTallyKeys {
		g.counts[row] += n
		return
	}
	g.more += n
}

// summary takes the counts since the last summary as a summary line, and
// its bytes from the shared bucket; false when nothing was left out.
func (g *budget) summary() (audit.Entry, bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.since.IsZero() {
		return audit.Entry{}, false
	}
	rows := slices.SortedFunc(maps.Keys(g.counts), func(a, b countKey) int {
		return cmp.Or(cmp.Compare(g.counts[b], g.counts[a]), cmp.Compare(a.client, b.client), cmp.Compare(a.tab, b.tab),
			cmp.Compare(a.event, b.event), cmp.Compare(a.tool, b.tool))
	})
	e := audit.Entry{Event: audit.Summary, Since: g.since,
		Reason: "lines about calls that callers can repeat at will were left out, to keep within the audit budget " +
			"(so that a flood cannot push older lines out of the log); they are counted here by caller, outcome and tool"}
	others := g.more
	for i, r := range rows {
		if i >= maxSummaryRows {
			others += g.counts[r]
			continue
		}
		e.Counts = append(e.Counts, audit.Count{Client: r.client, Tab: r.tab, Event: r.event, Tool: r.tool, N: g.counts[r]})
	}
	withOthers := func() audit.Entry {
		out := e
		out.Counts = slices.Clone(e.Counts)
		if others > 0 {
			out.Counts = append(out.Counts, audit.Count{Others: true, N: others})
		}
		return out
	}
	line := withOthers()
	for audit.LineSize(line) > maxSummaryBytes && len(e.Counts) > 0 {
		others += e.Counts[len(e.Counts)-1].N
		e.Counts = e.Counts[:len(e.Counts)-1]
		line = withOthers()
	}
	g.all.fill(now, g.b.All)
	g.all.tokens -= float64(audit.LineSize(line))
	clear(g.counts)
	g.more, g.since = 0, time.Time{}
	return line, true
}
