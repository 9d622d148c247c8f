package attach

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
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
		s.setMessage("no permission sheet waiting")
		return
	}
	s.mode, s.sheet, s.scope = modeSheet, cur, max(cur.Reach, ScopeTab)
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

// sheetKeys handles keys while the box is open and returns the bytes left
// over. No key typed here reaches the tab.
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
		case busy:
		case c == 'd':
			s.answer(DecisionDeny)
		case c == 'o':
			s.answer(DecisionOnce)
		case c == 'a':
			s.answer(DecisionAlways)
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

// answer sends the human's answer in the background; the box waits for
// it (keys are ignored meanwhile).
func (s *session) answer(d Decision) {
	id, scope := s.sheet.ID, s.scope
	s.answering = id
	s.needFrame = true
	s.bg.Go(func() {
		// Not the session's context: an answer given right before a detach
		// still counts.
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
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

// sheetTick redraws the box when its countdown changes and returns how
// long until it next does.
func (s *session) sheetTick(now time.Time) time.Duration {
	if s.mode != modeSheet || s.sheet == nil || s.sheet.Deadline.IsZero() {
		return time.Hour
	}
	if s.secondsLeft(now) != s.shownSecs {
		s.needFrame = true
	}
	rem := s.sheet.Deadline.Sub(now)
	if rem <= 0 {
		return time.Hour
	}
	return rem%time.Second + time.Millisecond
}

// sheetBox is the box as rows of cells, placed at x, y of the tab area.
// It is rebuilt only when what it shows changes.
type sheetBox struct {
	key  string
	x, y int
	rows [][]screen.Cell
}

// box returns the sheet box for the current state.
func (s *session) box() *sheetBox {
	sh := s.sheet
	secs := s.secondsLeft(time.Now())
	s.shownSecs = secs
	state := ""
	switch {
	case s.answering != "":
		state = "answering"
	case sh.ID == s.answered:
		state = "answered"
	}
	key := fmt.Sprintf("%p|%d|%d|%s|%d|%d", sh, s.scope, secs, state, s.cols, s.rows)
	if s.boxCache != nil && s.boxCache.key == key {
		return s.boxCache
	}

	const bold, plain, red = "\x1b[0;1m", "\x1b[0m", "\x1b[0;1;91m"
	who := sanitize(sh.Client)
	if sh.TabID != "" {
		who += " in tab " + sanitize(sh.TabID)
		if sh.TabTitle != "" {
			who += " (" + sanitize(sh.TabTitle) + ")"
		}
	} else {
		who += " (outside any tab)"
	}
	lines := []string{
		bold + who + plain + " wants to " + red + strings.ToUpper(sanitize(sh.Capability)),
		plain + "reach: " + bold + sh.Reach.String(),
		plain + sanitize(sh.Tool) + ": " + bold + sanitize(sh.Subject),
	}
	if sh.Project != "" {
		lines = append(lines, plain+"project "+sanitize(sh.Project))
	}
	var tail []string
	if secs >= 0 {
		tail = append(tail, fmt.Sprintf("%d s left", secs))
	}
	if sh.WaitingBehind > 0 {
		tail = append(tail, fmt.Sprintf("%d more waiting", sh.WaitingBehind))
	}
	if len(tail) > 0 {
		lines = append(lines, plain+strings.Join(tail, " — "))
	}
	scopes := plain + "scope:"
	for sc := max(sh.Reach, ScopeTab); sc <= ScopeAll; sc++ {
		if sc == s.scope {
			scopes += " \x1b[0;1;7m " + sc.String() + " " + plain
		} else {
			scopes += "  " + sc.String() + " "
		}
	}
	lines = append(lines, "", scopes)
	switch state {
	case "answering":
		lines = append(lines, plain+"answering…")
	case "answered":
		lines = append(lines, plain+"answered")
	default:
		lines = append(lines, bold+"d"+plain+" deny  "+bold+"o"+plain+" once  "+bold+"a"+plain+
			" always  "+bold+"s"+plain+"/"+bold+"Tab"+plain+" scope  "+bold+"Esc"+plain+" later")
	}

	area := s.rows - 1
	inner := max(min(s.cols-4, 72), 1)
	body := wrapLines(lines, inner, max(area-2, 1))
	b := &sheetBox{key: key, rows: boxRows(body, inner, " permission sheet ")}
	b.x, b.y = max((s.cols-(inner+4))/2, 0), max((area-len(b.rows))/2, 0)
	s.boxCache = b
	return b
}

// wrapLines lays lines (text with SGR sequences) out width cells wide,
// wrapping long ones, and keeps at most max rows: the last line (the
// keys) always shows.
func wrapLines(lines []string, width, maxRows int) [][]screen.Cell {
	scr := screen.New(screen.Options{Cols: width, Rows: 64, Scrollback: -1})
	var rows [][]screen.Cell
	for _, l := range lines {
		scr.Write([]byte("\x1b[H\x1b[0m\x1b[2J" + l))
		for y := range scr.Cursor().Y + 1 {
			rows = append(rows, scr.Row(y))
		}
	}
	if len(rows) > maxRows {
		rows = append(rows[:maxRows-1], rows[len(rows)-1])
	}
	return rows
}

// boxRows frames body (rows width cells wide) with a border and title.
func boxRows(body [][]screen.Cell, width int, title string) [][]screen.Cell {
	border := screen.Style{Attrs: screen.AttrBold}
	cell := func(r rune) screen.Cell { return screen.Cell{Rune: r, Width: 1, Style: border} }
	blank := screen.Cell{Rune: ' ', Width: 1}
	edge := func(l, r rune, title string) []screen.Cell {
		row := []screen.Cell{cell(l)}
		t := []rune(title)
		for i := range width + 2 {
			if i >= 1 && i-1 < len(t) && len(t) <= width {
				row = append(row, cell(t[i-1]))
			} else {
				row = append(row, cell('─'))
			}
		}
		return append(row, cell(r))
	}
	out := [][]screen.Cell{edge('┌', '┐', title)}
	for _, r := range body {
		row := []screen.Cell{cell('│'), blank}
		row = append(row, r[:min(len(r), width)]...)
		for len(row) < width+2 {
			row = append(row, blank)
		}
		out = append(out, append(row, blank, cell('│')))
	}
	return append(out, edge('└', '┘', ""))
}

// overlay returns tab row y with the box drawn over it; the tab's cells
// are not modified.
func (b *sheetBox) overlay(y int, tab []screen.Cell) []screen.Cell {
	if y < b.y || y >= b.y+len(b.rows) {
		return tab
	}
	box := b.rows[y-b.y]
	end := b.x + len(box)
	row := make([]screen.Cell, max(len(tab), end))
	copy(row, tab)
	for i := len(tab); i < b.x; i++ {
		row[i] = screen.Cell{Rune: ' ', Width: 1}
	}
	// A wide character cut by the box's left edge shows as a blank.
	if b.x > 0 && row[b.x-1].Width == 2 {
		row[b.x-1] = screen.Cell{Rune: ' ', Width: 1, Style: row[b.x-1].Style}
	}
	copy(row[b.x:], box)
	return row
}
