// Package sheets queues the permission sheets that ask the human, one on
// screen at a time, first come first served.
//
// An agent that asks in a loop must not train the human to click Allow: a
// caller that was refused (denied, or the sheet timed out) is turned away
// for a while without a new sheet. A sheet nobody answers times out as a
// refusal, before the agents' own tool-call timeouts give up on the call
// (Codex waits 60 s). A sheet whose connection closed is withdrawn.
package sheets

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/errdefs"
)

// Defaults for Options.
const (
	// DefaultTimeout is how long a call waits for an answer: below Codex's
	// 60 s tool-call timeout, so the agent hears why it was refused.
	DefaultTimeout = 50 * time.Second
	// DefaultTurnAway is how long a refused caller is turned away.
	DefaultTurnAway = 60 * time.Second
)

// Request is what a sheet asks about.
type Request struct {
	Client       string
	ConnectionID string
	TabID        string
	TabTitle     string
	PID          int32
	Need         policy.Need
}

// Sheet is a request waiting for the human.
type Sheet struct {
	ID string
	Request
	// Asked is when the call arrived; Deadline when it times out.
	Asked, Deadline time.Time
}

// Refusal is a call refused without a grant; its message is the reason
// given to the agent. It is of kind errdefs.ErrPermissionDenied.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

// Unwrap gives the refusal its kind.
func (r *Refusal) Unwrap() error { return errdefs.ErrPermissionDenied }

// Options configure a Queue; zero values take the defaults.
type Options struct {
	Clock    Clock
	Timeout  time.Duration
	TurnAway time.Duration
}

// Queue holds the sheets. Its methods are safe for concurrent use.
type Queue struct {
	clock    Clock
	timeout  time.Duration
	turnAway time.Duration

	mu      sync.Mutex
	seq     int
	pending []*pending          // FIFO; pending[0] is on screen
	away    map[string]turnAway // caller key → until when
	changed chan struct{}       // closed and replaced on every change
	closed  bool
}

type pending struct {
	Sheet
	done chan outcome // buffered; written once, under Queue.mu
}

type outcome struct {
	grantID string
	err     error
}

type turnAway struct {
	until time.Time
	why   string
}

// New returns an empty queue.
func New(o Options) *Queue {
	if o.Clock == nil {
		o.Clock = RealClock
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TurnAway <= 0 {
		o.TurnAway = DefaultTurnAway
	}
	return &Queue{clock: o.Clock, timeout: o.Timeout, turnAway: o.TurnAway,
		away: map[string]turnAway{}, changed: make(chan struct{})}
}

// Now is the queue's clock.
func (q *Queue) Now() time.Time { return q.clock.Now() }

// Ask puts up a sheet for r and waits for the human. It returns the id of
// the grant the human gave, or a *Refusal: the caller is turned away, the
// human denied, nobody answered in time, or the connection closed.
func (q *Queue) Ask(ctx context.Context, r Request) (grantID string, err error) {
	q.mu.Lock()
	now := q.clock.Now()
	key := callerKey(r)
	if ta, ok := q.away[key]; ok && now.Before(ta.until) {
		q.mu.Unlock()
		return "", &Refusal{Reason: fmt.Sprintf("refused without asking: the human refused %s's last request (%s); it may ask again at %s (in %s)",
			who(r), ta.why, clockTime(ta.until), ta.until.Sub(now).Round(time.Second))}
	}
	if q.closed {
		q.mu.Unlock()
		return "", &Refusal{Reason: "refused: authz is shutting down"}
	}
	q.seq++
	p := &pending{Sheet: Sheet{ID: "s" + strconv.Itoa(q.seq), Request: r, Asked: now, Deadline: now.Add(q.timeout)},
		done: make(chan outcome, 1)}
	// The timer starts under the lock, so a sheet that is listed has its
	// timer running (tests advance a fake clock once they see the sheet).
	timeout := q.clock.After(q.timeout)
	q.pending = append(q.pending, p)
	q.notify()
	q.mu.Unlock()

	select {
	case o := <-p.done:
		return o.grantID, o.err
	case <-timeout:
		q.mu.Lock()
		if q.remove(p) {
			why := fmt.Sprintf("nobody answered its sheet within %s", q.timeout)
			until := q.refuse(key, why)
			q.mu.Unlock()
			return "", &Refusal{Reason: fmt.Sprintf("refused: nobody answered the permission sheet within %s "+
				"(a sheet times out before agents' own tool-call timeouts, such as Codex's 60 s); "+
				"%s is turned away until %s: do not ask again before then", q.timeout, who(r), clockTime(until))}
		}
		q.mu.Unlock()
		o := <-p.done // settled just before the timer fired
		return o.grantID, o.err
	case <-ctx.Done():
		q.mu.Lock()
		removed := q.remove(p)
		q.mu.Unlock()
		if !removed {
			o := <-p.done
			return o.grantID, o.err
		}
		return "", ctx.Err()
	}
}

// Deny refuses sheet id; its caller is turned away, and its other waiting
// sheets are refused with it.
func (q *Queue) Deny(id string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	p, err := q.find(id)
	if err != nil {
		return err
	}
	q.remove(p)
	until := q.refuse(callerKey(p.Request), "denied")
	p.done <- outcome{err: &Refusal{Reason: fmt.Sprintf("refused: the human denied %s %s; %s is turned away until %s: do not ask again before then",
		p.Need.Tool, p.Need.Subject, who(p.Request), clockTime(until))}}
	return nil
}

// Allow allows sheet id with the grant that grant makes. grant runs while
// the sheet is held, so the sheet cannot be withdrawn or time out half-way;
// if it fails the sheet stays up.
func (q *Queue) Allow(id string, grant func(Sheet) (grantID string, err error)) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	p, err := q.find(id)
	if err != nil {
		return err
	}
	gid, err := grant(p.Sheet)
	if err != nil {
		return err
	}
	q.remove(p)
	p.done <- outcome{grantID: gid}
	return nil
}

// Settle allows every waiting sheet that covered says a grant now covers
// (after the human gave a grant wide enough for several).
func (q *Queue) Settle(covered func(Sheet) (grantID string, ok bool)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range slices.Clone(q.pending) {
		if gid, ok := covered(p.Sheet); ok {
			q.remove(p)
			p.done <- outcome{grantID: gid}
		}
	}
}

// Withdraw refuses every waiting sheet of a closed connection.
func (q *Queue) Withdraw(conn string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range slices.Clone(q.pending) {
		if p.ConnectionID == conn {
			q.remove(p)
			p.done <- outcome{err: &Refusal{Reason: "withdrawn: the connection closed before the human answered"}}
		}
	}
	delete(q.away, "connection "+conn)
}

// Close refuses every waiting sheet and every later one (shutdown).
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, p := range slices.Clone(q.pending) {
		q.remove(p)
		p.done <- outcome{err: &Refusal{Reason: "withdrawn: authz is shutting down"}}
	}
}

// List returns the waiting sheets, the one on screen first.
func (q *Queue) List() []Sheet {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Sheet, len(q.pending))
	for i, p := range q.pending {
		out[i] = p.Sheet
	}
	return out
}

// Changed returns a channel closed at the next change of the queue. Take
// it before List so that no change is missed.
func (q *Queue) Changed() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// find returns the waiting sheet id. Called with q.mu held.
func (q *Queue) find(id string) (*pending, error) {
	for _, p := range q.pending {
		if p.ID == id {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no sheet %q is waiting (answered, withdrawn or timed out): %w", id, errdefs.ErrNotFound)
}

// remove takes p off the queue, reporting whether it was there. Called
// with q.mu held.
func (q *Queue) remove(p *pending) bool {
	i := slices.Index(q.pending, p)
	if i < 0 {
		return false
	}
	q.pending = slices.Delete(q.pending, i, i+1)
	q.notify()
	return true
}

// refuse turns caller key away and refuses its other waiting sheets.
// Called with q.mu held.
func (q *Queue) refuse(key, why string) time.Time {
	now := q.clock.Now()
	until := now.Add(q.turnAway)
	q.away[key] = turnAway{until: until, why: why}
	for k, ta := range q.away { // forget turn-aways that are over
		if !now.Before(ta.until) {
			delete(q.away, k)
		}
	}
	for _, p := range slices.Clone(q.pending) {
		if callerKey(p.Request) == key {
			q.remove(p)
			p.done <- outcome{err: &Refusal{Reason: fmt.Sprintf("refused without asking: the human refused %s's last request (%s); it may ask again at %s",
				who(p.Request), why, clockTime(until))}}
		}
	}
	return until
}

// notify wakes the watchers. Called with q.mu held.
func (q *Queue) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// callerKey is who a turn-away applies to: the caller's tab, or its
// connection when it runs outside any tab.
func callerKey(r Request) string {
	if r.TabID != "" {
		return "tab " + r.TabID
	}
	return "connection " + r.ConnectionID
}

// who names the caller in a refusal.
func who(r Request) string {
	if r.TabID != "" {
		return "tab " + r.TabID
	}
	return "this connection"
}

func clockTime(t time.Time) string { return t.Format("15:04:05") }
