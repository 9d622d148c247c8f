package workspace

import (
	"sync"
	"time"
)

// A tab's bell: a BEL its program wrote (the screen reports it as
// screen.EventBell). Agent CLIs ring it when they need the human; attach
// marks the tab and rings the client's terminal (package attach). Bells
// go to their own subscribers, not through Watch: they change nothing a
// tab lister sees, and a flood of them must not cut watchers off.

// bellGap is the least time between two bells a tab reports: a program
// writing BELs in a loop reports about ten a second, not thousands.
const bellGap = 100 * time.Millisecond

// bellBuffer is how many bells a subscriber may fall behind; more are
// dropped for it (a bell is a hint: the next one comes soon enough).
const bellBuffer = 64

// bellGate rate-limits one tab's bells: leading edge, at most one per
// gap; the rest within the gap are dropped.
type bellGate struct {
	last time.Time
}

// pass reports whether a bell at now is reported.
func (g *bellGate) pass(now time.Time, gap time.Duration) bool {
	if !g.last.IsZero() && now.Sub(g.last) < gap && now.Sub(g.last) >= 0 {
		return false
	}
	g.last = now
	return true
}

// bells fans tabs' bells out to subscribers.
type bells struct {
	mu   sync.Mutex
	subs map[chan string]struct{}
}

// WatchBells subscribes to the tabs' bells: c receives the id of each tab
// whose program rang (rate-limited per tab by bellGap). Call stop when
// done; c is not closed.
func (w *Workspace) WatchBells() (c <-chan string, stop func()) {
	ch := make(chan string, bellBuffer)
	w.bells.mu.Lock()
	if w.bells.subs == nil {
		w.bells.subs = map[chan string]struct{}{}
	}
	w.bells.subs[ch] = struct{}{}
	w.bells.mu.Unlock()
	return ch, func() {
		w.bells.mu.Lock()
		delete(w.bells.subs, ch)
		w.bells.mu.Unlock()
	}
}

// ring tells every subscriber that tab id rang, dropping it for those
// that fell behind.
func (w *Workspace) ring(id string) {
	w.bells.mu.Lock()
	defer w.bells.mu.Unlock()
	for ch := range w.bells.subs {
		select {
		case ch <- id:
		default:
		}
	}
}

// bellLocked records a BEL of the tab's program; called with t.mu held,
// from inside screen.Write.
func (t *tab) bellLocked() { t.bellRang = true }

// takeBellLocked reports whether the chunk just rendered rang a bell
// that passes the tab's rate limit; called with t.mu held.
func (t *tab) takeBellLocked(now time.Time) bool {
	if !t.bellRang {
		return false
	}
	t.bellRang = false
	return t.bellGate.pass(now, bellGap)
}

// LastOutput is when tab id last rendered output; the zero time if never.
func (w *Workspace) LastOutput(id string) (time.Time, error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return time.Time{}, err
	}
	ns := e.tab.lastOutput.Load()
	if ns == 0 {
		return time.Time{}, nil
	}
	return time.Unix(0, ns), nil
}
