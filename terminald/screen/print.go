package screen

import "unicode/utf8"

// decSpecial maps ASCII 0x5f-0x7e to the DEC special graphics (line
// drawing) set selected with ESC ( 0.
var decSpecial = [32]rune{
	' ', '◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼',
	'⎺', '⎻', '─', '⎼', '⎽', '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
}

// printASCII prints a run of printable ASCII bytes: the fast path.
func (s *Screen) printASCII(b []byte) {
	if s.m.Insert || s.charsets[s.gl] || s.ext.margins {
		for _, c := range b {
			r := rune(c)
			if s.charsets[s.gl] && c >= 0x5f {
				r = decSpecial[c-0x5f]
			}
			s.put(r, 1)
		}
		return
	}
	cols := s.cols
	for len(b) > 0 {
		if s.wrapNext {
			s.wrap()
		}
		l := s.cur.lines[s.y]
		x := s.x
		n := min(cols-x, len(b))
		if l.compact && x >= l.ccol {
			compactAppend(l, x, b[:n], &s.pen)
			s.lastRune = rune(b[n-1])
			s.clean[s.y] = false
			b = b[n:]
			x += n
			if x >= cols {
				x = cols - 1
				if s.m.Autowrap {
					s.wrapNext = true
				} else if len(b) > 0 {
					s.x = x
					s.printASCII(b[len(b)-1:]) // materialises
					return
				}
			}
			s.x = x
			continue
		}
		s.mat(l)
		cells := l.c[x : x+n]
		if cells[0].w == 0 {
			s.clearWide(l, x)
		}
		if cells[n-1].w == 2 {
			s.clearWide(l, x+n-1)
		}
		if l.used < x+n+1 {
			l.used = min(x+n+1, cols)
		}
		t := s.pen
		for i := range cells {
			t.r = rune(b[i])
			cells[i] = t
		}
		s.lastRune = t.r
		s.clean[s.y] = false
		b = b[n:]
		x += n
		if x >= cols {
			x = cols - 1
			if s.m.Autowrap {
				s.wrapNext = true
			} else if len(b) > 0 {
				t.r = rune(b[len(b)-1])
				l.c[x] = t
				l.used = cols
				s.lastRune = t.r
				b = nil
			}
		}
		s.x = x
	}
}

// put prints one rune of width w (1 or 2) at the cursor.
func (s *Screen) put(r rune, w int) {
	if s.ext.margins {
		s.putLR(r, w) // DECLRMM margins: ext.go
		return
	}
	if s.wrapNext {
		s.wrap()
	}
	l := s.cur.lines[s.y]
	if w == 2 && s.x == s.cols-1 && s.padCompact(l) {
		s.put(r, w) // on the next row, now that the wrap is done
		return
	}
	if l.compact && s.x >= l.ccol && !s.m.Insert && !s.charsets[s.gl] && (w == 1 || s.x < s.cols-1) {
		compactAppendRune(l, s.x, r, w, &s.pen)
		if r >= 0x80 {
			l.complex = true
		}
		s.clean[s.y] = false
		s.lastRune = r
		s.x += w
		if s.x >= s.cols {
			s.x = s.cols - 1
			if s.m.Autowrap {
				s.wrapNext = true
			}
		}
		return
	}
	s.mat(l)
	if w == 2 && s.x == s.cols-1 {
		if s.cols < 2 {
			return
		}
		if s.m.Autowrap {
			s.clearWide(l, s.x)
			pad := s.pen
			pad.r, pad.fl = ' ', flPad
			l.c[s.x] = pad
			l.used, l.complex = s.cols, true
			s.clean[s.y] = false
			s.wrap()
			l = s.cur.lines[s.y]
			s.mat(l)
		} else {
			return // xterm: a wide character that does not fit is dropped
		}
	}
	if s.m.Insert {
		s.insertCells(l, s.x, w)
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
	if s.x >= s.cols {
		s.x = s.cols - 1
		if s.m.Autowrap {
			s.wrapNext = true
		}
	}
}

// padCompact handles a wide character meeting the last column of compact
// row l with autowrap on and the default pen, the common case of wide text
// (CJK, emoji) filling lines: it leaves the padding cell the general path
// leaves and wraps, keeping l compact, and reports whether it did.
// The general path materialises the row, and the next one too, as it goes
// on printing there in cell form; both rows then take the slower cell
// encoding into the scrollback. On the bench unicode stream at 80x24 that
// was almost a fifth of the engine's time.
//
// The pad is not text: l.cpad records it and l.ccol covers it, so that
// every fast path, which needs the cursor at or after ccol, leaves the row
// to the general path, and mat puts the pad cell in. A wrapped row's
// stored form never keeps its trailing pad, so the scrollback gets the
// text as it is.
func (s *Screen) padCompact(l *line) bool {
	if !l.compact || s.x < l.ccol || l.gmode || s.cols < 2 || !s.m.Autowrap || s.m.Insert || s.charsets[s.gl] ||
		s.pen != blankCell {
		return false
	}
	if s.x > l.ccol {
		compactStyle(l, s.x, &s.pen) // blanks up to the pad, as the cells are
	}
	l.ccol, l.cpad = s.cols, true
	l.combLen = 0
	l.complex = true
	s.clean[s.y] = false
	s.wrap()
	return true
}

// wrap performs the pending autowrap: mark the row soft-wrapped and move
// to the start of the next one.
func (s *Screen) wrap() {
	s.cur.lines[s.y].wrapped = true
	s.wrapNext = false
	s.index()
	s.x = 0
}

// clearWide blanks the other half of a wide character that cell x belongs
// to, so that overwriting one half never leaves an orphan.
func (s *Screen) clearWide(l *line, x int) {
	if x < 0 || x >= len(l.c) {
		return
	}
	switch l.c[x].w {
	case 2:
		if x+1 < len(l.c) {
			l.c[x+1].r, l.c[x+1].w, l.c[x+1].fl = ' ', 1, 0
		}
		l.c[x].r, l.c[x].w, l.c[x].fl = ' ', 1, 0
	case 0:
		if x > 0 {
			l.c[x-1].r, l.c[x-1].w, l.c[x-1].fl = ' ', 1, 0
		}
		l.c[x].r, l.c[x].w, l.c[x].fl = ' ', 1, 0
	}
}

// combine attaches a zero-width rune to the previously printed cell.
func (s *Screen) combine(r rune) {
	x := s.x
	if !s.wrapNext {
		x--
	}
	if x < 0 {
		return
	}
	l := s.cur.lines[s.y]
	if l.compact && !l.cpad && l.ccol > 0 && x+1 >= l.ccol && x < l.ccol && len(l.text) > 0 && l.text[len(l.text)-1] != ' ' {
		// The previous cell is the last one appended: append the mark.
		if l.combLen+4 <= maxComb {
			n := len(l.text)
			l.text = utf8.AppendRune(l.text, r)
			l.combLen += len(l.text) - n
			l.complex = true
			s.clean[s.y] = false
		}
		return
	}
	s.mat(l)
	if l.c[x].w == 0 && x > 0 {
		x--
	}
	c := &l.c[x]
	if c.w == 0 || c.fl&flPad != 0 {
		return
	}
	prev := ""
	if c.fl&flComb != 0 {
		prev = l.comb[x]
	}
	if len(prev)+4 > maxComb {
		return
	}
	if l.comb == nil {
		l.comb = make(map[int]string, 1)
	}
	l.comb[x] = prev + string(r)
	c.fl |= flComb
	l.used = max(l.used, x+1)
	l.complex = true
	s.clean[s.y] = false
}

// rep repeats the last printed character n times (CSI b).
func (s *Screen) rep(n int) {
	if s.lastRune == 0 {
		return
	}
	n = min(n, s.cols*s.rows)
	w := runeWidth(s.lastRune)
	if s.lastRune < 0x80 {
		w = 1
	}
	if w == 0 {
		return
	}
	for range n {
		s.put(s.lastRune, w)
	}
}
