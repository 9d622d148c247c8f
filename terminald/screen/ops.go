package screen

// blank returns an erased cell: a space with the current background (xterm
// back-colour erase).
func (s *Screen) blank() cell {
	return cell{r: ' ', w: 1, bg: s.pen.bg}
}

// linefeed is LF, VT and FF without left/right margins. It stays small
// enough to be inlined into the bulk loops; lineFeed is the general form.
func (s *Screen) linefeed() {
	s.index()
	if s.m.NewLine {
		s.x = 0
	}
}

// lineFeed is LF, VT and FF: with left/right margins, the carriage return
// of LNM goes to the left margin.
func (s *Screen) lineFeed() {
	if !s.ext.margins {
		s.linefeed()
		return
	}
	s.index()
	if s.m.NewLine {
		s.carriageReturn()
	}
}

// index moves the cursor down, scrolling the region at its bottom margin
// (only when the cursor is between the left/right margins, if set).
func (s *Screen) index() {
	s.wrapNext = false
	if s.y == s.bot {
		if !s.ext.margins || s.inLR() {
			s.scrollUp(s.top, s.bot, 1, true)
		}
	} else if s.y < s.rows-1 {
		s.y++
	}
}

// reverseIndex moves the cursor up, scrolling the region at its top margin
// (only when the cursor is between the left/right margins, if set).
func (s *Screen) reverseIndex() {
	s.wrapNext = false
	if s.y == s.top {
		if !s.ext.margins || s.inLR() {
			s.scrollDown(s.top, s.bot, 1)
		}
	} else if s.y > 0 {
		s.y--
	}
}

// inLR reports whether the cursor is between the left and right margins.
func (s *Screen) inLR() bool {
	l, r := s.lr()
	return s.x >= l && s.x <= r
}

// resetLine blanks a whole row and forgets its wrap flag and marks.
func (s *Screen) resetLine(l *line, b cell) {
	if b == blankCell {
		compactReset(l)
		return
	}
	l.compact, l.cpad = false, false
	if b != s.blankVal || len(s.blankRow) < len(l.c) {
		s.blankVal = b
		if cap(s.blankRow) < s.cols {
			s.blankRow = make([]cell, s.cols)
		}
		s.blankRow = s.blankRow[:s.cols]
		fillBlank(s.blankRow, b)
	}
	copy(l.c, s.blankRow)
	l.used = 0
	if b != blankCell {
		l.used = len(l.c)
	}
	l.complex = false
	l.wrapped, l.gmode = false, false
	if l.comb != nil {
		clear(l.comb)
	}
}

// scrollUp moves rows top..bot up by n. When save is set, rows leaving the
// top of the main screen go to the scrollback: as in xterm, whenever the
// region starts at the first row (progress bars keep the last rows with
// CSI 1;N r) and no left/right margins are set. The alternate screen never
// saves. The row above the region no longer continues into it.
func (s *Screen) scrollUp(top, bot, n int, save bool) {
	if n <= 0 || top > bot {
		return
	}
	if s.ext.margins {
		if l, e, ok := s.lrRect(); ok {
			s.scrollRect(top, bot, l, e, n)
			return
		}
	}
	n = min(n, bot-top+1)
	lines := s.cur.lines
	if top > 0 {
		lines[top-1].wrapped = false
	}
	save = save && !s.altActive && top == 0 && s.sb.max > 0
	b := s.blank()
	if n == 1 {
		l := lines[top]
		if save {
			s.sb.push(l)
		}
		if top == 0 && bot == len(lines)-1 {
			s.cur.scrollFull()
		} else {
			copy(lines[top:bot], lines[top+1:bot+1])
			lines[bot] = l
		}
		if s.pen.bg == 0 {
			compactReset(l) // resetLine's case for blankCell, without comparing cells
		} else {
			s.resetLine(l, b)
		}
	} else {
		tmp := append(s.tmpLines[:0], lines[top:top+n]...)
		if save {
			for _, l := range tmp {
				s.sb.push(l)
			}
		}
		copy(lines[top:], lines[top+n:bot+1])
		copy(lines[bot+1-n:], tmp)
		for _, l := range tmp {
			s.resetLine(l, b)
		}
		s.tmpLines = tmp[:0]
	}
	clear(s.clean[top : bot+1])
}

// scrollSlack is how many full-screen scrolls the row window of a grid
// slides along its backing array before the rows are moved back to its
// start.
const scrollSlack = 64

// scrollFull rotates all rows of g up by one: the top row becomes the
// bottom one. Bulk output scrolls the whole screen once per line, and
// moving every row pointer (a write-barriered copy) was a fifth of the
// cost of a line feed. Instead g.lines is a window into g.base, a backing
// array with scrollSlack spare slots: scrolling slides the window by one
// slot and stores the old top row after it, and only every scrollSlack
// scrolls are the rows copied back to the start. Slots outside the window
// are unused; whatever replaces or reslices g.lines (resize) needs no
// care, as a window that is not the tail of g.base gets a new base here.
func (g *grid) scrollFull() {
	lines := g.lines
	rows := len(lines)
	l := lines[0]
	if cap(lines) == rows {
		if len(g.base) != rows+scrollSlack || &g.base[len(g.base)-1] != &lines[rows-1] {
			g.base = make([]*line, rows+scrollSlack)
		}
		copy(g.base, lines) // may overlap: copy moves like memmove
		clear(g.base[rows:])
		lines = g.base[:rows]
	}
	lines = lines[1 : rows+1]
	lines[rows-1] = l
	g.lines = lines
}

// scrollDown moves rows top..bot down by n, blanking n rows at the top.
// Soft wraps into the blanked rows and out of the region are cut.
func (s *Screen) scrollDown(top, bot, n int) {
	if n <= 0 || top > bot {
		return
	}
	if s.ext.margins {
		if l, e, ok := s.lrRect(); ok {
			s.scrollRect(top, bot, l, e, -n)
			return
		}
	}
	n = min(n, bot-top+1)
	lines := s.cur.lines
	if top > 0 {
		lines[top-1].wrapped = false
	}
	if bot-n >= top {
		lines[bot-n].wrapped = false // it becomes the last row; what followed it is gone
	}
	tmp := append(s.tmpLines[:0], lines[bot+1-n:bot+1]...)
	copy(lines[top+n:bot+1], lines[top:bot+1-n])
	copy(lines[top:], tmp)
	b := s.blank()
	for _, l := range tmp {
		s.resetLine(l, b)
	}
	s.tmpLines = tmp[:0]
	clear(s.clean[top : bot+1])
}

func (s *Screen) backspace() {
	s.cursorBack(1)
}

// tab moves to the n-th next tab stop, stopping at the right margin (or
// the last column). As in xterm (TabToNextStop), a pending wrap is kept:
// a tab at the last column does not move the cursor, and the next
// character still wraps instead of overwriting the last one.
func (s *Screen) tab(n int) {
	limit := s.rightLimit()
	for ; n > 0 && s.x < limit; n-- {
		s.x++
		for s.x < limit && !s.tabs[s.x] {
			s.x++
		}
	}
}

// backTab moves to the n-th previous tab stop (or column 0, or the left
// margin in origin mode).
func (s *Screen) backTab(n int) {
	s.wrapNext = false
	lim := 0
	if s.m.Origin {
		lim, _ = s.lr()
	}
	for ; n > 0 && s.x > lim; n-- {
		s.x--
		for s.x > lim && !s.tabs[s.x] {
			s.x--
		}
	}
}

// moveRel moves the cursor by dy rows (CUU, CUD, CNL, CPL); it stops at
// the scroll margins when the cursor starts inside them (xterm CursorUp,
// CursorDown), at the screen edge otherwise.
func (s *Screen) moveRel(dy int) {
	s.wrapNext = false
	y := s.y + dy
	if dy < 0 {
		lim := 0
		if s.y >= s.top {
			lim = s.top
		}
		y = max(y, lim)
	} else if dy > 0 {
		lim := s.rows - 1
		if s.y <= s.bot {
			lim = s.bot
		}
		y = min(y, lim)
	}
	s.y = y
}

// cup handles CUP/HVP with 1-based, origin-relative coordinates.
func (s *Screen) cup(row, col int) {
	s.cursorSet(row-1, col-1)
}

// eraseCells blanks cells [from, to) of row y.
func (s *Screen) eraseCells(y, from, to int) {
	l := s.cur.lines[y]
	from, to = max(from, 0), min(to, s.cols)
	if from >= to {
		return
	}
	if l.compact && from >= l.ccol && s.pen.bg == 0 {
		return // already default blanks
	}
	if l.compact && s.pen.bg == 0 && to == s.cols && from > l.rbyte && !l.complex && !l.gmode {
		// The end of a row of narrow ASCII, inside its last style run:
		// a column is a byte, so cutting the text erases it. A line
		// that fills the last column leaves the cursor there, and an
		// erase to the end of the line then takes the last character
		// (xterm); editors and vtebench's medium_cells do that for
		// every full line, and materialising the row each time was a
		// fifth of the engine's time on that stream.
		l.text = l.text[:from]
		l.ccol, l.combLen = from, 0
		s.clean[y] = false
		return
	}
	s.mat(l)
	s.clearWide(l, from)
	s.clearWide(l, to-1)
	b := s.blank()
	fillBlank(l.c[from:to], b)
	if b != blankCell {
		l.used = max(l.used, min(to+1, s.cols))
	}
	s.clean[y] = false
}

// eraseLine handles EL. Like every erase, it cancels a pending wrap
// (xterm). A row whose right part is erased no longer continues on the
// next one (xterm ClearRight).
func (s *Screen) eraseLine(mode int) {
	s.wrapNext = false
	switch mode {
	case 0:
		s.eraseCells(s.y, s.x, s.cols)
		s.cur.lines[s.y].wrapped = false
	case 1:
		s.eraseCells(s.y, 0, s.x+1)
	case 2:
		s.resetLine(s.cur.lines[s.y], s.blank())
		s.clean[s.y] = false
	}
}

// eraseDisplay handles ED; modes 0-2 cancel a pending wrap (xterm).
func (s *Screen) eraseDisplay(mode int) {
	if mode != 3 {
		s.wrapNext = false
	}
	switch mode {
	case 0:
		s.eraseLine(0)
		for y := s.y + 1; y < s.rows; y++ {
			s.resetLine(s.cur.lines[y], s.blank())
			s.clean[y] = false
		}
	case 1:
		for y := 0; y < s.y; y++ {
			s.resetLine(s.cur.lines[y], s.blank())
			s.clean[y] = false
		}
		s.eraseLine(1)
	case 2:
		s.screenCleared()
		for y := 0; y < s.rows; y++ {
			s.resetLine(s.cur.lines[y], s.blank())
			s.clean[y] = false
		}
	case 3:
		s.sb.reset()
	}
}

// insertCells inserts n blanks at column x of the cursor row l, shifting
// the rest right up to the right margin (IRM printing).
func (s *Screen) insertCells(l *line, x, n int) {
	s.shiftRight(s.y, x, s.rightLimit()+1, n)
}

// ich handles ICH: nothing happens outside the left/right margins (xterm).
func (s *Screen) ich(n int) {
	s.wrapNext = false
	if !s.ext.margins || s.inLR() {
		s.shiftRight(s.y, s.x, s.rightLimit()+1, n)
	}
}

// dch handles DCH: nothing happens outside the left/right margins (xterm).
func (s *Screen) dch(n int) {
	s.wrapNext = false
	if !s.ext.margins || s.inLR() {
		s.shiftLeft(s.y, s.x, s.rightLimit()+1, n)
	}
}

// insertLines handles IL: blank lines inserted at the cursor row, which
// must be inside the scroll region (and the left/right margins); the
// cursor goes to the left margin. The row above no longer continues into
// the cursor row, nor the last row into the one below the region.
func (s *Screen) insertLines(n int) {
	if s.y < s.top || s.y > s.bot || s.ext.margins && !s.inLR() {
		return
	}
	s.scrollDown(s.y, s.bot, n)
	s.x, _ = s.lr()
	s.wrapNext = false
}

// deleteLines handles DL, with the same conditions as IL. Rows deleted at
// the top never go to the scrollback (xterm); no soft wrap survives into
// the rows moved up or the blank rows at the bottom.
func (s *Screen) deleteLines(n int) {
	if s.y < s.top || s.y > s.bot || s.ext.margins && !s.inLR() {
		return
	}
	s.scrollUp(s.y, s.bot, n, false)
	s.unwrapAbove(s.bot - min(n, s.bot-s.y+1) + 1)
	s.x, _ = s.lr()
	s.wrapNext = false
}

// unwrapAbove clears the soft wrap of the row above row y, when rows from
// y on were replaced by blank ones.
func (s *Screen) unwrapAbove(y int) {
	if y > 0 && y < s.rows && !s.ext.margins {
		s.cur.lines[y-1].wrapped = false
	}
}

func (s *Screen) saveCursor() {
	s.cur.saved = savedCursor{set: true, x: s.x, y: s.y, pen: s.pen, wrapNext: s.wrapNext,
		origin: s.m.Origin, charsets: s.charsets, gl: s.gl}
}

func (s *Screen) restoreCursor() {
	sc := s.cur.saved
	if !sc.set {
		sc = savedCursor{pen: blankCell}
	}
	s.pen = sc.pen
	s.m.Origin = sc.origin
	s.charsets, s.gl = sc.charsets, sc.gl
	s.x = min(sc.x, s.cols-1)
	s.y = min(sc.y, s.rows-1)
	// xterm's CursorRestore goes through CursorSet, which resets the
	// wrap state: a restored cursor never has a wrap pending.
	s.wrapNext = false
}

// setScrollRegion handles DECSTBM (1-based, inclusive).
func (s *Screen) setScrollRegion(top, bot int) {
	top, bot = top-1, min(bot, s.rows)-1
	if top >= bot {
		return
	}
	s.top, s.bot = top, bot
	s.cursorSet(0, 0)
}

// enterAlt switches to the alternate screen, optionally clearing it.
func (s *Screen) enterAlt(clearIt bool) {
	if !s.altActive {
		if s.alt == nil {
			s.alt = s.newGrid()
		}
		s.cur = s.alt
		s.altActive = true
		s.markAllDirty()
	}
	if clearIt {
		b := s.blank()
		for _, l := range s.alt.lines {
			s.resetLine(l, b)
		}
	}
}

// exitAlt returns to the main screen.
func (s *Screen) exitAlt() {
	if !s.altActive {
		return
	}
	s.cur = s.main
	s.altActive = false
	s.markAllDirty()
}

// fullReset handles RIS. The scrollback is kept.
func (s *Screen) fullReset() {
	s.exitAlt()
	s.alt = nil
	s.resetState()
	for _, l := range s.main.lines {
		s.resetLine(l, blankCell)
	}
	s.x, s.y = 0, 0
	s.lastRune = 0
	s.ext = extState{}
	s.markAllDirty()
}

// softReset handles DECSTR.
func (s *Screen) softReset() {
	s.pen = blankCell
	s.m.Insert, s.m.Origin, s.m.AppCursor, s.m.AppKeypad = false, false, false, false
	s.m.CursorVisible = true
	s.top, s.bot = 0, s.rows-1
	s.resetLR()
	s.charsets, s.gl = [2]bool{}, 0
	s.cur.saved = savedCursor{}
	s.wrapNext = false
}

// alignmentTest handles DECALN: fill the screen with 'E'.
func (s *Screen) alignmentTest() {
	s.top, s.bot = 0, s.rows-1
	s.resetLR()
	s.m.Origin = false
	for _, l := range s.cur.lines {
		s.resetLine(l, cell{r: 'E', w: 1})
	}
	s.markAllDirty()
	s.cursorSet(0, 0)
}
