package attach

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
)

// Attention: what calls the human (config.json's "attention").
//
//   - A tab's bell (a BEL its program wrote; workspace.WatchBells) rings
//     the client's terminal, and marks the tab on the status line (markBell)
//     while the client does not show it, as tmux's bell-action any does.
//     Each session handles its own window's bells.
//   - A new permission sheet, an agent that waits for input and an agent
//     that finished are found once, for all clients, by an Attention
//     (below), which terminald runs: it rings every attached client (a BEL
//     and a notification escape) and, when desktop notifications are on,
//     sends the event to the freedesktop notification service (Notifier).
//
// A notification escape leaves terminald as OSC 777 (ESC ] 777 ; notify ;
// title ; body BEL); the attach client passes it on in the form its
// terminal announced (OSC 9 or OSC 777) and drops it where the terminal
// announced neither (cmd/phantom/attach_notify.go). Its text is sanitized
// here: tab titles and agent names are the agents'.

// Rate limits of what a session sends its client: a flood of bells (one
// tab's program writing BELs in a loop, or many tabs at once) rings the
// terminal at most once per ringGap. Calls (a sheet, an agent waiting or
// finished) are rare and each says something else — an agent waiting and
// then finishing come milliseconds apart — so a burst of callBurst passes,
// and a flood (an agent that opens and ends tabs in a loop) gets one a
// callEvery.
const (
	ringGap   = 500 * time.Millisecond
	callBurst = 5
	callEvery = 2 * time.Second
)

// WaitingSettle is how long an agent must stay idle — no call in progress
// and no output in its tab — after a call before it counts as waiting for
// input: agents call tools in bursts, with their spinner drawing between
// them.
const WaitingSettle = 3 * time.Second

// CallKind is what calls the human.
type CallKind int

// The calls.
const (
	CallSheet    CallKind = iota + 1 // a new permission sheet is on screen
	CallWaiting                      // an agent waits for input
	CallFinished                     // an agent finished (its program exited)
)

// Call is one event that calls the human.
type Call struct {
	Kind CallKind
	// TabID is the tab it is about ("" for a caller outside tabs).
	TabID string
	// Title and Body are the notification's text, sanitized.
	Title, Body string
	// Ring is how it reaches the clients, as config.json said when it
	// happened.
	Ring config.Ring
}

// ringFor is how kind rings under a.
func ringFor(kind CallKind, a config.Attention) config.Ring {
	switch kind {
	case CallSheet:
		return a.SheetRing()
	case CallWaiting:
		return a.WaitingRing()
	case CallFinished:
		return a.FinishedRing()
	}
	return config.Ring{}
}

// limiter passes at most one event per gap (the leading one).
type limiter struct {
	last time.Time
}

// allow reports whether an event at now passes.
func (l *limiter) allow(now time.Time, gap time.Duration) bool {
	if !l.last.IsZero() && now.Sub(l.last) >= 0 && now.Sub(l.last) < gap {
		return false
	}
	l.last = now
	return true
}

// bucket passes bursts of up to burst events, then one per every.
type bucket struct {
	tokens float64
	last   time.Time
}

// allow reports whether an event at now passes.
func (b *bucket) allow(now time.Time, burst int, every time.Duration) bool {
	if b.last.IsZero() {
		b.tokens = float64(burst)
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.tokens+float64(d)/float64(every), float64(burst))
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Notification text bounds: a notification is a line, not the sheet.
const (
	maxNotifyTitle = 64
	maxNotifyBody  = 200
)

// maxNotifyName bounds an agent's name and a tab's title inside a
// notification's text. Unbounded, they pushed what happened (" waits for
// input", and on a sheet's what it asks for) past the cut above: an agent
// naming itself "claude asks permission to…" made its own words read as
// Phantom's.
const maxNotifyName = 32

// notifyName is agent-controlled text (a name, a title) made short enough
// that the text around it survives notifyText's cut.
func notifyName(s string) string { return notifyText(s, maxNotifyName, false) }

// notifyText makes agent-controlled text safe inside a notification
// escape: printable only (sanitize), on one line, cut to max runes, and —
// for the title, which OSC 777 ends with a ';' — without ';'.
func notifyText(s string, max int, title bool) string {
	s = strings.Join(strings.Fields(sanitize(s)), " ")
	if title {
		s = strings.ReplaceAll(s, ";", ",")
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// OSC777 is the notification escape terminald sends its clients, title
// and body made safe.
func OSC777(title, body string) []byte {
	return []byte("\x1b]777;notify;" + notifyText(title, maxNotifyTitle, true) + ";" + notifyText(body, maxNotifyBody, false) + "\a")
}

// attention is a session's part: its bell marks and rate limits.
type attention struct {
	marks map[string]bool // tabs of the window that rang while not shown
	ring  limiter         // tabs' bells
	call  bucket          // calls
}

// watchAttention subscribes the session to its window's bells and to the
// Attention's calls (nil channels without one).
func (s *session) watchAttention() (bells <-chan string, calls <-chan Call, stop func()) {
	bells, stopBells := s.ws.WatchBells()
	if s.o.Attention == nil {
		return bells, nil, stopBells
	}
	calls, stopCalls := s.o.Attention.subscribe()
	return bells, calls, func() { stopBells(); stopCalls() }
}

// shownTab reports whether a pane of the session shows tab id.
func (s *session) shownTab(id string) bool {
	for _, l := range s.root.leaves(nil) {
		if l.pane.tabID == id {
			return true
		}
	}
	return false
}

// bellRang handles tab id's bell: a tab of this window rings the client,
// and is marked while not shown.
func (s *session) bellRang(id string) error {
	if !s.ws.Config().Attention.BellOn() {
		return nil
	}
	ours := false
	for _, t := range s.tabs {
		ours = ours || t.ID == id
	}
	if !ours {
		return nil // another window's: its clients ring
	}
	if !s.shownTab(id) {
		if s.att.marks == nil {
			s.att.marks = map[string]bool{}
		}
		s.att.marks[id] = true
		s.needFrame = true
	}
	if !s.att.ring.allow(time.Now(), ringGap) {
		return nil
	}
	return s.sendRing([]byte{'\a'})
}

// called rings the client for an Attention's call: a BEL, a notification
// (when the call carries its text), or both.
func (s *session) called(c Call) error {
	now := time.Now()
	if !s.att.call.allow(now, callBurst, callEvery) {
		return nil
	}
	var b []byte
	if c.Ring.Bell {
		b = append(b, '\a')
		s.att.ring.last = now // a tab's bell right after it adds nothing
	}
	if c.Title != "" {
		b = append(b, OSC777(c.Title, c.Body)...)
	}
	return s.sendRing(b)
}

// sendRing sends b, a BEL or notification, to the client between frames.
func (s *session) sendRing(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := s.send(b); err != nil {
		return fmt.Errorf("send a bell to the client: %w", err)
	}
	return nil
}

// bellMarks returns the tabs to mark, first clearing those shown now and
// those closed.
func (s *session) bellMarks() map[string]bool {
	for id := range s.att.marks {
		closed := true
		for _, t := range s.tabs {
			closed = closed && t.ID != id
		}
		if closed || s.shownTab(id) {
			delete(s.att.marks, id)
		}
	}
	if len(s.att.marks) == 0 {
		return nil
	}
	// The status line draws an entry as its focused pane's tab: a bell in
	// any pane of the entry marks it.
	out := map[string]bool{}
	for _, e := range s.entries {
		rang := false
		for _, id := range e.Tabs() {
			rang = rang || s.att.marks[id]
		}
		if rang {
			id := e.Focused
			if slices.Contains(e.Tabs(), s.tabID) {
				id = s.tabID // as entryTabs shows it
			}
			out[id] = true
		}
	}
	return out
}
