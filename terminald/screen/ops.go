package screen

// blank returns an erased cell: a space with the current background (xterm
// back-colour erase).
func (s *Screen) blank() cell {
	return cell{r: ' ', w: 1, bg: s.pen.bg}
}

func (s *Screen) linefeed() {
	s.index()
	if s.m.NewLine {
		s.x = 0
	}
}

// index moves the cursor down, scrolling the region at its bottom margin.
func (s *Screen) index() {
	s.wrapNext = false
	if s.y == s.bot {
		s.scrollUp(s.top, s.bot, 1, true)
	} else if s.y < s.rows-1 {
		s.y++
	}
}

// reverseIndex moves the cursor up, scrolling the region at its top margin.
func (s *Screen) reverseIndex() {
	s.wrapNext = false
	if s.y == s.top {
		s.scrollDown(s.top, s.bot, 1)
	} else if s.y > 0 {
		s.y--
	}
}

// resetLine blanks a whole row and forgets its wrap flag and marks.
func (s *Screen) resetLine(l *line, b cell) {
	if b == blankCell {
		compactReset(l)
		return
	}
	l.compact = false
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
	l.wrapped = false
	if l.comb != nil {
		clear(l.comb)
	}
}

// scrollUp moves rows top..bot up by n. Rows leaving a full-screen region of
// the main screen go to the scrollback when save is set.
func (s *Screen) scrollUp(top, bot, n int, save bool) {
	if n <= 0 || top > bot {
		return
	}
	n = min(n, bot-top+1)
	lines := s.cur.lines
	save = save && !s.altActive && top == 0 && bot == s.rows-1 && s.sb.max > 0
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
		s.resetLine(l, b)
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
func (s *Screen) scrollDown(top, bot, n int) {
	if n <= 0 || top > bot {
		return
	}
	n = min(n, bot-top+1)
	lines := s.cur.lines
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
	if s.wrapNext {
		s.wrapNext = false
	}
	if s.x > 0 {
		s.x--
	}
}

// tab moves to the n-th next tab stop (or the last column).
func (s *Screen) tab(n int) {
	s.wrapNext = false
	for ; n > 0 && s.x < s.cols-1; n-- {
		s.x++
		for s.x < s.cols-1 && !s.tabs[s.x] {
			s.x++
		}
	}
}

// backTab moves to the n-th previous tab stop (or column 0).
func (s *Screen) backTab(n int) {
	s.wrapNext = false
	for ; n > 0 && s.x > 0; n-- {
		s.x--
		for s.x > 0 && !s.tabs[s.x] {
			s.x--
		}
	}
}

// moveTo puts the cursor at absolute (x, y) screen coordinates, clamped.
func (s *Screen) moveTo(x, y int) {
	s.wrapNext = false
	s.x = min(max(x, 0), s.cols-1)
	minY, maxY := 0, s.rows-1
	if s.m.Origin {
		minY, maxY = s.top, s.bot
	}
	s.y = min(max(y, minY), maxY)
}

// moveRel moves the cursor by (dx, dy); vertical moves stop at the scroll
// margins when the cursor starts inside them.
func (s *Screen) moveRel(dx, dy int) {
	s.wrapNext = false
	s.x = min(max(s.x+dx, 0), s.cols-1)
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
	if s.m.Origin {
		row += s.top
	}
	s.moveTo(col-1, row-1)
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

// eraseLine handles EL.
func (s *Screen) eraseLine(mode int) {
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

// eraseDisplay handles ED.
func (s *Screen) eraseDisplay(mode int) {
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
		for y := 0; y < s.rows; y++ {
			s.resetLine(s.cur.lines[y], s.blank())
			s.clean[y] = false
		}
	case 3:
		s.sb.reset()
	}
}

// insertCells shifts cells from x right by n within row l (ICH, IRM).
func (s *Screen) insertCells(l *line, x, n int) {
	if x >= s.cols {
		return
	}
	n = min(n, s.cols-x)
	s.mat(l)
	if l.c[x].w == 0 {
		s.clearWide(l, x)
	}
	if s.cols-1-n >= x && l.c[s.cols-1-n].w == 2 {
		s.clearWide(l, s.cols-1-n)
	}
	copy(l.c[x+n:], l.c[x:s.cols-n])
	b := s.blank()
	fillBlank(l.c[x:x+n], b)
	l.used = min(l.used+n, s.cols)
	if b != blankCell {
		l.used = max(l.used, x+n)
	}
	shiftComb(l, x, n, s.cols)
	s.clean[s.y] = false
}

// deleteCells removes n cells at x from row l, shifting the rest left (DCH).
func (s *Screen) deleteCells(l *line, x, n int) {
	if x >= s.cols {
		return
	}
	n = min(n, s.cols-x)
	s.mat(l)
	if l.c[x].w == 0 {
		s.clearWide(l, x)
	}
	if x+n < s.cols && l.c[x+n].w == 0 {
		s.clearWide(l, x+n)
	}
	copy(l.c[x:], l.c[x+n:])
	b := s.blank()
	fillBlank(l.c[s.cols-n:], b)
	if b != blankCell {
		l.used = s.cols
	}
	shiftComb(l, x, -n, s.cols)
	s.clean[s.y] = false
}

// shiftComb moves the combining marks of cells at or after x by delta.
func shiftComb(l *line, x, delta, cols int) {
	if len(l.comb) == 0 {
		return
	}
	m := make(map[int]string, len(l.comb))
	for k, v := range l.comb {
		switch {
		case k < x:
			m[k] = v
		case delta < 0 && k < x-delta:
			// deleted
		case k+delta < cols:
			m[k+delta] = v
		}
	}
	l.comb = m
}

// insertLines handles IL: blank lines inserted at the cursor row.
func (s *Screen) insertLines(n int) {
	if s.y < s.top || s.y > s.bot {
		return
	}
	s.scrollDown(s.y, s.bot, n)
	s.x, s.wrapNext = 0, false
}

// deleteLines handles DL.
func (s *Screen) deleteLines(n int) {
	if s.y < s.top || s.y > s.bot {
		return
	}
	s.scrollUp(s.y, s.bot, n, false)
	s.x, s.wrapNext = 0, false
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
	s.wrapNext = sc.wrapNext && s.x == s.cols-1 && s.m.Autowrap
}

// setScrollRegion handles DECSTBM (1-based, inclusive).
func (s *Screen) setScrollRegion(top, bot int) {
	top, bot = top-1, min(bot, s.rows)-1
	if top >= bot {
		return
	}
	s.top, s.bot = top, bot
	s.cup(1, 1)
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
	s.markAllDirty()
}

// softReset handles DECSTR.
func (s *Screen) softReset() {
	s.pen = blankCell
	s.m.Insert, s.m.Origin, s.m.AppCursor, s.m.AppKeypad = false, false, false, false
	s.m.CursorVisible = true
	s.top, s.bot = 0, s.rows-1
	s.charsets, s.gl = [2]bool{}, 0
	s.cur.saved = savedCursor{}
	s.wrapNext = false
}

// alignmentTest handles DECALN: fill the screen with 'E'.
func (s *Screen) alignmentTest() {
	s.top, s.bot = 0, s.rows-1
	s.m.Origin = false
	for _, l := range s.cur.lines {
		s.resetLine(l, cell{r: 'E', w: 1})
	}
	s.markAllDirty()
	s.moveTo(0, 0)
}
