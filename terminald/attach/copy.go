package attach

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// Copy mode (prefix [, or the mouse wheel or a drag in the tab area):
// the tab's history — scrollback, then the screen — under a cursor that
// moves with vi keys, searched with / and ?, n and N, with a selection
// started by v or space and copied by y or Enter. A copy is kept in the
// session (prefix ] types it into the tab) and sent to the client's
// terminal as OSC 52, which sets its clipboard; the client drops that
// sequence when PHANTOM_CLIPBOARD=off says its terminal should not get it.
// Lines are addressed as in View.History: 0 is the oldest scrollback line.

// maxClip bounds the text an OSC 52 carries: terminals cap what they
// accept (xterm, kitty and tmux at around 100 kB of base64 or more), and a
// frame must stay a frame.
const maxClip = 256 << 10

// copyState is copy mode's position and selection.
type copyState struct {
	top    int      // history line at the top of the area
	cx, cy int      // the cursor: column and history line
	sel    bool     // a selection runs from the anchor to the cursor
	ax, ay int      // the selection's anchor
	shape  selShape // how it runs: a stream, whole lines, a rectangle (copywords.go)
	// byMouse is set when the wheel or a drag entered copy mode: it
	// leaves again after the copy or when the wheel reaches the bottom.
	byMouse bool
	search  string // the last search
	back    bool   // the last search went towards the start
	// notFound is the message a failed search put on the status line: a
	// later search that finds its text takes it away.
	notFound string
}

// dragState is a mouse button held down in the tab area.
type dragState struct {
	on   bool
	x    int // column of the press
	line int // history line of the press
}

// tabRows is the height of the tab's screen as last snapshotted, at most
// the area's.
func (s *session) tabRows() int {
	area := s.paneRect().h
	if s.curSnap().Rows > 0 {
		return min(s.curSnap().Rows, area)
	}
	return area
}

// historyTotal is how many history lines the shown tab has.
func (s *session) historyTotal() int {
	if s.curView() == nil {
		return 0
	}
	_, total := s.curView().History(0, 0)
	return total
}

// liveTop is the history line shown on the area's first row when the
// live screen is shown: copy mode starts there, so nothing moves.
func (s *session) liveTop() int { return max(s.historyTotal()-s.tabRows(), 0) }

// enterCopy starts copy mode at the live screen with the cursor where
// the program's is.
func (s *session) enterCopy(byMouse bool) {
	if s.curView() == nil || s.mode == modeCopy || s.mode != modeNormal {
		return
	}
	top := s.liveTop()
	s.copy = copyState{top: top, cx: s.curSnap().Cursor.X, cy: top + s.curSnap().Cursor.Y, byMouse: byMouse,
		search: s.copy.search, back: s.copy.back, notFound: s.copy.notFound}
	s.copy.cy = min(s.copy.cy, max(s.historyTotal()-1, 0))
	s.mode, s.needFull = modeCopy, true
}

// leaveCopy returns from copy mode to the live screen.
func (s *session) leaveCopy() {
	if s.mode == modeCopy {
		s.mode = modeNormal
		s.needFull = true
	}
	s.copy.sel, s.drag = false, dragState{}
}

// copyKeys moves, searches, selects and copies in copy mode, and returns
// the bytes left over when a key leaves it.
func (s *session) copyKeys(b []byte) []byte {
	page := max(s.paneRect().h-1, 1)
	for len(b) > 0 && s.mode == modeCopy {
		n := 1
		c := &s.copy
		switch k := b[0]; {
		case k == 'q' || k == 0x03:
			s.leaveCopy()
		case k == 0x1b && len(b) == 1:
			// Esc drops the selection first, then leaves.
			if c.sel {
				c.sel = false
			} else {
				s.leaveCopy()
			}
		case k == 0x1b:
			n = escLen(b)
			switch string(b[:n]) {
			case "\x1b[5~":
				s.scrollBy(-page)
			case "\x1b[6~":
				s.scrollBy(page)
			case "\x1b[A", "\x1bOA":
				s.moveCursor(0, -1)
			case "\x1b[B", "\x1bOB":
				s.moveCursor(0, 1)
			case "\x1b[D", "\x1bOD":
				s.moveCursor(-1, 0)
			case "\x1b[C", "\x1bOC":
				s.moveCursor(1, 0)
			case "\x1b[H", "\x1bOH", "\x1b[1~":
				s.moveTo(0, c.cy)
			case "\x1b[F", "\x1bOF", "\x1b[4~":
				s.moveTo(s.lineEnd(c.cy), c.cy)
			}
		case k == 'k':
			s.moveCursor(0, -1)
		case k == 'j':
			s.moveCursor(0, 1)
		case k == 'h':
			s.moveCursor(-1, 0)
		case k == 'l':
			s.moveCursor(1, 0)
		case k == '0':
			s.moveTo(0, c.cy)
		case k == '$':
			s.moveTo(s.lineEnd(c.cy), c.cy)
		case k == 0x02:
			s.scrollBy(-page)
		case k == 0x06:
			s.scrollBy(page)
		case k == 0x15:
			s.scrollBy(-page / 2)
		case k == 0x04:
			s.scrollBy(page / 2)
		case k == 'g':
			s.moveTo(0, 0)
		case k == 'G':
			s.moveTo(0, s.historyTotal()-1)
		case k == 'v' || k == ' ':
			c.sel, c.ax, c.ay, c.shape = true, c.cx, c.cy, selStream
		case k == 'V':
			c.startShape(selLines)
		case k == 0x16: // Ctrl-V
			c.startShape(selRect)
		case k == 'w' || k == 'b' || k == 'e' || k == 'W' || k == 'B' || k == 'E':
			s.wordMotion(k)
		case k == 'y' || k == '\r' || k == '\n':
			if !c.sel {
				s.setMessage("nothing selected: v or space starts a selection")
				break
			}
			s.copySelection()
			s.leaveCopy()
		case k == '/':
			s.startPrompt(promptSearchDown, "")
		case k == '?':
			s.startPrompt(promptSearchUp, "")
		case k == 'n':
			s.searchNext(false)
		case k == 'N':
			s.searchNext(true)
		case k == s.o.Prefix:
			s.prefixed = true
			return b[1:]
		}
		b = b[n:]
		s.needFrame = true
	}
	return b
}

// maxTop is the last history line copy mode may show at the top: the
// live screen's.
func (s *session) maxTop() int { return s.liveTop() }

// scrollBy moves the view by d lines (negative: back in time) and the
// cursor with it.
func (s *session) scrollBy(d int) {
	c := &s.copy
	top := min(max(c.top+d, 0), s.maxTop())
	c.cy = min(max(c.cy+top-c.top, 0), max(s.historyTotal()-1, 0))
	c.top = top
	s.needFrame = true
}

// moveCursor moves the copy cursor by dx, dy.
func (s *session) moveCursor(dx, dy int) { s.moveTo(s.copy.cx+dx, s.copy.cy+dy) }

// moveTo puts the copy cursor at column x of history line y, scrolling
// it into view.
func (s *session) moveTo(x, y int) {
	c := &s.copy
	c.cy = min(max(y, 0), max(s.historyTotal()-1, 0))
	c.cx = min(max(x, 0), max(s.tabCols()-1, 0))
	area := s.paneRect().h
	switch {
	case c.cy < c.top:
		c.top = c.cy
	case c.cy >= c.top+area:
		c.top = c.cy - area + 1
	}
	c.top = min(c.top, s.maxTop())
	s.needFrame = true
}

// tabCols is the width of the tab as last snapshotted.
func (s *session) tabCols() int {
	w := s.paneRect().w
	if s.curSnap().Cols > 0 {
		return min(s.curSnap().Cols, w)
	}
	return w
}

// lineEnd is the column of the last character of history line y.
func (s *session) lineEnd(y int) int {
	lines, _ := s.curView().History(y, 1)
	runes, cols := lineRunes(lines[0])
	for i := len(runes) - 1; i >= 0; i-- {
		if runes[i] != ' ' {
			return cols[i]
		}
	}
	return 0
}

// lineRunes is the text of a row of cells, one rune per cell that starts
// a character, and the column of each.
func lineRunes(cells []screen.Cell) ([]rune, []int) {
	runes := make([]rune, 0, len(cells))
	cols := make([]int, 0, len(cells))
	for x, c := range cells {
		if c.Width == 0 {
			continue
		}
		r := c.Rune
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		runes, cols = append(runes, r), append(cols, x)
	}
	return runes, cols
}

// ordered returns the selection's ends in reading order.
func (c *copyState) ordered() (sx, sy, ex, ey int) {
	sx, sy, ex, ey = c.ax, c.ay, c.cx, c.cy
	if ey < sy || (ey == sy && ex < sx) {
		sx, sy, ex, ey = ex, ey, sx, sy
	}
	return sx, sy, ex, ey
}

// selected reports whether column x of history line y is in the
// selection (a stream from one end to the other, both included).
func (c *copyState) selected(x, y int) bool {
	if !c.sel {
		return false
	}
	sx, sy, ex, ey := c.ordered()
	switch {
	case y < sy || y > ey:
		return false
	case c.shape == selLines:
		return true
	case c.shape == selRect:
		return x >= min(c.ax, c.cx) && x <= max(c.ax, c.cx)
	case sy == ey:
		return x >= sx && x <= ex
	case y == sy:
		return x >= sx
	case y == ey:
		return x <= ex
	}
	return true
}

// copyRow is history line y as copy mode shows it: the selection in
// inverse video.
func (s *session) copyRow(cells []screen.Cell, y int) []screen.Cell {
	c := &s.copy
	if !c.sel {
		return cells
	}
	_, sy, _, ey := c.ordered()
	if y < sy || y > ey {
		return cells
	}
	row := make([]screen.Cell, max(len(cells), s.tabCols()))
	copy(row, cells)
	for x := range row {
		if row[x].Width == 0 && row[x].Rune == 0 && x >= len(cells) {
			row[x] = screen.Cell{Rune: ' ', Width: 1}
		}
		if c.selected(x, y) {
			row[x].Style.Attrs ^= screen.AttrInverse
		}
	}
	return row
}

// selectionText is the selected text: a soft-wrapped line joined to its
// continuation as the program wrote it, hard line ends kept as newlines,
// trailing blanks before a hard end dropped.
func (s *session) selectionText() string {
	c := &s.copy
	sx, sy, ex, ey := c.ordered()
	lines, wrapped, _ := s.curView().HistoryWrapped(sy, ey-sy+1)
	switch c.shape {
	case selLines:
		// Whole lines, each with its newline, as tmux's select-line copies.
		return selectText(lines, wrapped, s.tabCols(), 0, s.tabCols()-1) + "\n"
	case selRect:
		return rectText(lines, min(c.ax, c.cx), max(c.ax, c.cx))
	}
	return selectText(lines, wrapped, s.tabCols(), sx, ex)
}

// selectText is the text of lines (the selection's rows) from column sx
// of the first to column ex of the last, both included. wrapped[i] says
// line i runs on into line i+1 (nil: none does); such a line is joined to
// the next without a newline, its blanks up to width kept, as they are
// the text's own (the scrollback does not store a row's trailing blanks).
func selectText(lines [][]screen.Cell, wrapped []bool, width, sx, ex int) string {
	var b strings.Builder
	for i, l := range lines {
		from, to := 0, max(len(l), width)-1
		if i == 0 {
			from = sx
		}
		last := i == len(lines)-1
		if last {
			to = ex
		}
		var lb strings.Builder
		for x := max(from, 0); x <= to; x++ {
			switch {
			case x >= len(l):
				lb.WriteByte(' ')
			case l[x].Width == 0:
			case l[x].Rune < 0x20 || l[x].Rune == 0x7f:
				lb.WriteByte(' ')
			default:
				lb.WriteString(l[x].String())
			}
		}
		soft := !last && i < len(wrapped) && wrapped[i]
		if soft {
			b.WriteString(lb.String())
		} else {
			b.WriteString(strings.TrimRight(lb.String(), " "))
			if !last {
				b.WriteByte('\n')
			}
		}
		if b.Len() > maxClip {
			break
		}
	}
	return b.String()
}

// copySelection keeps the selected text and sends it to the client's
// clipboard.
func (s *session) copySelection() {
	text := s.selectionText()
	if text == "" {
		s.setMessage("the selection is empty")
		return
	}
	cut := ""
	if len(text) > maxClip {
		text, cut = text[:maxClip], fmt.Sprintf(" (cut to %d kB)", maxClip>>10)
	}
	s.buffers().Push(text)
	if err := s.send(OSC52(text)); err != nil {
		s.setMessage("copy: send to the client: " + err.Error())
		return
	}
	s.setMessage(copyNotice(text, cut, s.clipboard))
}

// copyNotice says what was copied and where it went: when the client's
// terminal clipboard was not written, why, and how to change that.
func copyNotice(text, cut string, cb Clipboard) string {
	chars := len([]rune(text))
	what := fmt.Sprintf("%d character%s", chars, plural(chars))
	if n := strings.Count(text, "\n") + 1; n > 1 {
		what += fmt.Sprintf(", %d lines", n)
	}
	switch cb {
	case ClipboardNotAnnounced:
		return fmt.Sprintf("copied %s%s to Phantom's buffer (prefix ] pastes); this terminal did not announce OSC 52 — set PHANTOM_CLIPBOARD=on to force", what, cut)
	case ClipboardOff:
		return fmt.Sprintf("copied %s%s to Phantom's buffer (prefix ] pastes); PHANTOM_CLIPBOARD=off keeps it out of the terminal's clipboard", what, cut)
	}
	return fmt.Sprintf("copied %s%s; prefix ] pastes", what, cut)
}

// OSC52 is the escape sequence that sets the terminal's clipboard to text.
func OSC52(text string) []byte {
	b := []byte("\x1b]52;c;")
	b = base64.StdEncoding.AppendEncode(b, []byte(text))
	return append(b, '\a')
}

// paste types the newest paste buffer into the tab.
func (s *session) paste() {
	b, ok := s.buffers().Newest()
	if !ok {
		s.setMessage("nothing copied yet: prefix [ then v, move, y")
		return
	}
	s.pasteText(b.Text)
}

// pasteText types text into the tab, bracketed when its program asked
// for bracketed paste.
func (s *session) pasteText(text string) {
	s.leaveCopy()
	text = strings.ReplaceAll(text, "\n", "\r")
	if s.curSnap().Modes.BracketedPaste {
		text = bracketed(text)
	}
	_ = s.input([]byte(text))
}

// bracketed wraps text in bracketed paste's marks. The program must not
// see an end mark inside the paste, which would end it early and run the
// rest as typed keys: every ESC goes (copied text never holds one, as a
// cell never does; this holds whatever a buffer came to hold), so that no
// removal can join two halves into a new end mark, as "\x1b[20\x1b[201~1~"
// would under one pass of removing the mark.
func bracketed(text string) string {
	return "\x1b[200~" + strings.ReplaceAll(text, "\x1b", "") + "\x1b[201~"
}

// searchNext moves the cursor to the next match of the last search, in
// its direction or (reverse) the other, wrapping around the history.
func (s *session) searchNext(reverse bool) {
	c := &s.copy
	if c.search == "" {
		s.setMessage("no search yet: / or ? starts one")
		return
	}
	back := c.back != reverse
	total := s.historyTotal()
	x, y, ok := searchHistory(func(top, n int) ([][]screen.Cell, []bool) {
		lines, wrapped, _ := s.curView().HistoryWrapped(top, n)
		return lines, wrapped
	}, total, c.search, c.cx, c.cy, back)
	if !ok {
		c.notFound = "not found: " + sanitize(c.search)
		s.setMessage(c.notFound)
		return
	}
	if c.notFound != "" && s.message == c.notFound {
		s.message, s.statusStale = "", true
	}
	c.notFound = ""
	s.moveTo(x, y)
	area := s.paneRect().h
	if y < c.top || y >= c.top+area {
		c.top = min(max(y-area/2, 0), s.maxTop())
	}
}

// searchChunk is how many history lines a search reads at once.
const searchChunk = 512

// searchHistory finds query in total history lines read by lines (the
// rows, and whether each is soft-wrapped onto the next), starting after
// (before, when back) column x of line y and wrapping around. A match may
// run on from a soft-wrapped line into its continuation: it is found at
// its start. A query without capitals matches any case.
func searchHistory(lines func(top, n int) ([][]screen.Cell, []bool), total int, query string, x, y int, back bool) (int, int, bool) {
	if total == 0 {
		return 0, 0, false
	}
	q := []rune(query)
	fold := strings.ToLower(query) == query
	if fold {
		for i := range q {
			q[i] = unicode.ToLower(q[i])
		}
	}
	step := 1
	if back {
		step = -1
	}
	var chunk [][]screen.Cell
	var chunkWrapped []bool
	chunkTop := -1
	line := func(i int) ([]screen.Cell, bool) {
		if chunkTop < 0 || i < chunkTop || i >= chunkTop+len(chunk) {
			chunkTop = i
			if back {
				chunkTop = max(i-searchChunk+1, 0)
			}
			chunk, chunkWrapped = lines(chunkTop, searchChunk)
		}
		return chunk[i-chunkTop], chunkWrapped[i-chunkTop]
	}
	// find returns the column of the first (last, when back) match that
	// starts on line i at a column in [from, to].
	find := func(i, from, to int) (int, bool) {
		l, wrapped := line(i)
		runes, cols := lineRunes(l)
		n := len(runes)
		// The continuation rows, as far as a match starting here can
		// reach; their columns are past any from..to.
		for j := i + 1; wrapped && j < total && len(runes)-n < len(q); j++ {
			var next []screen.Cell
			next, wrapped = line(j)
			r, _ := lineRunes(next)
			runes = append(runes, r...)
		}
		if fold {
			for k := range runes {
				runes[k] = unicode.ToLower(runes[k])
			}
		}
		best, found := 0, false
		for k := 0; k < n && k+len(q) <= len(runes); k++ {
			if cols[k] < from || cols[k] > to || !runesAt(runes, k, q) {
				continue
			}
			best, found = cols[k], true
			if !back {
				break
			}
		}
		return best, found
	}
	for n := 0; n <= total; n++ {
		i := ((y+step*n)%total + total) % total
		from, to := 0, 1<<30
		switch {
		case n == 0 && !back:
			from = x + 1
		case n == 0 && back:
			to = x - 1
		case n == total && !back:
			to = x // back where it started: the cursor's own match counts
		case n == total && back:
			from = x
		}
		if col, ok := find(i, from, to); ok {
			return col, i, true
		}
	}
	return 0, 0, false
}

// runesAt reports whether q occurs in r at i.
func runesAt(r []rune, i int, q []rune) bool {
	for j, c := range q {
		if r[i+j] != c {
			return false
		}
	}
	return true
}
