package attach

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
)

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
	if sh.Program != "" {
		lines = append(lines, []span{{"program " + Visible(sh.Program), stylePlain}})
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
	return []span{{"d", styleBold}, {" deny  ", stylePlain}, {"o", styleBold}, {" once (this call only)  ", stylePlain},
		{"a", styleBold}, {" always (in the scope)  ", stylePlain}, {"s", styleBold}, {"/", stylePlain}, {"Tab", styleBold},
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
