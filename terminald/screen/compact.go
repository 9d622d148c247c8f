package screen

import (
	"encoding/binary"
	"unicode/utf8"
)

// Compact rows.
//
// Output like `cat` writes each row once, left to right, then scrolls it
// away. Such a row is kept "compact": its UTF-8 text plus style runs in the
// scrollback encoding, built by appending, with its cells left stale.
// Printing appends bytes, and scrolling the row off copies two byte slices
// into the scrollback; no per-cell work happens at all. Any other change to
// the row (overwriting, erasing part of it, reading its cells) first
// materialises the cells with mat, after which the row stays in cell form
// until it is cleared. Cell widths are recomputed from the runes with
// runeWidth, the same function that placed them.

var spaces = [...]byte{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}

// compactReset empties l as a compact row of default blanks.
func compactReset(l *line) {
	l.compact = true
	l.text = l.text[:0]
	l.runs = l.runs[:0]
	l.rfg, l.rbg, l.rattr, l.rbyte = 0, 0, 0, 0
	l.ccol, l.combLen, l.cpad = 0, 0, false
	l.wrapped, l.gmode = false, false
	l.complex = false
	l.used = 0
	if l.comb != nil {
		clear(l.comb)
	}
}

// compactStyle pads the row with default blanks up to column x and starts a
// style run if pen differs from the last one.
func compactStyle(l *line, x int, pen *cell) {
	if x > l.ccol {
		if l.rfg != 0 || l.rbg != 0 || l.rattr != 0 {
			l.runs = appendRun(l.runs, l.ccol, &blankCell)
			l.rfg, l.rbg, l.rattr, l.rbyte = 0, 0, 0, len(l.text)
		}
		for gap := x - l.ccol; gap > 0; {
			k := min(gap, len(spaces))
			l.text = append(l.text, spaces[:k]...)
			gap -= k
		}
		l.ccol = x
	}
	if pen.fg != l.rfg || pen.bg != l.rbg || pen.attr != l.rattr {
		l.runs = appendRun(l.runs, x, pen)
		l.rfg, l.rbg, l.rattr, l.rbyte = pen.fg, pen.bg, pen.attr, len(l.text)
	}
}

// compactAppend appends ASCII text printed at column x >= l.ccol.
func compactAppend(l *line, x int, b []byte, pen *cell) {
	if x != l.ccol || pen.fg != l.rfg || pen.bg != l.rbg || pen.attr != l.rattr {
		compactStyle(l, x, pen)
	}
	l.text = append(l.text, b...)
	l.ccol = x + len(b)
	l.combLen = 0
}

// compactAppendRune appends a printable rune of width w at column x >= l.ccol.
func compactAppendRune(l *line, x int, r rune, w int, pen *cell) {
	compactStyle(l, x, pen)
	l.text = utf8.AppendRune(l.text, r)
	l.ccol = x + w
	l.combLen = 0
}

// compactEnd is the length of the text worth keeping in the scrollback:
// trailing default-style spaces are dropped unless the row wrapped.
func compactEnd(l *line) int {
	end := len(l.text)
	if !l.wrapped && l.rbg == 0 && l.rattr&visibleAttrs == 0 {
		for end > l.rbyte && l.text[end-1] == ' ' {
			end--
		}
	}
	return end
}

// mat turns a compact row back into cells.
func (s *Screen) mat(l *line) {
	if !l.compact {
		return
	}
	if l.gmode {
		s.matClusters(l)
		return
	}
	l.compact = false
	cells := l.c
	text, runs := l.text, l.runs
	var t cell
	t.w = 1
	col, next := 0, -1 // next: column of the next style run
	var nst Style
	advance := func() {
		var ok bool
		if len(runs) == 0 {
			next = len(cells)
			return
		}
		next, nst, runs, ok = nextRun(runs)
		if !ok {
			next = len(cells)
		}
	}
	advance()
	cplx := false
	for len(text) > 0 {
		for col >= next && next < len(cells) {
			t.fg, t.bg, t.attr = nst.Fg, nst.Bg, nst.Attrs
			advance()
		}
		r, size, w := rune(text[0]), 1, 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(text)
			w = runeWidth(r)
			cplx = true
		}
		text = text[size:]
		if w > 0 && col >= len(cells) {
			break
		}
		switch {
		case w == 0:
			x := col - 1
			if x > 0 && cells[x].w == 0 {
				x--
			}
			if x >= 0 {
				if l.comb == nil {
					l.comb = make(map[int]string, 1)
				}
				if cells[x].fl&flComb == 0 {
					l.comb[x] = ""
				}
				l.comb[x] += string(r)
				cells[x].fl |= flComb
			}
		case w == 2 && col+1 < len(cells):
			t.r, t.w = r, 2
			cells[col] = t
			t.r, t.w = 0, 0
			cells[col+1] = t
			t.w = 1
			col += 2
		default:
			if w == 2 {
				r = ' ' // cannot happen: wide runes are never appended at the edge
			}
			t.r = r
			cells[col] = t
			col++
		}
	}
	fillBlank(cells[col:], blankCell)
	l.used = col
	l.complex = cplx
	if l.cpad && len(cells) > 0 {
		pad := blankCell
		pad.fl = flPad
		cells[len(cells)-1] = pad
		l.used, l.complex, l.cpad = len(cells), true, false
	}
}

// nextRun decodes one style run.
func nextRun(runs []byte) (col int, st Style, rest []byte, ok bool) {
	start, k := binary.Uvarint(runs)
	if k <= 0 || len(runs) < k+1 {
		return 0, st, nil, false
	}
	mask := runs[k]
	runs = runs[k+1:]
	if mask&1 != 0 {
		if len(runs) < 4 {
			return 0, st, nil, false
		}
		st.Fg = Color(binary.LittleEndian.Uint32(runs))
		runs = runs[4:]
	}
	if mask&2 != 0 {
		if len(runs) < 4 {
			return 0, st, nil, false
		}
		st.Bg = Color(binary.LittleEndian.Uint32(runs))
		runs = runs[4:]
	}
	if mask&4 != 0 {
		if len(runs) < 2 {
			return 0, st, nil, false
		}
		st.Attrs = Attr(binary.LittleEndian.Uint16(runs))
		runs = runs[2:]
	}
	return int(start), st, runs, true
}
