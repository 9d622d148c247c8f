package sheets

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// pending is one waiting request: a sheet, or a request in its caller's
// backlog (ID still empty).
type pending struct {
	Sheet
	key  string       // Request.CallerKey()
	done chan outcome // buffered; written once, under Queue.mu
}

type outcome struct {
	grantID string
	sheetID string // set by finish
	err     error
}

// turnAway is a caller key the human denied, or that withdrew its
// sheets in a loop.
type turnAway struct {
	denied, until time.Time
	// withdrew, when not zero, is how many sheets the caller withdrew
	// within within: that turned it away, not a denial.
	withdrew int
	within   time.Duration
}

// enqueue checks r against the turn-aways and the bounds and puts it on the
// queue: as a sheet, or in its caller's backlog when the caller already
// has one. Called with q.mu held.
func (q *Queue) enqueue(r Request) (*pending, error) {
	now := q.clock.Now()
	key := r.CallerKey()
	if q.closed {
		return nil, &Refusal{Reason: "refused: authz is shutting down", Kind: Withdrawn}
	}
	if ta, ok := q.away[key]; ok {
		if now.Before(ta.until) {
			return nil, &Refusal{Reason: turnedAway(r, ta, now), Kind: TurnedAway}
		}
		delete(q.away, key)
	}
	if q.waiting >= q.maxWaiting {
		return nil, &Refusal{Reason: queueFull(q.waiting), Kind: TurnedAway}
	}
	p := &pending{Sheet: Sheet{Request: r, Asked: now, Deadline: now.Add(q.timeout)}, key: key, done: make(chan outcome, 1)}
	if _, busy := q.sheetOf[key]; busy {
		if len(q.backlog[key]) >= q.backlogCap {
			return nil, &Refusal{Reason: backlogFull(r, q.backlogCap), Kind: TurnedAway}
		}
		q.backlog[key] = append(q.backlog[key], p)
	} else {
		q.show(p)
	}
	q.waiting++
	return p, nil
}

// show makes p a sheet at the back of the queue. Called with q.mu held.
func (q *Queue) show(p *pending) {
	q.seq++
	p.ID = "s" + strconv.Itoa(q.seq)
	q.shown = append(q.shown, p)
	q.sheetOf[p.key] = p
	q.notify()
	if q.raised != nil {
		q.raised(p.Sheet)
	}
}

// finish takes p off the queue and gives its caller o, unless p was
// already finished. Called with q.mu held.
func (q *Queue) finish(p *pending, o outcome) {
	if q.remove(p) {
		o.sheetID = p.ID
		p.done <- o
	}
}

// remove takes p off the queue, reporting whether it was there. When p
// was its caller's sheet, the caller's next backlog request becomes a
// sheet at the back of the queue. Called with q.mu held.
func (q *Queue) remove(p *pending) bool {
	if q.sheetOf[p.key] == p {
		i := slices.Index(q.shown, p)
		q.shown = slices.Delete(q.shown, i, i+1)
		delete(q.sheetOf, p.key)
		q.notify()
		q.promote(p.key)
	} else {
		b := q.backlog[p.key]
		i := slices.Index(b, p)
		if i < 0 {
			return false
		}
		q.setBacklog(p.key, slices.Delete(b, i, i+1))
	}
	q.waiting--
	return true
}

// promote makes the first request of key's backlog a sheet. Called with
// q.mu held.
func (q *Queue) promote(key string) {
	b := q.backlog[key]
	if len(b) == 0 {
		return
	}
	next := b[0]
	q.setBacklog(key, slices.Delete(b, 0, 1))
	q.show(next)
}

// setBacklog stores key's backlog, dropping it when empty. Called with
// q.mu held.
func (q *Queue) setBacklog(key string, b []*pending) {
	if len(b) == 0 {
		delete(q.backlog, key)
		return
	}
	q.backlog[key] = b
}

// backlogOf returns a copy of key's backlog. Called with q.mu held.
func (q *Queue) backlogOf(key string) []*pending { return slices.Clone(q.backlog[key]) }

// all returns every waiting request: the backlogs first, then the sheets
// in queue order. Finishing them in this order makes no backlog request a
// sheet only to finish it right after. Called with q.mu held.
func (q *Queue) all() []*pending {
	out := make([]*pending, 0, q.waiting)
	for _, key := range slices.Sorted(maps.Keys(q.backlog)) {
		out = append(out, q.backlog[key]...)
	}
	return append(out, q.shown...)
}

// find returns sheet id. Called with q.mu held.
func (q *Queue) find(id string) (*pending, error) {
	for _, p := range q.shown {
		if p.ID == id {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no sheet %q is waiting (answered, withdrawn or timed out): %w", id, errdefs.ErrNotFound)
}

// turnAwayKey turns caller key away from ta.denied on and forgets the
// turn-aways that are over, so the map holds only the denials of the last
// turn-away period. Called with q.mu held.
func (q *Queue) turnAwayKey(key string, ta turnAway) time.Time {
	now := ta.denied
	maps.DeleteFunc(q.away, func(_ string, old turnAway) bool { return !now.Before(old.until) })
	ta.until = now.Add(q.turnAway)
	q.away[key] = ta
	return ta.until
}

// withdrawn counts p, about to be finished because its caller gave up on
// it, as withdrawn when it is a sheet the human saw. At the limit of
// withdrawals within the window, the caller is turned away and its
// backlog refused; withdrawn then returns what to tell about it, else "".
// Called with q.mu held.
func (q *Queue) withdrawn(p *pending) string {
	if q.sheetOf[p.key] != p {
		return "" // a backlog request (never shown), or already finished
	}
	now := q.clock.Now()
	maps.DeleteFunc(q.withdrew, func(_ string, times []time.Time) bool {
		return !times[len(times)-1].After(now.Add(-q.withdrawWindow))
	})
	times := slices.DeleteFunc(q.withdrew[p.key], func(t time.Time) bool { return !t.After(now.Add(-q.withdrawWindow)) })
	times = append(times, now)
	if len(times) < q.withdrawals {
		q.withdrew[p.key] = times
		return ""
	}
	delete(q.withdrew, p.key)
	ta := turnAway{denied: now, withdrew: len(times), within: q.withdrawWindow}
	ta.until = q.turnAwayKey(p.key, ta)
	for _, b := range q.backlogOf(p.key) {
		q.finish(b, outcome{err: &Refusal{Reason: withdrewEarlier(b.Request, ta), Kind: TurnedAway}})
	}
	return withdrewNow(p.Request, ta)
}

// notify wakes the watchers. Called with q.mu held.
func (q *Queue) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}
