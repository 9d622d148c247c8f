// Package sheets queues the permission sheets that ask the human.
//
// Fairness: a caller (see [Request.CallerKey]) has at most one sheet in the
// queue the human sees. Its further requests wait in its own short backlog,
// and when its sheet goes (answered, timed out, withdrawn) the next one joins
// the back of the queue. So the sheets of the callers take turns, and a
// flood from one tab never delays another tab's sheet.
//
// Turn-aways: an agent that asks in a loop must not train the human to click
// Allow, so a caller the human denied is turned away for a while without a
// new sheet, and its backlog is refused with it. A sheet nobody answered is
// not a human refusal: it refuses that one call only, before the agents' own
// tool-call timeouts give up on it (Codex waits 60 s). A sheet whose
// connection closed is withdrawn; that lifts no turn-away.
//
// Withdrawals: a caller that gives up on its sheets before the human
// answers — it cancels the call, or closes its connection — and does so
// [Options.Withdrawals] times within [Options.WithdrawWindow] is turned
// away as if the human had denied it, its backlog with it. A loop that
// raises a sheet and cancels it would otherwise flash sheet after sheet
// at the human, and fill the audit log, without ever waiting for an
// answer. Requests cancelled in the backlog, which the human never saw,
// do not count.
//
// Memory is bounded: at most [Options.Backlog] requests wait behind a
// caller's sheet, at most [Options.MaxWaiting] wait in all, and turn-aways
// and withdrawals that are over are forgotten.
package sheets

import (
	"context"
	"fmt"
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
	// DefaultTurnAway is how long a denied caller (or one that withdrew
	// its sheets in a loop) is turned away.
	DefaultTurnAway = 60 * time.Second
	// DefaultBacklog is how many requests of one caller may wait behind its
	// sheet.
	DefaultBacklog = 8
	// DefaultMaxWaiting is how many requests may wait in all, sheets and
	// backlogs together.
	DefaultMaxWaiting = 1024
	// DefaultWithdrawals is how many sheets a caller may withdraw within
	// DefaultWithdrawWindow before it is turned away. An agent the human
	// interrupts withdraws one; three in a minute is a loop.
	DefaultWithdrawals = 3
	// DefaultWithdrawWindow is the window DefaultWithdrawals counts in.
	DefaultWithdrawWindow = time.Minute
)

// Request is what a sheet asks about.
type Request struct {
	Client string
	// Program is the program that asks, as the process tree shows it
	// (policy.Caller.Program).
	Program      string
	ConnectionID string
	// TabID is the caller's tab; empty when it runs in none.
	TabID    string
	TabTitle string
	// InsideWithoutTab is true when the caller runs inside Phantom but in
	// no tab (it left its tab's process tree). All such callers share one
	// caller key, so leaving the tab escapes neither a turn-away nor the
	// one-sheet rule.
	InsideWithoutTab bool
	PID              int32
	Need             policy.Need
}

// CallerKey is who the one-sheet rule and a turn-away apply to: the
// caller's tab; one key shared by every process inside Phantom but in no
// tab; or, outside Phantom, the client name (not the connection, so that
// reconnecting escapes nothing).
func (r Request) CallerKey() string {
	switch {
	case r.TabID != "" && !r.InsideWithoutTab:
		return "tab " + r.TabID
	case r.InsideWithoutTab:
		return "inside without a tab"
	}
	return "client " + r.Client
}

// who names the caller key in a refusal, as the subject of a sentence.
func (r Request) who() string {
	switch {
	case r.TabID != "" && !r.InsideWithoutTab:
		return "tab " + r.TabID
	case r.InsideWithoutTab:
		return "any caller inside Phantom but in no tab"
	}
	return fmt.Sprintf("client %q (outside Phantom)", r.Client)
}

// Sheet is a request on the queue the human sees.
type Sheet struct {
	// ID names the sheet in an answer; it is given when the request
	// becomes a sheet, so ids count up in the order sheets show.
	ID string
	Request
	// Asked is when the call arrived; Deadline when it times out (the
	// call's own deadline: time spent in the backlog counts).
	Asked, Deadline time.Time
}

// RefusalKind says why a call was refused, for the audit log.
type RefusalKind int

// The kinds of Refusal.
const (
	// Denied: the human denied the call's sheet.
	Denied RefusalKind = iota + 1
	// TurnedAway: refused without a sheet: the caller is turned away
	// after a denial or after withdrawing sheets in a loop, or has (or
	// all callers have) too many requests waiting.
	TurnedAway
	// TimedOut: nobody answered the sheet in time.
	TimedOut
	// Withdrawn: the connection closed, or authz is shutting down.
	Withdrawn
)

// String names the kind as the audit log does.
func (k RefusalKind) String() string {
	switch k {
	case Denied:
		return "denied"
	case TurnedAway:
		return "turned_away"
	case TimedOut:
		return "timed_out"
	case Withdrawn:
		return "withdrawn"
	}
	return "refused"
}

// Refusal is a call refused without a grant; its message is the reason
// given to the agent. It is of kind errdefs.ErrPermissionDenied.
type Refusal struct {
	Reason string
	Kind   RefusalKind
	// SheetID is the call's sheet; empty when it never became one.
	SheetID string
}

func (r *Refusal) Error() string { return r.Reason }

// Unwrap gives the refusal its kind.
func (r *Refusal) Unwrap() error { return errdefs.ErrPermissionDenied }

// Options configure a Queue; zero values take the defaults.
type Options struct {
	Clock      Clock
	Timeout    time.Duration
	TurnAway   time.Duration
	Backlog    int
	MaxWaiting int
	// Withdrawals and WithdrawWindow: a caller that withdraws this many
	// sheets within the window is turned away (see the package doc).
	Withdrawals    int
	WithdrawWindow time.Duration
}

// Queue holds the sheets and backlogs. Its methods are safe for concurrent
// use.
type Queue struct {
	clock          Clock
	timeout        time.Duration
	turnAway       time.Duration
	backlogCap     int
	maxWaiting     int
	withdrawals    int
	withdrawWindow time.Duration
	raised         func(Sheet)

	mu       sync.Mutex
	seq      int
	shown    []*pending             // the sheets, FIFO, one per caller key; shown[0] is on screen
	sheetOf  map[string]*pending    // caller key → its sheet
	backlog  map[string][]*pending  // caller key → requests behind its sheet, FIFO; never empty
	waiting  int                    // sheets and backlog requests
	away     map[string]turnAway    // caller key → until when
	withdrew map[string][]time.Time // caller key → when it withdrew its sheets, within the window
	changed  chan struct{}          // closed and replaced on every change of the sheets
	closed   bool
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
	if o.Backlog <= 0 {
		o.Backlog = DefaultBacklog
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = DefaultMaxWaiting
	}
	if o.Withdrawals <= 0 {
		o.Withdrawals = DefaultWithdrawals
	}
	if o.WithdrawWindow <= 0 {
		o.WithdrawWindow = DefaultWithdrawWindow
	}
	return &Queue{clock: o.Clock, timeout: o.Timeout, turnAway: o.TurnAway, backlogCap: o.Backlog, maxWaiting: o.MaxWaiting,
		withdrawals: o.Withdrawals, withdrawWindow: o.WithdrawWindow,
		sheetOf: map[string]*pending{}, backlog: map[string][]*pending{}, away: map[string]turnAway{},
		withdrew: map[string][]time.Time{}, changed: make(chan struct{})}
}

// OnRaised sets the function told of every request that becomes a sheet
// (for the audit log). It is called with the queue locked: it must not
// block or call the queue.
func (q *Queue) OnRaised(fn func(Sheet)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.raised = fn
}

// Now is the queue's clock.
func (q *Queue) Now() time.Time { return q.clock.Now() }

// Clock is the clock the queue runs on (for timers that must move with
// it in tests).
func (q *Queue) Clock() Clock { return q.clock }

// Ask puts r on the queue and waits for the human. It returns the id of
// the grant that allowed it, or a *Refusal: the caller is turned away or
// has too many requests waiting, the human denied, nobody answered in
// time, or the connection closed. When ctx ends first it returns an error
// that is ctx.Err() (errors.Is), which says so when the caller is turned
// away for withdrawing its sheets.
func (q *Queue) Ask(ctx context.Context, r Request) (grantID string, err error) {
	grantID, _, err = q.AskSheet(ctx, r)
	return grantID, err
}

// AskSheet is Ask, also returning the id of the sheet the request became
// (empty when it never became one: refused at once, or allowed from its
// caller's backlog by a grant given for another sheet).
func (q *Queue) AskSheet(ctx context.Context, r Request) (grantID, sheetID string, err error) {
	q.mu.Lock()
	p, err := q.enqueue(r)
	if err != nil {
		q.mu.Unlock()
		return "", "", err
	}
	// The timer starts under the lock, so a listed sheet has its timer
	// running (tests advance a fake clock once they see the sheet).
	timeout := q.clock.After(q.timeout)
	q.mu.Unlock()

	select {
	case o := <-p.done:
		return o.grantID, o.sheetID, o.err
	case <-timeout:
		q.mu.Lock()
		q.finish(p, outcome{err: &Refusal{Reason: q.timedOut(), Kind: TimedOut, SheetID: p.ID}})
		q.mu.Unlock()
	case <-ctx.Done():
		q.mu.Lock()
		err := ctx.Err()
		if note := q.withdrawn(p); note != "" {
			err = fmt.Errorf("%w; %s", err, note)
		}
		q.finish(p, outcome{err: err})
		q.mu.Unlock()
	}
	// Finished now, by the line above or, just before, by an answer.
	o := <-p.done
	return o.grantID, o.sheetID, o.err
}

// Deny refuses sheet id. Its caller is turned away, and the requests in
// its backlog are refused with it.
func (q *Queue) Deny(id string) error {
	return q.DenySheet(id, nil)
}

// DenySheet is Deny, telling denied (when set) of the sheet while it is
// held, before its call hears the refusal: the audit log records the
// answer before the refusal it causes. denied must not block or call the
// queue.
func (q *Queue) DenySheet(id string, denied func(Sheet)) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	p, err := q.find(id)
	if err != nil {
		return err
	}
	if denied != nil {
		denied(p.Sheet)
	}
	until := q.turnAwayKey(p.key, turnAway{denied: q.clock.Now()})
	// The backlog first, so that none of it becomes a sheet meanwhile.
	for _, b := range q.backlogOf(p.key) {
		q.finish(b, outcome{err: &Refusal{Reason: deniedEarlier(b.Request, until), Kind: TurnedAway}})
	}
	q.finish(p, outcome{err: &Refusal{Reason: deniedReason(p, until), Kind: Denied, SheetID: p.ID}})
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
	q.finish(p, outcome{grantID: gid})
	return nil
}

// Settle allows every waiting request, sheet or backlog, that covered says
// a grant now covers (after the human gave a grant wide enough for
// several).
func (q *Queue) Settle(covered func(Sheet) (grantID string, ok bool)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range q.all() {
		if gid, ok := covered(p.Sheet); ok {
			q.finish(p, outcome{grantID: gid})
		}
	}
}

// Withdraw refuses every waiting request of a closed connection. It lifts
// no turn-away: a caller that reconnects is still turned away. Its sheets
// count as withdrawn by their caller (see the package doc).
func (q *Queue) Withdraw(conn string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range q.all() {
		if p.ConnectionID == conn {
			reason := "withdrawn: the connection closed before the human answered"
			if note := q.withdrawn(p); note != "" {
				reason += "; " + note
			}
			q.finish(p, outcome{err: &Refusal{Reason: reason, Kind: Withdrawn, SheetID: p.ID}})
		}
	}
}

// Close refuses every waiting request and every later one (shutdown).
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, p := range q.all() {
		q.finish(p, outcome{err: &Refusal{Reason: "withdrawn: authz is shutting down", Kind: Withdrawn, SheetID: p.ID}})
	}
}

// List returns the sheets, the one on screen first. Requests in a
// caller's backlog are not sheets yet; Counts counts them.
func (q *Queue) List() []Sheet {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Sheet, len(q.shown))
	for i, p := range q.shown {
		out[i] = p.Sheet
	}
	return out
}

// Counts returns how many sheets there are and how many requests wait in
// the callers' backlogs behind them.
func (q *Queue) Counts() (sheets, backlog int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.shown), q.waiting - len(q.shown)
}

// Changed returns a channel closed at the next change of the sheets. Take
// it before List so that no change is missed.
func (q *Queue) Changed() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}
