package attach

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Scope is how far a permission reaches, narrow to wide.
type Scope int

// Scopes, narrow to wide.
const (
	ScopeTab Scope = iota + 1
	ScopeGroup
	ScopeAll
)

func (s Scope) String() string {
	switch s {
	case ScopeTab:
		return "tab"
	case ScopeGroup:
		return "group"
	case ScopeAll:
		return "all"
	}
	return "?"
}

// Decision is the human's answer to a sheet.
type Decision int

// Decisions.
const (
	DecisionDeny Decision = iota + 1
	DecisionOnce
	DecisionAlways
)

func (d Decision) String() string {
	switch d {
	case DecisionDeny:
		return "denied"
	case DecisionOnce:
		return "allowed once"
	case DecisionAlways:
		return "allowed always"
	}
	return "?"
}

// Sheet is a permission question to the human, as attach shows it. Every
// text field comes from an agent's request and is sanitized when drawn.
type Sheet struct {
	// ID identifies the sheet for the answer.
	ID string
	// Client is the agent's client name, e.g. "claude".
	Client string
	// TabID and TabTitle are the caller's tab; TabID is empty outside tabs.
	TabID, TabTitle string
	// LeftTab is true when the caller runs inside Phantom but left its
	// tab's process tree (it double-forked): shown as such.
	LeftTab bool
	// Capability is what the call needs: "read", "run", ...
	Capability string
	// Reach is how far the call reaches; an answer grants at least this.
	Reach Scope
	// Tool is the MCP tool, e.g. "read_output".
	Tool string
	// Subject is the decisive argument in words: the command to be typed,
	// the tab to be read.
	Subject string
	// Project is what an "always" grant would be keyed by.
	Project string
	// Program is the program that asks as the process tree shows it; an
	// "always" grant is for it, not for the client name.
	Program string
	// Deadline is when the sheet times out as a refusal; zero if unknown.
	Deadline time.Time
	// WaitingBehind is how many more sheets wait after this one.
	WaitingBehind int
}

// Sheets is where permission sheets come from and where answers go.
type Sheets interface {
	// Current returns the sheet on screen (nil when none waits) and how
	// many sheets wait in all.
	Current() (*Sheet, int)
	// Changed returns a channel that is closed at the next change of
	// what Current returns. Take it before calling Current.
	Changed() <-chan struct{}
	// Answer answers sheet id; scope is ignored for a denial.
	Answer(ctx context.Context, id string, d Decision, scope Scope) error
}

// Alerter is implemented by Sheets that know of a problem the human must
// see even when no sheet waits: authz refusing its grants file, so that
// every call that needs a grant is refused. Alert returns it, or "".
// Changed covers its changes too.
type Alerter interface {
	Alert() string
}

// alert is the Sheets' alert, if they have one.
func (s *session) alert() string {
	if a, ok := s.o.Sheets.(Alerter); ok {
		return a.Alert()
	}
	return ""
}

// clientPIDKey carries Options.ClientPID to Sheets.Answer.
type clientPIDKey struct{}

// ClientPID is, in Sheets.Answer, the process of the attach client whose
// human gave the answer (0 when unknown): authz's audit log records it.
func ClientPID(ctx context.Context) int {
	pid, _ := ctx.Value(clientPIDKey{}).(int)
	return pid
}

// answerTimeout bounds one answer's round trip to authz.
const answerTimeout = 10 * time.Second

// answerResult is how an answer sent in the background came back.
type answerResult struct {
	id    string
	d     Decision
	scope Scope
	err   error
}

// openSheet opens the box for the waiting sheet (prefix+s).
func (s *session) openSheet() {
	cur, _ := s.currentSheet()
	if cur == nil {
		if a := s.alert(); a != "" {
			// The file's name, not its path, so that the reason fits.
			if i := strings.Index(a, "grants.json "); i >= 0 {
				a = a[i:]
			}
			s.setMessage("refused: " + sanitize(a) + " (phantom status)")
			return
		}
		s.setMessage("no permission sheet waiting")
		return
	}
	s.mode, s.sheet, s.scope = modeSheet, cur, max(cur.Reach, ScopeTab)
	s.boxCache = nil // a box that opens arms its keys anew
	s.needFull = true
}

// currentSheet is the sheet on screen, if any.
func (s *session) currentSheet() (*Sheet, int) {
	if s.o.Sheets == nil {
		return nil, 0
	}
	return s.o.Sheets.Current()
}

// closeSheet closes the box without answering and redraws the tab.
func (s *session) closeSheet(msg string) {
	if s.mode != modeSheet {
		return
	}
	s.mode, s.sheet = modeNormal, nil
	s.needFull = true
	if msg != "" {
		s.setMessage(msg)
	}
}

// syncSheet follows the sheet on screen while the box is open: the next
// one after an answer, a withdrawn or timed-out one closes the box.
func (s *session) syncSheet() {
	if s.mode != modeSheet || s.answering != "" {
		return
	}
	cur, _ := s.currentSheet()
	switch {
	case cur == nil && s.sheet.ID == s.answered:
		s.closeSheet("")
	case cur == nil:
		s.closeSheet("the permission sheet was answered elsewhere, withdrawn or timed out")
	case cur.ID == s.answered:
		// Answered; authz has not moved on yet.
	case cur.ID != s.sheet.ID:
		s.sheet, s.scope = cur, max(cur.Reach, ScopeTab)
	default:
		s.sheet = cur
		s.scope = max(s.scope, cur.Reach)
	}
	s.needFrame = true
}

// armDelay is how long the box shows new content before its answer keys
// work: a key pressed for a sheet that was just withdrawn must not answer
// the one that replaced it.
const armDelay = time.Second

// sheetKeys handles keys while the box is open and returns the bytes left
// over. No key typed here reaches the tab. The answer keys (and the scope
// key) are ignored until the box has shown its content for armDelay, and
// allow is refused while the box cannot show the whole request.
func (s *session) sheetKeys(b []byte) []byte {
	for len(b) > 0 && s.mode == modeSheet {
		n := 1
		busy := s.answering != "" || s.sheet.ID == s.answered
		switch c := b[0]; {
		case c == 0x1b && len(b) == 1, c == 0x03:
			s.closeSheet("")
		case c == 0x1b:
			n = escLen(b) // an arrow or such: ignored
		case c == s.o.Prefix:
			s.prefixed = true
			return b[1:]
		case busy, !s.keysArmed():
		case c == 'd':
			s.answer(DecisionDeny)
		case c == 'o':
			s.allow(DecisionOnce)
		case c == 'a':
			s.allow(DecisionAlways)
		case c == 's' || c == '\t':
			// Wider, then back to the reach: never narrower than it.
			if s.scope++; s.scope > ScopeAll {
				s.scope = max(s.sheet.Reach, ScopeTab)
			}
			s.needFrame = true
		}
		b = b[n:]
	}
	return b
}

// keysArmed reports whether the box on the client shows the sheet in
// s.sheet, at the client's size, with its keys armed: it has shown that
// content for armDelay.
func (s *session) keysArmed() bool {
	b := s.boxCache
	return b != nil && b.armed && sameContent(b.sheet, s.sheet) && b.cols == s.cols && b.rows == s.rows
}

// allow answers with d, unless the box does not show the whole request:
// the human allows only what they could read.
func (s *session) allow(d Decision) {
	if !s.boxCache.complete {
		s.setMessage("allow refused: the box cannot show the whole request")
		return
	}
	s.answer(d)
}

// answer sends the human's answer in the background; the box waits for
// it (keys are ignored meanwhile).
func (s *session) answer(d Decision) {
	id, scope := s.sheet.ID, s.scope
	if d == DecisionOnce {
		scope = s.sheet.Reach // once is the call on the sheet: it has no scope to widen
	}
	s.answering = id
	s.needFrame = true
	s.bg.Go(func() {
		// Not the session's context: an answer given right before a detach
		// still counts.
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		ctx = context.WithValue(ctx, clientPIDKey{}, s.o.ClientPID)
		s.answers <- answerResult{id: id, d: d, scope: scope, err: s.o.Sheets.Answer(ctx, id, d, scope)}
	})
}

// answerDone takes an answer's outcome: on success the box moves on to
// the next sheet (or closes), on failure it stays for another try.
func (s *session) answerDone(r answerResult) {
	s.answering = ""
	if r.err != nil {
		s.setMessage(fmt.Sprintf("answer %s: %v", r.id, r.err))
		s.syncSheet()
		return
	}
	s.answered = r.id
	if r.d == DecisionDeny {
		s.setMessage(fmt.Sprintf("sheet %s %s", r.id, r.d))
	} else {
		s.setMessage(fmt.Sprintf("sheet %s %s (%s)", r.id, r.d, r.scope))
	}
	s.syncSheet()
}

// secondsLeft is what the box shows of the sheet's time left.
func (s *session) secondsLeft(now time.Time) int {
	if s.sheet == nil || s.sheet.Deadline.IsZero() {
		return -1
	}
	return max(int((s.sheet.Deadline.Sub(now)+time.Second-1)/time.Second), 0)
}

// sheetTick redraws the box when its countdown changes or its keys arm,
// and returns how long until either next does.
func (s *session) sheetTick(now time.Time) time.Duration {
	if s.mode != modeSheet || s.sheet == nil {
		return time.Hour
	}
	wait := time.Hour
	switch b := s.boxCache; {
	case b == nil || !sameContent(b.sheet, s.sheet) || b.cols != s.cols || b.rows != s.rows:
		// A new box is about to be drawn: its keys arm armDelay after.
		wait = armDelay + time.Millisecond
	case !b.armed:
		if at := b.since.Add(armDelay); now.Before(at) {
			wait = at.Sub(now) + time.Millisecond
		} else {
			s.needFrame = true
		}
	}
	if s.sheet.Deadline.IsZero() {
		return wait
	}
	if s.secondsLeft(now) != s.shownSecs {
		s.needFrame = true
	}
	rem := s.sheet.Deadline.Sub(now)
	if rem <= 0 {
		return wait
	}
	return min(wait, rem%time.Second+time.Millisecond)
}

// sameContent reports whether a and b ask the same thing in the same
// words; the countdown and the count of sheets behind do not count.
func sameContent(a, b *Sheet) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Deadline, y.Deadline = time.Time{}, time.Time{}
	x.WaitingBehind, y.WaitingBehind = 0, 0
	return x == y
}
