package sheets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/errdefs"
)

// harness runs a queue on a fake clock; Asks run in the background and
// are all finished when the test ends (Close refuses what still waits).
type harness struct {
	t     *testing.T
	q     *Queue
	clock *FakeClock
	wg    sync.WaitGroup
}

// result is how one Ask came back.
type result struct {
	grant string
	err   error
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	h := &harness{t: t, clock: NewFakeClock(time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC))}
	o.Clock = h.clock
	h.q = New(o)
	t.Cleanup(func() { h.q.Close(); h.wg.Wait() })
	return h
}

// ask starts an Ask; the channel gets its result.
func (h *harness) ask(r Request) <-chan result {
	return h.askCtx(context.Background(), r)
}

func (h *harness) askCtx(ctx context.Context, r Request) <-chan result {
	ch := make(chan result, 1)
	h.wg.Go(func() {
		g, err := h.q.Ask(ctx, r)
		ch <- result{g, err}
	})
	return ch
}

// waitCounts waits until the queue holds sheets sheets and backlog
// requests behind them, and returns the sheets.
func (h *harness) waitCounts(sheets, backlog int) []Sheet {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, b := h.q.Counts()
		if s == sheets && b == backlog {
			return h.q.List()
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("queue holds %d sheets and %d backlog requests, want %d and %d: %v", s, b, sheets, backlog, h.q.List())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// get waits for a result.
func (h *harness) get(ch <-chan result) result {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		h.t.Fatal("Ask did not return")
		return result{}
	}
}

// refusedWith waits for a refusal whose reason holds every want.
func (h *harness) refusedWith(ch <-chan result, want ...string) {
	h.t.Helper()
	r := h.get(ch)
	var ref *Refusal
	if !errors.As(r.err, &ref) || !errdefs.Is(r.err, errdefs.ErrPermissionDenied) {
		h.t.Fatalf("Ask = %q, %v; want a refusal", r.grant, r.err)
	}
	for _, w := range want {
		if !strings.Contains(ref.Reason, w) {
			h.t.Errorf("refusal %q does not say %q", ref.Reason, w)
		}
	}
}

// allowed waits for a grant.
func (h *harness) allowed(ch <-chan result, grant string) {
	h.t.Helper()
	if r := h.get(ch); r.err != nil || r.grant != grant {
		h.t.Fatalf("Ask = %q, %v; want grant %q", r.grant, r.err, grant)
	}
}

func (h *harness) allow(id, grant string) {
	h.t.Helper()
	if err := h.q.Allow(id, func(Sheet) (string, error) { return grant, nil }); err != nil {
		h.t.Fatal(err)
	}
}

func inTab(tab, conn string) Request {
	return Request{Client: "claude", ConnectionID: conn, TabID: tab, Need: policy.Need{Tool: "read_output", Subject: "tab t9"}}
}

func outside(client, conn string) Request { return Request{Client: client, ConnectionID: conn} }

func escaped(client, conn string) Request {
	return Request{Client: client, ConnectionID: conn, InsideWithoutTab: true}
}

func TestCallerKey(t *testing.T) {
	tests := []struct {
		name string
		a, b Request
		same bool
	}{
		{"a tab, over two connections", inTab("t1", "c1"), inTab("t1", "c2"), true},
		{"two tabs", inTab("t1", "c1"), inTab("t2", "c1"), false},
		{"outside Phantom, one client reconnecting", outside("codex", "c1"), outside("codex", "c2"), true},
		{"outside Phantom, two clients", outside("codex", "c1"), outside("claude", "c1"), false},
		{"inside without a tab, any client", escaped("codex", "c1"), escaped("claude", "c2"), true},
		{"inside without a tab is not outside", escaped("codex", "c1"), outside("codex", "c1"), false},
		{"inside without a tab is not its old tab", escaped("codex", "c1"), inTab("t1", "c1"), false},
		{"a client named like a tab", outside("t1", "c1"), inTab("t1", "c1"), false},
	}
	for _, tt := range tests {
		if got := tt.a.CallerKey() == tt.b.CallerKey(); got != tt.same {
			t.Errorf("%s: keys %q and %q, same = %v, want %v", tt.name, tt.a.CallerKey(), tt.b.CallerKey(), got, tt.same)
		}
	}
}

// TestFloodFromOneTabNeverDelaysAnother: one tab's flood fills its
// backlog and is refused beyond it; another tab's sheet comes right
// behind the flooding tab's one sheet, and the tabs then take turns.
func TestFloodFromOneTabNeverDelaysAnother(t *testing.T) {
	h := newHarness(t, Options{})
	var flood []<-chan result
	for i := range 20 {
		flood = append(flood, h.ask(inTab("t1", fmt.Sprintf("c%d", i))))
	}
	refused := 0
	for refused < 20-1-DefaultBacklog {
		select {
		case r := <-flood[0]:
			t.Fatalf("a flood call returned: %v", r)
		default:
		}
		for _, ch := range flood {
			select {
			case r := <-ch:
				if r.err == nil || !strings.Contains(r.err.Error(), "wait for those answers") {
					t.Fatalf("flood call = %v, want refused for a full backlog", r)
				}
				refused++
			default:
			}
		}
		time.Sleep(time.Millisecond)
	}
	h.waitCounts(1, DefaultBacklog)

	other := h.ask(inTab("t2", "c99"))
	l := h.waitCounts(2, DefaultBacklog)
	if l[0].TabID != "t1" || l[1].TabID != "t2" {
		t.Fatalf("sheets %v, want t1's one sheet, then t2's", l)
	}
	h.allow(l[0].ID, "g1")
	// t1's next request joins the back of the queue, behind t2.
	l = h.waitCounts(2, DefaultBacklog-1)
	if l[0].TabID != "t2" || l[1].TabID != "t1" {
		t.Fatalf("after answering t1: sheets %v, want t2's on screen, t1's next behind it", l)
	}
	h.allow(l[0].ID, "g2")
	h.allowed(other, "g2")
}

// TestTurnAwayFollowsCallerKey: a denial turns the caller key away,
// whatever connection it comes back on; other keys still get sheets.
func TestTurnAwayFollowsCallerKey(t *testing.T) {
	tests := []struct {
		name        string
		denied, ask Request
		turnedAway  bool
	}{
		{"same tab, new connection", inTab("t1", "c1"), inTab("t1", "c2"), true},
		{"same tab, same connection", inTab("t1", "c1"), inTab("t1", "c1"), true},
		{"another tab", inTab("t1", "c1"), inTab("t2", "c1"), false},
		{"left its tab: still turned away", escaped("claude", "c1"), escaped("codex", "c7"), true},
		{"outside Phantom, reconnected", outside("codex", "c1"), outside("codex", "c2"), true},
		{"outside Phantom, another client", outside("codex", "c1"), outside("gemini", "c1"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			first := h.ask(tt.denied)
			l := h.waitCounts(1, 0)
			if err := h.q.Deny(l[0].ID); err != nil {
				t.Fatal(err)
			}
			h.refusedWith(first, "the human denied", "is turned away until 15:01:00")
			h.q.Withdraw(tt.denied.ConnectionID) // closing the connection lifts nothing
			h.clock.Advance(59 * time.Second)
			again := h.ask(tt.ask)
			if tt.turnedAway {
				h.refusedWith(again, "refused without asking", "may ask again at 15:01:00 (in 1s)")
				h.waitCounts(0, 0)
				h.clock.Advance(time.Second)
				again = h.ask(tt.ask)
			}
			l = h.waitCounts(1, 0)
			h.allow(l[0].ID, "g")
			h.allowed(again, "g")
		})
	}
}

// TestTimeoutIsNotARefusal: a sheet nobody answered refuses that call
// only; the caller's next request raises a sheet at once.
func TestTimeoutIsNotARefusal(t *testing.T) {
	h := newHarness(t, Options{Timeout: 10 * time.Second})
	first := h.ask(inTab("t1", "c1"))
	behind := h.ask(inTab("t1", "c2"))
	h.waitCounts(1, 1)
	h.clock.Advance(10 * time.Second)
	h.refusedWith(first, "nobody answered the permission sheet within 10s", "Codex", "did not refuse")
	h.refusedWith(behind, "nobody answered the permission sheet within 10s", "did not refuse")
	h.waitCounts(0, 0)

	again := h.ask(inTab("t1", "c1"))
	l := h.waitCounts(1, 0)
	if want := h.clock.Now().Add(10 * time.Second); !l[0].Deadline.Equal(want) {
		t.Errorf("deadline %v, want %v", l[0].Deadline, want)
	}
	h.allow(l[0].ID, "g")
	h.allowed(again, "g")
}

// TestBacklogDeadlineIsTheCalls: time spent in the backlog counts
// against the call's deadline, which its sheet shows.
func TestBacklogDeadlineIsTheCalls(t *testing.T) {
	h := newHarness(t, Options{Timeout: 10 * time.Second})
	first := h.ask(inTab("t1", "c1"))
	h.waitCounts(1, 0)
	h.clock.Advance(4 * time.Second)
	behind := h.ask(inTab("t1", "c2"))
	l := h.waitCounts(1, 1)
	h.clock.Advance(4 * time.Second)
	h.allow(l[0].ID, "g1")
	h.allowed(first, "g1")
	l = h.waitCounts(1, 0)
	if want := time.Date(2026, 1, 2, 15, 0, 14, 0, time.UTC); !l[0].Deadline.Equal(want) {
		t.Errorf("promoted sheet's deadline %v, want the call's %v", l[0].Deadline, want)
	}
	h.clock.Advance(6 * time.Second)
	h.refusedWith(behind, "nobody answered the permission sheet")
}

// TestDenyRefusesBacklog: a denial refuses the caller's backlog too, and
// leaves other callers' sheets alone.
func TestDenyRefusesBacklog(t *testing.T) {
	h := newHarness(t, Options{})
	var mine []<-chan result
	for i := range 4 {
		mine = append(mine, h.ask(inTab("t1", fmt.Sprintf("c%d", i))))
		h.waitCounts(1, i)
	}
	other := h.ask(inTab("t2", "c9"))
	l := h.waitCounts(2, 3)
	if err := h.q.Deny(l[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, ch := range mine {
		h.refusedWith(ch, "denied", "tab t1")
	}
	l = h.waitCounts(1, 0)
	if l[0].TabID != "t2" {
		t.Errorf("left: %v, want t2's sheet", l)
	}
	h.allow(l[0].ID, "g")
	h.allowed(other, "g")
}

// TestBounds: a caller's backlog and the whole queue are bounded; beyond
// the bounds a call is refused at once with a reason.
func TestBounds(t *testing.T) {
	tests := []struct {
		name           string
		o              Options
		fill           []Request
		sheets, behind int
		extra          Request
		want           string
	}{
		{"backlog of one tab", Options{Backlog: 2},
			[]Request{inTab("t1", "a"), inTab("t1", "b"), inTab("t1", "c")}, 1, 2, inTab("t1", "d"),
			"tab t1 already has a permission sheet waiting for the human and 2 more requests"},
		{"backlog outside Phantom", Options{Backlog: 1},
			[]Request{outside("codex", "a"), outside("codex", "b")}, 1, 1, outside("codex", "c"),
			`client "codex" (outside Phantom) already has`},
		{"the whole queue", Options{MaxWaiting: 3},
			[]Request{inTab("t1", "a"), inTab("t2", "b"), inTab("t2", "c")}, 2, 1, inTab("t3", "d"),
			"3 permission requests already wait for the human"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.o)
			for _, r := range tt.fill {
				h.ask(r)
			}
			h.waitCounts(tt.sheets, tt.behind)
			h.refusedWith(h.ask(tt.extra), "refused without asking", tt.want)
			h.waitCounts(tt.sheets, tt.behind)
		})
	}
}

// TestWithdraw: a closed connection's sheets and backlog requests go;
// another connection of the same tab takes the tab's turn.
func TestWithdraw(t *testing.T) {
	h := newHarness(t, Options{})
	sheet := h.ask(inTab("t1", "c1"))
	h.waitCounts(1, 0)
	kept := h.ask(inTab("t1", "c2"))
	h.waitCounts(1, 1)
	queued := h.ask(inTab("t1", "c1"))
	h.waitCounts(1, 2)
	h.q.Withdraw("c1")
	h.refusedWith(sheet, "withdrawn")
	h.refusedWith(queued, "withdrawn")
	l := h.waitCounts(1, 0)
	if l[0].ConnectionID != "c2" {
		t.Fatalf("left: %v, want c2's request as the sheet", l)
	}
	h.allow(l[0].ID, "g")
	h.allowed(kept, "g")
}

// TestCallerGone: a call whose context ends leaves the queue, and the
// caller's next request takes its place.
func TestCallerGone(t *testing.T) {
	h := newHarness(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	gone := h.askCtx(ctx, inTab("t1", "c1"))
	h.waitCounts(1, 0)
	next := h.ask(inTab("t1", "c2"))
	h.waitCounts(1, 1)
	cancel()
	if r := h.get(gone); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Ask = %v, want canceled", r.err)
	}
	l := h.waitCounts(1, 0)
	h.allow(l[0].ID, "g")
	h.allowed(next, "g")
}

// TestSettleAnswersBacklog: a grant answers the sheets and backlog
// requests it covers; the first one it does not cover becomes the sheet.
func TestSettleAnswersBacklog(t *testing.T) {
	h := newHarness(t, Options{})
	run := inTab("t1", "c3")
	run.Need.Tool = "run_command"
	first := h.ask(inTab("t1", "c1"))
	h.waitCounts(1, 0)
	reads := []<-chan result{h.ask(inTab("t1", "c2"))}
	h.waitCounts(1, 1)
	blocked := h.ask(run)
	h.waitCounts(1, 2)
	reads = append(reads, h.ask(inTab("t1", "c4")))
	l := h.waitCounts(1, 3)
	h.allow(l[0].ID, "g")
	h.q.Settle(func(s Sheet) (string, bool) { return "g", s.Need.Tool == "read_output" })
	h.allowed(first, "g")
	for _, ch := range reads {
		h.allowed(ch, "g")
	}
	l = h.waitCounts(1, 0)
	if l[0].Need.Tool != "run_command" {
		t.Fatalf("left: %v, want the run_command sheet", l)
	}
	h.allow(l[0].ID, "g2")
	h.allowed(blocked, "g2")
}

// TestTurnAwaysArePruned: turn-aways that are over are forgotten.
func TestTurnAwaysArePruned(t *testing.T) {
	h := newHarness(t, Options{})
	for i := range 5 {
		ch := h.ask(inTab(fmt.Sprintf("t%d", i), "c"))
		l := h.waitCounts(1, 0)
		if err := h.q.Deny(l[0].ID); err != nil {
			t.Fatal(err)
		}
		h.refusedWith(ch, "denied")
		h.clock.Advance(20 * time.Second)
	}
	h.q.mu.Lock()
	n := len(h.q.away)
	h.q.mu.Unlock()
	if n > 3 {
		t.Errorf("%d turn-aways held, want only the 3 of the last minute", n)
	}
}

func TestCloseRefusesWaitersAndLaterCalls(t *testing.T) {
	h := newHarness(t, Options{})
	sheet, behind := h.ask(inTab("t1", "c1")), h.ask(inTab("t1", "c2"))
	h.waitCounts(1, 1)
	h.q.Close()
	h.refusedWith(sheet, "shutting down")
	h.refusedWith(behind, "shutting down")
	h.refusedWith(h.ask(inTab("t2", "c3")), "shutting down")
}

func TestAnswerUnknownSheet(t *testing.T) {
	h := newHarness(t, Options{})
	h.ask(inTab("t1", "c1"))
	h.ask(inTab("t2", "c2"))
	h.waitCounts(2, 0)
	if err := h.q.Deny("s99"); !errdefs.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Deny(s99) = %v, want not found", err)
	}
	if err := h.q.Allow("s99", func(Sheet) (string, error) { return "g", nil }); !errdefs.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Allow(s99) = %v, want not found", err)
	}
	failed := errors.New("disk full")
	l := h.q.List()
	if err := h.q.Allow(l[0].ID, func(Sheet) (string, error) { return "", failed }); !errors.Is(err, failed) {
		t.Errorf("Allow with a failing grant = %v", err)
	}
	h.waitCounts(2, 0) // the sheet stays up
}
