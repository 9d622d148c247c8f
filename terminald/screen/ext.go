package screen

// The less common parts of the VT model: left/right margins (DECLRMM,
// DECSLRM) and what honours them, column scrolling (SL, SR, DECIC, DECDC),
// reverse wraparound, DECCOLM and the title stack. They live off the hot
// path: while no left/right margins are set (ext.margins is false), the
// bulk printing paths never look at anything here.

// maxTitles is the depth of the title stack (XTPUSHTITLE), as in xterm.
const maxTitles = 10

// extState is the state of the features in this file.
type extState struct {
	lrmm        bool // DECLRMM (?69): CSI Pl;Pr s sets the left/right margins
	margins     bool // lrmm is set and the margins are narrower than the screen
	left, right int  // left/right margins, inclusive; meaningful when margins
	mcols       int  // screen width when the margins were set; a resize drops them

	reverseWrap bool // ?45: BS and CUB at the left margin go to the previous row
	allow132    bool // ?40: DECCOLM is honoured
	col132      bool // ?3: the last DECCOLM state (the width stays the client's)

	titles []savedTitle // title stack, oldest first
}

// savedTitle is one entry of the title stack; the icon name is not kept,
// so an entry pushed for the icon only (CSI 22;1 t) restores nothing.
type savedTitle struct {
	title    string
	hasTitle bool
}

// lr returns the left and right margins (inclusive) in effect.
func (s *Screen) lr() (left, right int) {
	if s.ext.margins {
		if s.ext.mcols == s.cols && s.ext.right < s.cols {
			return s.ext.left, s.ext.right
		}
		s.ext.margins = false // the screen was resized since: xterm resets them
	}
	return 0, s.cols - 1
}

// setLR sets the left/right margins (0-based, inclusive).
func (s *Screen) setLR(left, right int) {
	s.ext.left, s.ext.right, s.ext.mcols = left, right, s.cols
	s.ext.margins = s.ext.lrmm && (left > 0 || right < s.cols-1)
}

// resetLR puts the left/right margins back to the full width.
func (s *Screen) resetLR() { s.setLR(0, s.cols-1) }

// rightLimit is the last column the cursor at x prints to before wrapping:
// the right margin, or the screen's last column when x is right of it.
func (s *Screen) rightLimit() int {
	_, r := s.lr()
	if s.x > r {
		return s.cols - 1
	}
	return r
}

// setLRMargins handles DECSLRM (CSI Pl ; Pr s with DECLRMM set); 1-based.
// Invalid margins are ignored; valid ones home the cursor, as in xterm.
func (s *Screen) setLRMargins(left, right int) {
	left, right = left-1, min(right, s.cols)-1
	if left >= right {
		return
	}
	s.setLR(left, right)
	s.cursorSet(0, 0)
}

// cursorSet is xterm's CursorSet: it moves the cursor to 0-based (row,
// col), relative to the margins in origin mode, clamped to the screen or,
// in origin mode, to the margins. It cancels a pending wrap.
func (s *Screen) cursorSet(row, col int) {
	s.wrapNext = false
	maxX, maxY := s.cols-1, s.rows-1
	if s.m.Origin {
		l, r := s.lr()
		col += l
		row += s.top
		maxX, maxY = r, s.bot
	}
	s.x = min(max(col, 0), maxX)
	s.y = min(max(row, 0), maxY)
}

// curRow and curCol are the cursor position as cursorSet takes it (origin
// relative in origin mode).
func (s *Screen) curRow() int {
	if s.m.Origin {
		return max(s.y-s.top, 0)
	}
	return s.y
}

func (s *Screen) curCol() int {
	if s.m.Origin {
		l, _ := s.lr()
		return max(s.x-l, 0)
	}
	return s.x
}

// carriageReturn is CR: to the left margin, or to column 0 when the cursor
// is left of it and origin mode is off (xterm CarriageReturn).
func (s *Screen) carriageReturn() {
	s.wrapNext = false
	s.lastRune = 0
	if s.ext.margins {
		if l, _ := s.lr(); s.m.Origin || s.x >= l {
			s.x = l
			return
		}
	}
	s.x = 0
}

// cursorForward is CUF: it stops at the right margin, or at the last column
// when the cursor is right of the margin (xterm CursorForward).
func (s *Screen) cursorForward(n int) {
	s.wrapNext = false
	s.x = min(s.x+n, s.rightLimit())
}

// cursorBack is BS and CUB (xterm CursorBack): it stops at the left margin
// (column 0 when the cursor is left of it). With reverse wraparound (?45
// and ?7 both set) it continues at the right margin of the row above,
// wrapping from the top row to the bottom one; a pending wrap then counts
// as one of the moves.
func (s *Screen) cursorBack(n int) {
	left, right := s.lr()
	rev := s.ext.reverseWrap && s.m.Autowrap
	if rev && s.wrapNext {
		n--
	}
	s.wrapNext = false
	if s.x < left {
		left = 0
	}
	x := s.x - n
	if x >= left {
		s.x = x
		return
	}
	if !rev {
		s.x = left
		return
	}
	inRow := right - left + 1
	off := inRow*s.y + x - left
	if off < 0 {
		length := inRow * s.rows
		off += (-off/length + 1) * length
	}
	s.y = (off / inRow) % s.rows
	s.x = off%inRow + left
}

// putLR prints one rune of width w while left/right margins are set: as
// put, but the row ends at the right margin (for a cursor inside it), a
// wrap continues at the left margin of the next row, and scrolling moves
// only the rectangle between the margins. Rows wrapped inside margins are
// not marked soft-wrapped: their text is not one line of the screen.
func (s *Screen) putLR(r rune, w int) {
	if s.wrapNext {
		s.wrapLR()
	}
	left, _ := s.lr()
	limit := s.rightLimit()
	l := s.cur.lines[s.y]
	s.mat(l)
	if w == 2 && s.x >= limit {
		// A wide character does not fit before the margin: with
		// autowrap it goes to the next row, without it is dropped
		// (xterm).
		if !s.m.Autowrap || limit <= left {
			return
		}
		s.clearWide(l, s.x)
		b := s.pen
		b.r = ' '
		l.c[s.x] = b
		l.used = max(l.used, min(s.x+2, s.cols))
		s.clean[s.y] = false
		s.wrapLR()
		limit = s.rightLimit()
		l = s.cur.lines[s.y]
		s.mat(l)
	}
	if s.m.Insert {
		s.shiftRight(s.y, s.x, limit+1, w)
	}
	s.clearWide(l, s.x)
	if w == 2 {
		s.clearWide(l, s.x+1)
	}
	c := s.pen
	c.r, c.w = r, uint8(w)
	l.c[s.x] = c
	l.used = max(l.used, min(s.x+w+1, s.cols))
	if r >= 0x80 || w != 1 {
		l.complex = true
	}
	if w == 2 {
		c.r, c.w = 0, 0
		l.c[s.x+1] = c
	}
	s.clean[s.y] = false
	s.lastRune = r
	s.x += w
	if s.x > limit {
		s.x = limit
		if s.m.Autowrap {
			s.wrapNext = true
		}
	}
}

// wrapLR performs a pending wrap inside left/right margins.
func (s *Screen) wrapLR() {
	left, _ := s.lr()
	s.wrapNext = false
	s.index()
	s.x = left
}

// lrRect reports the column range [left, end) that scrolling moves when
// left/right margins are set, and whether they are.
func (s *Screen) lrRect() (left, end int, ok bool) {
	if !s.ext.margins {
		return 0, s.cols, false
	}
	l, r := s.lr()
	return l, r + 1, l > 0 || r < s.cols-1
}

// scrollRect moves the cells of columns [left, end) of rows top..bot up by
// n (down if n < 0), blanking the rows uncovered: scrolling with left/right
// margins. Nothing goes to the scrollback (xterm).
func (s *Screen) scrollRect(top, bot, left, end, n int) {
	if n == 0 || top > bot {
		return
	}
	lines := s.cur.lines
	for y := top; y <= bot; y++ {
		l := lines[y]
		s.mat(l)
		s.splitWideAt(l, left)
		s.splitWideAt(l, end)
		s.clean[y] = false
	}
	b := s.blank()
	if n > 0 {
		n = min(n, bot-top+1)
		for y := top; y+n <= bot; y++ {
			copyCells(lines[y], lines[y+n], left, end)
		}
		for y := max(bot-n+1, top); y <= bot; y++ {
			fillCells(lines[y], left, end, b)
		}
		return
	}
	n = min(-n, bot-top+1)
	for y := bot; y-n >= top; y-- {
		copyCells(lines[y], lines[y-n], left, end)
	}
	for y := top; y < top+n; y++ {
		fillCells(lines[y], left, end, b)
	}
}

// splitWideAt blanks a wide character whose halves lie on both sides of
// the boundary before column x, so that moving one side never leaves half
// of it behind.
func (s *Screen) splitWideAt(l *line, x int) {
	if x > 0 && x < len(l.c) && l.c[x].w == 0 {
		s.clearWide(l, x)
	}
}

// copyCells copies columns [from, to) of src, with their combining marks,
// into dst; both rows are in cell form.
func copyCells(dst, src *line, from, to int) {
	copy(dst.c[from:to], src.c[from:to])
	for x := from; x < to; x++ {
		if src.c[x].fl&flComb != 0 {
			if dst.comb == nil {
				dst.comb = make(map[int]string, 1)
			}
			dst.comb[x] = src.comb[x]
		}
	}
	if src.used > from {
		dst.used = max(dst.used, min(src.used, to))
	}
	if src.complex {
		dst.complex = true
	}
}

// fillCells sets columns [from, to) of a row in cell form to b.
func fillCells(l *line, from, to int, b cell) {
	fillBlank(l.c[from:to], b)
	if b != blankCell {
		l.used = max(l.used, to)
	}
}

// shiftRight inserts n blank cells at column x of row y, shifting the cells
// up to column end (exclusive) right; those pushed past end are lost (ICH,
// IRM, DECIC, SR).
func (s *Screen) shiftRight(y, x, end, n int) {
	if x >= end {
		return
	}
	n = min(n, end-x)
	l := s.cur.lines[y]
	s.mat(l)
	s.splitWideAt(l, x)
	s.splitWideAt(l, end)
	if end-n-1 >= x && l.c[end-n-1].w == 2 {
		s.clearWide(l, end-n-1) // its right half would be pushed out
	}
	copy(l.c[x+n:end], l.c[x:end-n])
	if l.used > x {
		l.used = min(max(l.used, min(l.used+n, end)), s.cols)
	}
	shiftComb(l, x, end, n)
	fillCells(l, x, x+n, s.blank())
	s.clean[y] = false
}

// shiftLeft deletes n cells at column x of row y, shifting the cells up to
// column end (exclusive) left and blanking the freed ones (DCH, DECDC, SL).
func (s *Screen) shiftLeft(y, x, end, n int) {
	if x >= end {
		return
	}
	n = min(n, end-x)
	l := s.cur.lines[y]
	s.mat(l)
	s.splitWideAt(l, x)
	s.splitWideAt(l, x+n)
	s.splitWideAt(l, end)
	copy(l.c[x:end-n], l.c[x+n:end])
	shiftComb(l, x, end, -n)
	fillCells(l, end-n, end, s.blank())
	s.clean[y] = false
}

// shiftComb moves the combining marks of cells in [x, end) by delta,
// dropping those that leave the range.
func shiftComb(l *line, x, end, delta int) {
	if len(l.comb) == 0 {
		return
	}
	m := make(map[int]string, len(l.comb))
	for k, v := range l.comb {
		switch {
		case k < x || k >= end:
			m[k] = v
		case k+delta >= x && k+delta < end:
			m[k+delta] = v
		}
	}
	l.comb = m
}

// scrollColumns handles SL (n > 0: left) and SR (n < 0: right): every row
// of the scroll region shifts between the left and right margins.
func (s *Screen) scrollColumns(n int) {
	left, right := s.lr()
	for y := s.top; y <= s.bot; y++ {
		if n > 0 {
			s.shiftLeft(y, left, right+1, n)
		} else {
			s.shiftRight(y, left, right+1, -n)
		}
	}
}

// editColumns handles DECIC (n > 0: insert) and DECDC (n < 0: delete)
// columns at the cursor column, in every row of the scroll region. Nothing
// happens when the cursor is outside the margins (xterm).
func (s *Screen) editColumns(n int) {
	left, right := s.lr()
	if s.x < left || s.x > right || s.y < s.top || s.y > s.bot {
		return
	}
	for y := s.top; y <= s.bot; y++ {
		if n > 0 {
			s.shiftRight(y, s.x, right+1, n)
		} else {
			s.shiftLeft(y, s.x, right+1, -n)
		}
	}
}

// setColumnMode handles DECCOLM (?3) when ?40 allows it. xterm resizes to
// 132 or 80 columns; here the width of a tab is decided by the clients
// attached to it, so only the rest is done: the screen is cleared, the
// margins reset and the cursor homed.
func (s *Screen) setColumnMode(on bool) {
	if !s.ext.allow132 {
		return
	}
	s.ext.col132 = on
	s.top, s.bot = 0, s.rows-1
	s.resetLR()
	s.wrapNext = false
	b := s.blank()
	for y, l := range s.cur.lines {
		s.resetLine(l, b)
		s.clean[y] = false
	}
	s.cursorSet(0, 0)
}

// titleStack handles XTPUSHTITLE (CSI 22 ; Ps t) and XTPOPTITLE (CSI 23 ;
// Ps t). Ps 0 and 2 concern the window title, 1 the icon name (not kept).
func (s *Screen) titleStack(push bool, which int) {
	title := which == 0 || which == 2
	if which < 0 || which > 2 {
		return
	}
	if push {
		if len(s.ext.titles) == maxTitles {
			s.ext.titles = append(s.ext.titles[:0], s.ext.titles[1:]...)
		}
		s.ext.titles = append(s.ext.titles, savedTitle{title: s.title, hasTitle: title})
		return
	}
	n := len(s.ext.titles)
	if n == 0 {
		return
	}
	e := s.ext.titles[n-1]
	s.ext.titles = s.ext.titles[:n-1]
	if title && e.hasTitle {
		s.title = e.title
		s.event(Event{Kind: EventTitle, Text: s.title})
	}
}
