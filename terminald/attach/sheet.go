package attach

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/clipperhouse/displaywidth"

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

// The box: the sheet drawn over the tab. Every text an agent chose is made
// visible (see Visible) and laid out cell by cell here, never parsed as
// terminal input, and wrapped whole. When it cannot all fit, the box says
// how much is missing and offers deny only.

// sheetBox is the box as rows of cells, placed at x, y of the tab area,
// with what it was built from. It is rebuilt only when what it shows
// changes.
type sheetBox struct {
	key        string // what the rows show besides the sheet's content
	sheet      *Sheet // the sheet shown
	cols, rows int    // the client size it was laid out for
	x, y       int
	cells      [][]screen.Cell
	text       sheetText // the sheet's text, wrapped
	// complete is true when the box shows the whole request; allow keys
	// work only then.
	complete bool
	hidden   int // rows of the request the box could not show
	// since is when the box first showed this sheet's content with this
	// completeness; armed whether it was drawn with its keys armed.
	since time.Time
	armed bool
}

// Box styles.
var (
	stylePlain  = screen.Style{}
	styleBold   = screen.Style{Attrs: screen.AttrBold}
	styleAlarm  = screen.Style{Attrs: screen.AttrBold, Fg: screen.IndexedColor(9)}
	styleChosen = screen.Style{Attrs: screen.AttrBold | screen.AttrInverse}
	styleDim    = screen.Style{Attrs: screen.AttrDim}
)

// box returns the sheet box for the current state.
func (s *session) box() *sheetBox {
	now := time.Now()
	sh := s.sheet
	secs := s.secondsLeft(now)
	s.shownSecs = secs
	area := s.rows - 1
	inner := max(min(s.cols-4, 72), 1)
	avail := max(area-2, 1)
	old := s.boxCache

	text := old.reuseText(sh, inner, avail)
	b := &sheetBox{sheet: sh, cols: s.cols, rows: s.rows, text: text, since: now}
	b.complete = text.total+rowsOf(s.scopeLine(), inner)+keyRows(true, inner) <= avail
	if !b.complete {
		// The note is reserved at its longest (hiding everything).
		keep := avail - rowsOf(moreLines(text.total), inner) - keyRows(false, inner)
		b.hidden = text.total - min(max(keep, 0), len(text.rows))
	}
	if old != nil && sameContent(old.sheet, sh) && old.complete == b.complete && old.hidden == b.hidden {
		b.since = old.since
	}
	b.armed = !now.Before(b.since.Add(armDelay))
	state := ""
	switch {
	case s.answering != "":
		state = "answering…"
	case sh.ID == s.answered:
		state = "answered"
	}
	b.key = fmt.Sprintf("%d|%d|%d|%s|%d|%d|%t|%t|%d", s.scope, secs, sh.WaitingBehind, state, s.cols, s.rows, b.armed, b.complete, b.hidden)
	if old != nil && old.key == b.key && sameContent(old.sheet, sh) {
		old.sheet = sh
		return old
	}

	var body [][]screen.Cell
	if b.complete {
		body = s.completeBody(b, secs, state, inner, avail)
	} else {
		body = incompleteBody(b, state, inner, avail)
	}
	b.cells = boxRows(body, inner, " permission sheet ")
	b.x, b.y = max((s.cols-(inner+4))/2, 0), max((area-len(b.cells))/2, 0)
	s.boxCache = b
	return b
}

// completeBody is the body of a box that shows the whole request: the
// text, the countdown when there is room, the scopes and the keys.
func (s *session) completeBody(b *sheetBox, secs int, state string, width, avail int) [][]screen.Cell {
	tail := wrap(nil, s.scopeLine(), width, avail)
	tail = wrap(tail, keysLine(b.armed, true, state), width, avail)
	var extra [][]screen.Cell
	if info := countdown(secs, b.sheet.WaitingBehind); info != "" {
		extra = wrap(nil, []span{{info, stylePlain}}, width, avail)
	}
	extra = append(extra, nil) // a blank row before the scopes
	if b.text.total+len(extra)+len(tail) > avail {
		extra = nil
	}
	body := append(slices.Clone(b.text.rows), extra...)
	return append(body, tail...)
}

// incompleteBody is the body of a box too small for the request: what
// fits of the text, how much is missing and where to see it all, and the
// keys, deny only.
func incompleteBody(b *sheetBox, state string, width, avail int) [][]screen.Cell {
	body := slices.Clone(b.text.rows[:b.text.total-b.hidden])
	body = wrap(body, moreLines(b.hidden), width, avail+len(body))
	body = wrap(body, keysLine(b.armed, false, state), width, avail+len(body))
	if len(body) > avail { // a box too small even for the note: the keys still show
		body = body[len(body)-avail:]
	}
	return body
}

// moreLines says how many rows of the request the box cannot show, and
// where to see them.
func moreLines(hidden int) []span {
	return []span{{fmt.Sprintf("… %d more line%s — answer with phantom sheet, which shows it all", hidden, plural(hidden)), styleBold}}
}

// keyRows is how many rows the keys line may take, armed or not.
func keyRows(allow bool, width int) int {
	return max(rowsOf(keysLine(true, allow, ""), width), rowsOf(keysLine(false, allow, ""), width))
}

// rowsOf is how many rows line l takes width cells wide.
func rowsOf(l []span, width int) int {
	_, n := wrapCount(nil, l, width, 0)
	return n
}

// sheetText is a sheet's own text (who asks, what, the subject, the
// project) wrapped: the first rows, as many as a box can show, and how
// many rows it takes in all.
type sheetText struct {
	width, limit int
	rows         [][]screen.Cell
	total        int
}

// reuseText returns the wrapped text of sh, reusing b's when it wrapped
// the same content at the same size: a large subject is wrapped once per
// sheet, not once per frame. b may be nil.
func (b *sheetBox) reuseText(sh *Sheet, width, limit int) sheetText {
	if b != nil && sameContent(b.sheet, sh) && b.text.width == width && b.text.limit == limit {
		return b.text
	}
	t := sheetText{width: width, limit: limit}
	for _, l := range textLines(sh) {
		var n int
		t.rows, n = wrapCount(t.rows, l, width, limit)
		t.total += n
	}
	return t
}

// textLines are the lines of a sheet's own text.
func textLines(sh *Sheet) [][]span {
	who := Visible(sh.Client)
	if sh.TabID != "" {
		who += " in tab " + Visible(sh.TabID)
		if sh.TabTitle != "" {
			who += " (" + Visible(sh.TabTitle) + ")"
		}
	} else if sh.LeftTab {
		who += " (inside Phantom, but left its tab)"
	} else {
		who += " (outside Phantom)"
	}
	lines := [][]span{
		{{who, styleBold}, {" wants to ", stylePlain}, {strings.ToUpper(Visible(sh.Capability)), styleAlarm}},
		{{"reach: ", stylePlain}, {sh.Reach.String(), styleBold}},
		{{Visible(sh.Tool) + ": ", stylePlain}, {Visible(sh.Subject), styleBold}},
	}
	if sh.Project != "" {
		lines = append(lines, []span{{"project " + Visible(sh.Project), stylePlain}})
	}
	return lines
}

// scopeLine offers the scopes an allow may grant, the chosen one
// highlighted: never narrower than the reach.
func (s *session) scopeLine() []span {
	l := []span{{"scope:", stylePlain}}
	for sc := max(s.sheet.Reach, ScopeTab); sc <= ScopeAll; sc++ {
		if sc == s.scope {
			l = append(l, span{" ", stylePlain}, span{" " + sc.String() + " ", styleChosen})
		} else {
			l = append(l, span{"  " + sc.String() + " ", stylePlain})
		}
	}
	return l
}

// armingText is what the keys line says while the keys are not armed.
const armingText = "keys arm in a second — read the request"

// keysLine says which keys answer: none while an answer is on its way or
// the keys are not armed yet, deny only when allow is refused.
func keysLine(armed, allow bool, state string) []span {
	switch {
	case state != "":
		return []span{{state, stylePlain}}
	case !armed:
		return []span{{armingText, styleDim}, {"  Esc", styleBold}, {" later", stylePlain}}
	case !allow:
		return []span{{"d", styleBold}, {" deny  ", stylePlain}, {"Esc", styleBold}, {" later", stylePlain}}
	}
	return []span{{"d", styleBold}, {" deny  ", stylePlain}, {"o", styleBold}, {" once  ", stylePlain},
		{"a", styleBold}, {" always  ", stylePlain}, {"s", styleBold}, {"/", stylePlain}, {"Tab", styleBold},
		{" scope  ", stylePlain}, {"Esc", styleBold}, {" later", stylePlain}}
}

// countdown is the line of time left and sheets waiting; "" when neither
// is known.
func countdown(secs, behind int) string {
	var parts []string
	if secs >= 0 {
		parts = append(parts, fmt.Sprintf("%d s left", secs))
	}
	if behind > 0 {
		parts = append(parts, fmt.Sprintf("%d more waiting", behind))
	}
	return strings.Join(parts, " — ")
}

// span is text in one style; a line of the box is a list of spans.
type span struct {
	text  string
	style screen.Style
}

// wrap appends line l, laid out width cells wide, to rows, keeping at
// most limit rows in all.
func wrap(rows [][]screen.Cell, l []span, width, limit int) [][]screen.Cell {
	rows, _ = wrapCount(rows, l, width, limit)
	return rows
}

// wrapCount appends line l to rows, laid out width cells wide by a
// wrapper; rows past limit are counted, not built. It returns the rows and
// how many rows l takes.
func wrapCount(rows [][]screen.Cell, l []span, width, limit int) ([][]screen.Cell, int) {
	w := &wrapper{width: width, limit: limit, rows: rows, row: []screen.Cell{}, n: 1}
	for _, sp := range l {
		inWord := false
		for i, r := range sp.text {
			if r != ' ' && !inWord {
				w.startWord(wordWidth(sp.text[i:]))
			}
			inWord = r != ' '
			w.put(r, sp.style)
		}
	}
	if w.building() {
		w.rows = append(w.rows, w.row)
	}
	return w.rows, w.n
}

// wrapper lays a line out in rows of cells: a word that does not fit the
// rest of a row starts the next one, unless it is too long for any row;
// every character is kept, spaces included. A row's cell index is its
// column: a wide character takes two cells, marks ride in their
// character's cell.
type wrapper struct {
	width, limit int
	rows         [][]screen.Cell
	row          []screen.Cell // being built; unused past limit
	x            int           // columns used in row
	n            int           // rows the line takes so far
}

// building reports whether the current row is kept.
func (w *wrapper) building() bool { return len(w.rows) < w.limit }

// startWord moves to a new row before a word of width cells that does not
// fit the rest of this row but fits a row of its own.
func (w *wrapper) startWord(width int) {
	if w.x > 0 && w.x+width > w.width && width <= w.width {
		w.newRow()
	}
}

// put lays out one character, on a new row when it does not fit.
func (w *wrapper) put(r rune, st screen.Style) {
	cw := cellWidth(r)
	if cw > w.width {
		r, cw = '?', 1
	}
	if cw == 0 {
		w.mark(r, st)
		return
	}
	if w.x+cw > w.width {
		w.newRow()
	}
	w.x += cw
	if w.building() {
		w.row = append(w.row, screen.Cell{Rune: r, Width: cw, Style: st})
		if cw == 2 {
			w.row = append(w.row, screen.Cell{Style: st}) // the right half
		}
	}
}

// newRow ends the row.
func (w *wrapper) newRow() {
	if w.building() {
		w.rows = append(w.rows, w.row)
	}
	w.row, w.x = []screen.Cell{}, 0
	w.n++
}

// mark puts a zero-width character (a combining mark) on the character
// before it, or on a blank when there is none.
func (w *wrapper) mark(r rune, st screen.Style) {
	if !w.building() {
		return
	}
	i := len(w.row) - 1
	if i >= 1 && w.row[i].Width == 0 {
		i-- // the right half of a wide character: its left half
	}
	if i < 0 {
		w.row, w.x, i = append(w.row, screen.Cell{Rune: ' ', Width: 1, Style: st}), w.x+1, 0
	}
	w.row[i].Comb += string(r)
}

// wordWidth is how many cells the word s starts with takes, up to its
// first space.
func wordWidth(s string) int {
	n := 0
	for _, r := range s {
		if r == ' ' {
			break
		}
		n += cellWidth(r)
	}
	return n
}

// cellWidth is how many cells r takes, as the screen package counts.
func cellWidth(r rune) int {
	if r < 0x300 {
		return 1
	}
	return min(max(displaywidth.Rune(r), 0), 2)
}

// maxMarks is how many combining marks one character may carry on the
// box; more are shown as escapes, so a pile of them cannot smear the box.
const maxMarks = 3

// Visible makes agent text honest on the human's screen: control, format
// (bidi overrides, zero-width), separator and blank-looking characters
// become escapes such as \x1b and \u202e, as do combining marks past
// maxMarks on one character. Nothing in the result acts on a terminal.
func Visible(s string) string {
	var b strings.Builder
	marks := 0
	for _, r := range s {
		if unicode.In(r, unicode.Mn, unicode.Me) {
			if marks++; marks <= maxMarks {
				b.WriteRune(r)
				continue
			}
		} else {
			marks = 0
			if shown(r) {
				b.WriteRune(r)
				continue
			}
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// shown reports whether r may be drawn as itself: the space, or a
// graphic character that does not look blank.
func shown(r rune) bool {
	switch r {
	case ' ':
		return true
	case 0x115f, 0x1160, 0x2800, 0x3164, 0xffa0: // Hangul fillers, braille blank
		return false
	}
	return unicode.IsGraphic(r) && !unicode.Is(unicode.Zs, r)
}

// boxRows frames body (rows at most width cells wide) with a border and
// title.
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
	if y < b.y || y >= b.y+len(b.cells) {
		return tab
	}
	box := b.cells[y-b.y]
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
