package sheets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestWithdrawalsTurnAway: a caller that gives up on its sheets before
// the human answers — cancelling the call or closing the connection — is
// turned away at the third within a minute, without a new sheet, its
// backlog with it; spread out, or in the backlog, withdrawals do not
// count, and other callers are not touched.
func TestWithdrawalsTurnAway(t *testing.T) {
	cancelCall := func(h *harness, r Request) {
		ctx, cancel := context.WithCancel(context.Background())
		ch := h.askCtx(ctx, r)
		h.waitCounts(1, 0)
		cancel()
		if res := h.get(ch); !errors.Is(res.err, context.Canceled) {
			h.t.Fatalf("cancelled Ask = %v, want canceled", res.err)
		}
	}
	closeConn := func(h *harness, r Request) {
		ch := h.ask(r)
		h.waitCounts(1, 0)
		h.q.Withdraw(r.ConnectionID)
		h.refusedWith(ch, "withdrawn")
	}
	tests := []struct {
		name string
		// withdraw withdraws one sheet of tab t1 on connection conn.
		withdraw func(h *harness, r Request)
		gaps     []time.Duration // clock advance before each withdrawal
		away     bool
	}{
		{"three calls cancelled within a minute", cancelCall, []time.Duration{0, 20 * time.Second, 39 * time.Second}, true},
		{"three connections closed within a minute", closeConn, []time.Duration{0, time.Second, time.Second}, true},
		{"spread over more than a minute", cancelCall, []time.Duration{0, 30 * time.Second, 31 * time.Second}, false},
		{"two only", closeConn, []time.Duration{0, time.Second}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			for i, gap := range tt.gaps {
				h.clock.Advance(gap)
				tt.withdraw(h, inTab("t1", "c"+string(rune('1'+i))))
			}
			h.waitCounts(0, 0)
			// Another tab still gets its sheet.
			other := h.ask(inTab("t2", "c9"))
			l := h.waitCounts(1, 0)
			h.allow(l[0].ID, "g2")
			h.allowed(other, "g2")
			next := h.ask(inTab("t1", "c8"))
			if !tt.away {
				l = h.waitCounts(1, 0)
				h.allow(l[0].ID, "g")
				h.allowed(next, "g")
				return
			}
			h.refusedWith(next, "refused without asking", "tab t1 withdrew 3 permission sheets within 1m0s",
				"before the human answered", "may ask again at", "ask once, and wait")
			h.waitCounts(0, 0)
			h.clock.Advance(DefaultTurnAway)
			next = h.ask(inTab("t1", "c8"))
			l = h.waitCounts(1, 0)
			h.allow(l[0].ID, "g")
			h.allowed(next, "g")
		})
	}
}

// TestWithdrawalTurnsAwayBacklog: the withdrawal that turns a caller away
// refuses its backlog too, so none of it becomes a sheet; the note says
// so, for the audit log.
func TestWithdrawalTurnsAwayBacklog(t *testing.T) {
	h := newHarness(t, Options{})
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		ch := h.askCtx(ctx, inTab("t1", "c1"))
		h.waitCounts(1, 0)
		cancel()
		h.get(ch)
	}
	ctx, cancel := context.WithCancel(context.Background())
	third := h.askCtx(ctx, inTab("t1", "c1"))
	h.waitCounts(1, 0)
	behind := h.ask(inTab("t1", "c2"))
	h.waitCounts(1, 1)
	cancel()
	r := h.get(third)
	if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), "is turned away until 15:01:00") {
		t.Errorf("third cancelled Ask = %v, want canceled, saying the caller is turned away", r.err)
	}
	h.refusedWith(behind, "refused without asking", "withdrew 3 permission sheets")
	h.waitCounts(0, 0)
}

// TestBacklogCancelsDoNotCount: requests cancelled in the backlog, never
// shown to the human, do not turn the caller away.
func TestBacklogCancelsDoNotCount(t *testing.T) {
	h := newHarness(t, Options{})
	first := h.ask(inTab("t1", "c1"))
	h.waitCounts(1, 0)
	for i := 1; i <= 5; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		ch := h.askCtx(ctx, inTab("t1", "c2"))
		h.waitCounts(1, 1)
		cancel()
		h.get(ch)
		h.waitCounts(1, 0)
	}
	l := h.q.List()
	h.allow(l[0].ID, "g")
	h.allowed(first, "g")
	next := h.ask(inTab("t1", "c3"))
	l = h.waitCounts(1, 0)
	h.allow(l[0].ID, "g")
	h.allowed(next, "g")
}

// TestWithdrawalsArePruned: withdrawals older than the window are
// forgotten.
func TestWithdrawalsArePruned(t *testing.T) {
	h := newHarness(t, Options{})
	for _, tab := range []string{"t1", "t2", "t3", "t4"} {
		ch := h.ask(inTab(tab, "c-"+tab))
		h.waitCounts(1, 0)
		h.q.Withdraw("c-" + tab)
		h.refusedWith(ch, "withdrawn")
		h.clock.Advance(30 * time.Second)
	}
	h.q.mu.Lock()
	n := len(h.q.withdrew)
	h.q.mu.Unlock()
	if n > 2 {
		t.Errorf("withdrawals of %d callers held, want only the 2 of the last minute", n)
	}
}
