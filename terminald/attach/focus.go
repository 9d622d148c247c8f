package attach

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// An agent never moves the keys of a human who is typing. When an agent
// brings a tab forward (focus_terminal), each attached client of the
// tab's window decides for itself, in its session loop, between its own
// keystrokes (decideFocus): a quiet client switches at once; a client in
// use keeps its tab and shows a notice on its status line naming the
// agent and the tab, which the human accepts with prefix f or ignores.
// The window's focused tab changes only when every client switched, so
// that a client that kept its tab is not dragged along by the window's
// focus afterwards. A human's own focus (the CLI outside Phantom, prefix
// keys) moves every client of the window at once, as before.

// QuietTime is how long a client must have sent no byte before an agent
// may switch its tab. People type a line in bursts whose gaps are well
// under a second (a few hundred milliseconds between keys, about a second
// at a pause for thought); two seconds without a key means the hands are
// off the keyboard, while an agent that brings a tab forward at the end
// of its work still moves a human who is only watching. A half-typed
// command line keeps the client from switching however long the pause
// (workspace.LineTyped). Erring long costs the human one key (accepting
// the notice); erring short runs the rest of their line in another tab.
const QuietTime = 2 * time.Second

// focusNoticeTime is how long a focus notice stays on the status line
// unless the human accepts it first.
const focusNoticeTime = 30 * time.Second

// askTimeout bounds the wait for one client's decision: a session blocked
// on a slow client is counted as in use, and shows the notice when it
// gets to it.
const askTimeout = time.Second

// FocusRequest is an agent's request to bring a tab forward.
type FocusRequest struct {
	// Tab is the tab to bring forward.
	Tab string
	// Client and FromTab name the agent on the notice: its client name
	// ("" when unknown) and its tab ("" outside tabs).
	Client, FromTab string
}

// FocusOutcome is what a focus request did.
type FocusOutcome int

const (
	// FocusMoved: every attached client of the window shows the tab, and
	// it is the window's focused tab.
	FocusMoved FocusOutcome = iota + 1
	// FocusNotice: at least one attached client was in use and shows a
	// notice instead; the window's focused tab did not change.
	FocusNotice
	// FocusNoClient: nobody is attached to the window; its focused tab
	// is set.
	FocusNoClient
)

// FocusResult is what a focus request did.
type FocusResult struct {
	Outcome FocusOutcome
	// Moved and Noticed count the attached clients that switched and
	// those that show a notice.
	Moved, Noticed int
	// Why says, per client that shows a notice, why it was in use.
	Why []string
	// Terminal is the tab after the request.
	Terminal workspace.Terminal
}

// Focuses hands agents' focus requests to the attached sessions. One per
// terminald; sessions join it through Options.Focus.
type Focuses struct {
	now func() time.Time
	// sem lets one request through at a time: a session holds at most one
	// request, and an agent calling in a loop waits for its own turn.
	sem chan struct{}

	mu      sync.Mutex
	inboxes map[*focusInbox]struct{}
}

// NewFocuses returns an empty set of sessions.
func NewFocuses() *Focuses { return newFocuses(time.Now) }

func newFocuses(now func() time.Time) *Focuses {
	return &Focuses{now: now, sem: make(chan struct{}, 1), inboxes: map[*focusInbox]struct{}{}}
}

// Attached counts the sessions attached to window win.
func (f *Focuses) Attached(win string) int {
	return len(f.sessionsOf(win))
}

func (f *Focuses) sessionsOf(win string) []*focusInbox {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*focusInbox
	for in := range f.inboxes {
		if in.win == win {
			out = append(out, in)
		}
	}
	return out
}

// join adds a session's inbox; the returned function takes it out, and
// answers a request left in it: the client is gone.
func (f *Focuses) join(in *focusInbox) func() {
	f.mu.Lock()
	f.inboxes[in] = struct{}{}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.inboxes, in)
		f.mu.Unlock()
		if a := in.take(); a != nil && a.claim() {
			a.reply <- focusDecision{gone: true}
		}
	}
}

// Request brings r.Tab forward for an agent: each attached client of its
// window decides whether it switches or shows a notice; with nobody
// attached, the window's focused tab is set.
func (f *Focuses) Request(ctx context.Context, ws *workspace.Workspace, r FocusRequest) (FocusResult, error) {
	t, err := ws.Get(r.Tab)
	if err != nil {
		return FocusResult{}, err
	}
	select {
	case f.sem <- struct{}{}:
		defer func() { <-f.sem }()
	case <-ctx.Done():
		return FocusResult{}, fmt.Errorf("focus tab %s: %w", r.Tab, ctx.Err())
	}
	inboxes := f.sessionsOf(t.WindowID)
	if len(inboxes) == 0 {
		t, err := ws.Focus(r.Tab)
		return FocusResult{Outcome: FocusNoClient, Terminal: t}, err
	}
	asks := make([]*focusAsk, len(inboxes))
	for i, in := range inboxes {
		asks[i] = &focusAsk{req: r, alone: len(inboxes) == 1, reply: make(chan focusDecision, 1)}
		in.put(asks[i])
	}
	res := FocusResult{}
	timer := time.NewTimer(askTimeout)
	defer timer.Stop()
	for _, a := range asks {
		var d focusDecision
		select {
		case d = <-a.reply:
		case <-timer.C:
			d = a.expire("its session did not answer in time")
		case <-ctx.Done():
			d = a.expire("the request was cancelled")
		}
		switch {
		case d.gone:
		case d.move:
			res.Moved++
		default:
			res.Noticed++
			res.Why = append(res.Why, d.why)
		}
	}
	res.Outcome = FocusNotice
	if res.Moved+res.Noticed == 0 {
		// Every client went away meanwhile.
		t, err := ws.Focus(r.Tab)
		return FocusResult{Outcome: FocusNoClient, Terminal: t}, err
	}
	if res.Noticed == 0 {
		res.Outcome = FocusMoved
		if t, err = ws.Focus(r.Tab); err != nil {
			return res, err
		}
	} else if t, err = ws.Get(r.Tab); err != nil {
		return res, err
	}
	res.Terminal = t
	return res, nil
}

// focusInbox is a session's slot for the request it has yet to decide.
type focusInbox struct {
	win  string
	wake chan struct{} // has a value when the slot may hold a request

	mu  sync.Mutex
	ask *focusAsk
}

func newFocusInbox(win string) *focusInbox {
	return &focusInbox{win: win, wake: make(chan struct{}, 1)}
}

// put places a request in the slot, over one left there undecided (whose
// requester gave up on it: the latest replaces the earlier).
func (in *focusInbox) put(a *focusAsk) {
	in.mu.Lock()
	in.ask = a
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// take empties the slot.
func (in *focusInbox) take() *focusAsk {
	in.mu.Lock()
	defer in.mu.Unlock()
	a := in.ask
	in.ask = nil
	return a
}

// focusAsk is one request to one session.
type focusAsk struct {
	req   FocusRequest
	alone bool // the session is the window's only one
	// state is askPending until the session claims the request or the
	// requester gives up on it, whichever comes first.
	state atomic.Int32
	reply chan focusDecision
}

const (
	askPending int32 = iota
	askClaimed
	askExpired
)

// claim reports whether the session decides the request (its requester
// still waits for the answer).
func (a *focusAsk) claim() bool { return a.state.CompareAndSwap(askPending, askClaimed) }

// expire gives up on the answer: a request the session has not claimed
// counts as a notice (the session shows one when it gets to it);
// one it claimed is answered at once.
func (a *focusAsk) expire(why string) focusDecision {
	if a.state.CompareAndSwap(askPending, askExpired) {
		return focusDecision{why: why}
	}
	return <-a.reply
}

// focusDecision is a session's answer.
type focusDecision struct {
	move bool
	gone bool   // the session ended before deciding
	why  string // why it shows a notice instead
}

// focusState is what a session's decision rests on.
type focusState struct {
	now time.Time
	// lastInput is when the client last sent a byte; lastMoved when an
	// agent's request last switched it.
	lastInput, lastMoved time.Time
	// keysBusy says keys do not go to the tab right now (a prompt, box or
	// copy mode is open, the prefix was pressed, a mouse report is cut).
	keysBusy bool
	// lineTyped: the shown tab's shell has a half-typed command line.
	lineTyped bool
	// shown: the client shows the tab, focused, already. inPane: another
	// pane of the client's split shows it.
	shown, inPane bool
	// split: the client shows several panes; alone: it is the window's
	// only client.
	split, alone bool
}

// decideFocus decides whether a client switches to the tab an agent
// brings forward; when it does not, why says why, for the agent.
func decideFocus(st focusState) (move bool, why string) {
	switch {
	case st.shown:
		return true, ""
	case st.keysBusy:
		return false, "the human has a prompt, a box or copy mode open"
	case !st.lastInput.IsZero() && st.now.Sub(st.lastInput) < QuietTime:
		return false, fmt.Sprintf("the human typed less than %v ago", QuietTime)
	case st.lineTyped:
		return false, "the human has a half-typed command line"
	case !st.lastMoved.IsZero() && st.now.Sub(st.lastMoved) < QuietTime:
		return false, fmt.Sprintf("an agent switched this client's tab less than %v ago", QuietTime)
	case st.split && !st.inPane && !st.alone:
		// Showing the tab would put it into the split layout, which the
		// window's other clients share: their panes would change under
		// them.
		return false, "the tab is not in the split layout other clients share"
	}
	return true, ""
}

// focusNotice is an agent's request waiting on the status line.
type focusNotice struct {
	tab, client, fromTab string
	until                time.Time
}

// now is the session's clock: the focus requests' (fake in tests).
func (s *session) now() time.Time {
	if s.o.Focus != nil {
		return s.o.Focus.now()
	}
	return time.Now()
}

// focusWake is the signal of a request in the session's inbox; nil
// without one.
func (s *session) focusWake() <-chan struct{} {
	if s.focusIn == nil {
		return nil
	}
	return s.focusIn.wake
}

// takeFocusAsk decides the request in the session's inbox, if any, and
// carries the decision out: it switches the client's tab, or puts up the
// notice.
func (s *session) takeFocusAsk() error {
	if s.focusIn == nil {
		return nil
	}
	a := s.focusIn.take()
	if a == nil {
		return nil
	}
	now := s.now()
	move, why := decideFocus(s.focusState(a, now))
	if !a.claim() {
		move = false // the requester counted a notice
	}
	if move {
		if a.req.Tab != s.tabID {
			if err := s.show(a.req.Tab); err != nil {
				a.reply <- focusDecision{why: err.Error()}
				return err
			}
			s.diverged, s.lastMoved = a.req.Tab, now
		}
		if s.notice != nil && s.notice.tab == a.req.Tab {
			s.notice = nil
		}
	} else {
		s.notice = &focusNotice{tab: a.req.Tab, client: a.req.Client, fromTab: a.req.FromTab, until: now.Add(focusNoticeTime)}
	}
	s.needFrame, s.statusStale = true, true
	a.reply <- focusDecision{move: move, why: why}
	return nil
}

// focusState is what the session knows for a decision on request a.
func (s *session) focusState(a *focusAsk, now time.Time) focusState {
	st := focusState{now: now, lastInput: s.lastInput, lastMoved: s.lastMoved, keysBusy: !s.typing() || s.drag != (dragState{}),
		shown: s.tabID == a.req.Tab, alone: a.alone}
	if s.root != nil && s.root.pane == nil {
		st.split = true
		for _, l := range s.root.leaves(nil) {
			if l.pane.tabID == a.req.Tab {
				st.inPane = true
			}
		}
	}
	if !st.shown && s.tabID != "" && s.typedTab == s.tabID {
		// A half-typed line this client's human may have typed: one
		// another client typed into the same tab holds only that one.
		st.lineTyped = s.ws.LineTyped(s.tabID)
	}
	return st
}

// acceptFocus shows the tab the focus notice names (prefix f).
func (s *session) acceptFocus() {
	n := s.notice
	if n == nil {
		s.setMessage("no agent asked to show a tab")
		return
	}
	s.notice = nil
	s.focus(n.tab)
}

// noticeTick drops the notice when its time is up, its tab closed or the
// client shows its tab anyway, and returns how long until it is up.
func (s *session) noticeTick(now time.Time) time.Duration {
	n := s.notice
	if n == nil {
		return time.Hour
	}
	_, open := s.tabIndex(n.tab)
	if !now.Before(n.until) || !open || n.tab == s.tabID {
		s.notice = nil
		s.needFrame, s.statusStale = true, true
		return time.Hour
	}
	return n.until.Sub(now)
}

// tabIndex is tab id's index in the window's tabs as last listed.
func (s *session) tabIndex(id string) (int, bool) {
	for i, t := range s.tabs {
		if t.ID == id {
			return i, true
		}
	}
	return -1, false
}

// noticeText is the notice as the status line shows it: who asks (its
// client name as it gave it, cut short, and its tab), which tab, and the
// key that shows it.
func (s *session) noticeText() string {
	n := s.notice
	if n == nil {
		return ""
	}
	who := sanitize(n.client)
	if r := []rune(who); len(r) > maxTitle {
		who = string(r[:maxTitle-1]) + "…"
	}
	if who == "" {
		who = "an agent"
	}
	if n.fromTab != "" {
		who += " in " + n.fromTab
	}
	key := "(unbound)"
	if keys := s.settings().Bindings.KeysOf("accept-focus"); len(keys) > 0 {
		key = "prefix " + keys[0]
	}
	return fmt.Sprintf("%s asks to show %s: %s", who, s.tabLabel(n.tab), key)
}
