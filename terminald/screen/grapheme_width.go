package screen

import (
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/graphemes"
)

// Character widths.
//
// A tab measures text one of two ways, chosen by the program with DEC
// private mode 2027 (grapheme clustering, as in Ghostty, kitty, WezTerm
// and foot; DECRQM reports it as settable):
//
//   - Off (the default): per code point, as wcwidth(3) does, because that
//     is what shells, readline, ncurses and most programs compute cursor
//     positions with. East Asian wide and emoji-presentation characters
//     take 2 columns, combining marks, joiners and variation selectors 0
//     (they attach to the previous cell), everything else 1. Regional
//     indicators take 1 column each, as in glibc's wcwidth, xterm and
//     tmux, so a flag (two of them) takes 2 columns in two cells.
//   - On: per extended grapheme cluster (Unicode 17 rules, a superset of
//     Unicode 16, from github.com/clipperhouse/uax29): a flag, an emoji
//     ZWJ sequence, an emoji with a skin tone or a keycap is one cell, as
//     wide as its first code point, or 2 when that is followed by VS16
//     (emoji presentation). The cluster is built as its code points
//     arrive: a code point that continues the cluster of the cell left of
//     the cursor joins that cell instead of taking a new one.
//
// ASCII never joins a cluster, so the print fast paths stay as they are
// (the one cluster this splits is a Prepend character followed by ASCII,
// rare outside Arabic number signs).
//
// Rows keep text, not cells, in the scrollback; a row printed with
// clustering on is flagged (line.gmode, then gmodeFlag in its encoding)
// and is cut into cells with the same rules when it is read back or
// reflowed. The cells of such a row are what the rules make of its text:
// pieces of clusters put next to each other by cursor movement, rather
// than printed in order, may read back from the scrollback as one cell.

// isRegionalIndicator reports whether r is one of the 26 regional
// indicator symbols that pair up into flags.
func isRegionalIndicator(r rune) bool { return uint32(r)-0x1f1e6 < 26 }

// runeWidthMode is the width of r alone: runeWidth, or with grapheme
// clustering on (gm), regional indicators are 2 columns like the flags
// they start.
func runeWidthMode(r rune, gm bool) int {
	if gm && isRegionalIndicator(r) {
		return 2
	}
	return runeWidth(r)
}

// clusterWidth is the width of one grapheme cluster: that of its first
// code point, or 2 if the code point after it is VS16.
func clusterWidth(c []byte) int {
	if len(c) == 0 {
		return 0
	}
	if c[0] < utf8.RuneSelf {
		if len(c) > 1 && hasVS16After(c[1:]) {
			return 2
		}
		return 1
	}
	r, n := utf8.DecodeRune(c)
	w := runeWidthMode(r, true)
	if w == 1 && hasVS16After(c[n:]) {
		return 2
	}
	return w
}

// hasVS16After reports whether b starts with VARIATION SELECTOR-16
// (emoji presentation).
func hasVS16After(b []byte) bool {
	return len(b) >= 3 && b[0] == 0xef && b[1] == 0xb8 && b[2] == 0x8f
}

// gscratch is scratch space for graphemeJoins: the segmenter is called
// through a function value, so a buffer on the stack would escape anyway.
type gscratch struct{ b []byte }

// joins reports whether r continues the grapheme cluster prev (the text of
// one cell) rather than starting a new one.
func (g *gscratch) joins(prev []byte, r rune) bool {
	if len(prev) == 0 || r < utf8.RuneSelf {
		return false
	}
	if plainWide(r) {
		// Ideographs, kana and fullwidth forms continue a cluster only
		// after a Prepend character (GB9b).
		last, _ := utf8.DecodeLastRune(prev)
		if last < 0x600 || last >= 0xe00 && last < 0x11000 || last >= 0x12000 {
			return false
		}
	}
	g.b = append(g.b[:0], prev...)
	g.b = utf8.AppendRune(g.b, r)
	adv, _, _ := graphemes.SplitFunc(g.b, true)
	return adv == len(g.b)
}

// plainWide reports whether r is a CJK ideograph, kana or a fullwidth
// form: Grapheme_Cluster_Break Other, not Extended_Pictographic.
func plainWide(r rune) bool {
	switch {
	case r >= 0x4e00 && r <= 0x9fff, r >= 0x3400 && r <= 0x4dbf:
		return true
	case r >= 0x3041 && r <= 0x3096, r >= 0x30a1 && r <= 0x30fa:
		return true
	case r >= 0xff01 && r <= 0xff60, r >= 0x20000 && r <= 0x3fffd:
		return true
	}
	return false
}

// nextCell returns the byte length and width of the character cell at the
// start of text (a row's text in the scrollback encoding): a base
// character and the zero-width code points after it, and with grapheme
// clustering (gm) the rest of its cluster. Zero-width code points with no
// base before them make a cell of width 0.
func nextCell(text []byte, gm bool, g *gscratch) (size, width int) {
	var w int
	if text[0] < utf8.RuneSelf {
		size, w = 1, 1
	} else {
		var r rune
		r, size = utf8.DecodeRune(text)
		w = runeWidthMode(r, gm)
	}
	for size < len(text) && text[size] >= utf8.RuneSelf {
		r, n := utf8.DecodeRune(text[size:])
		// A code point with a width continues the cell only as part of
		// a grapheme cluster with a base.
		if runeWidthMode(r, gm) != 0 && (!gm || w == 0 || !g.joins(text[:size], r)) {
			break
		}
		size += n
	}
	if gm && w != 0 {
		w = clusterWidth(text[:size])
	}
	return size, w
}

// cellText appends the text of cell x of l (base and marks) to dst.
func cellText(dst []byte, l *line, x int) []byte {
	c := &l.c[x]
	dst = utf8.AppendRune(dst, c.r)
	if c.fl&flComb != 0 {
		dst = append(dst, l.comb[x]...)
	}
	return dst
}

// printGrapheme prints a non-ASCII rune with grapheme clustering on: it
// joins the cell left of the cursor if it continues that cell's cluster
// (zero-width runes always do, as without clustering), else it takes cells
// of its own.
func (s *Screen) printGrapheme(r rune) {
	w := runeWidthMode(r, true)
	x := s.x
	if !s.wrapNext {
		x--
	}
	l := s.cur.lines[s.y]
	if x >= 0 {
		s.mat(l)
		if l.c[x].w == 0 && x > 0 {
			x--
		}
		c := &l.c[x]
		if c.w != 0 && c.fl&flPad == 0 {
			var tb [maxComb + utf8.UTFMax]byte
			prev := cellText(tb[:0], l, x)
			if w == 0 || s.gs.joins(prev, r) {
				comb := ""
				if c.fl&flComb != 0 {
					comb = l.comb[x]
				}
				if len(comb)+utf8.RuneLen(r) > maxComb {
					return
				}
				if l.comb == nil {
					l.comb = make(map[int]string, 1)
				}
				l.comb[x] = comb + string(r)
				c.fl |= flComb
				l.used = max(l.used, x+1)
				l.complex, l.gmode = true, true
				s.clean[s.y] = false
				if c.w == 1 && clusterWidth(utf8.AppendRune(prev, r)) == 2 {
					s.widen(l, x)
				}
				return
			}
		}
	}
	if w == 0 {
		return // nothing to attach to
	}
	if l.compact {
		s.mat(l)
	}
	s.put(r, w)
	// put may have wrapped onto a compact row, then empty: it now holds
	// just r, which materialises the same with clustering.
	l = s.cur.lines[s.y]
	l.gmode = true
	if l.compact {
		s.mat(l)
	}
	l.complex = true
}

// widen makes the narrow cell x, whose cluster just became wide (VS16),
// take two columns, moving it to the next row if it is in the last column.
func (s *Screen) widen(l *line, x int) {
	if x+1 < s.cols {
		s.clearWide(l, x+1)
		right := l.c[x]
		right.r, right.w, right.fl = 0, 0, 0
		l.c[x].w = 2
		l.c[x+1] = right
		delete(l.comb, x+1)
		l.used = max(l.used, min(x+3, s.cols))
		if !s.wrapNext && s.x == x+1 {
			s.x = x + 2
			if s.x >= s.cols {
				s.x = s.cols - 1
				s.wrapNext = s.m.Autowrap
			}
		}
		return
	}
	if !s.m.Autowrap || s.cols < 2 || !s.wrapNext {
		return // stays narrow
	}
	// Last column: leave a pad and print the cluster on the next row.
	c := l.c[x]
	comb := l.comb[x]
	delete(l.comb, x)
	pad := c
	pad.r, pad.fl = ' ', flPad
	l.c[x] = pad
	s.wrap()
	nl := s.cur.lines[s.y]
	s.mat(nl)
	pen := s.pen
	s.pen = c
	s.pen.fl = 0
	s.put(c.r, 2)
	s.pen = pen
	if nl.c[0].w == 2 {
		if nl.comb == nil {
			nl.comb = make(map[int]string, 1)
		}
		nl.comb[0] = comb
		nl.c[0].fl |= flComb
		nl.gmode, nl.complex = true, true
	}
}

// matClusters is mat for a row printed with grapheme clustering: cells
// are cut with nextCell.
func (s *Screen) matClusters(l *line) {
	l.compact = false
	cells := l.c
	text, runs := l.text, l.runs
	var t cell
	t.w = 1
	col, next := 0, -1
	var nst Style
	var g gscratch
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
	for len(text) > 0 {
		for col >= next && next < len(cells) {
			t.fg, t.bg, t.attr = nst.Fg, nst.Bg, nst.Attrs
			advance()
		}
		size, w := nextCell(text, true, &g)
		cl := text[:size]
		text = text[size:]
		if w > 0 && col >= len(cells) {
			break
		}
		r, n := rune(cl[0]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(cl)
		}
		rest := cl[n:]
		x := col
		switch {
		case w == 0:
			x = col - 1
			if x > 0 && cells[x].w == 0 {
				x--
			}
			rest = cl
		case w == 2 && col+1 < len(cells):
			t.r, t.w = r, 2
			cells[col] = t
			t.r, t.w = 0, 0
			cells[col+1] = t
			t.w = 1
			col += 2
		default:
			if w == 2 {
				r, rest = ' ', nil
			}
			t.r = r
			cells[col] = t
			col++
		}
		if len(rest) > 0 && x >= 0 {
			if l.comb == nil {
				l.comb = make(map[int]string, 1)
			}
			if cells[x].fl&flComb == 0 {
				l.comb[x] = ""
			}
			l.comb[x] += string(rest)
			cells[x].fl |= flComb
		}
	}
	fillBlank(cells[col:], blankCell)
	l.used = col
	l.complex = true
}

// decodeClusters is decodeCells for a row printed with grapheme
// clustering.
func decodeClusters(text []byte) []Cell {
	out := make([]Cell, 0, len(text))
	var g gscratch
	for len(text) > 0 {
		size, w := nextCell(text, true, &g)
		cl := text[:size]
		text = text[size:]
		r, n := rune(cl[0]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(cl)
		}
		if w == 0 {
			if len(out) > 0 {
				j := len(out) - 1
				if out[j].Width == 0 && j > 0 {
					j--
				}
				out[j].Comb += string(cl)
			}
			continue
		}
		out = append(out, Cell{Rune: r, Comb: string(cl[n:]), Width: w})
		if w == 2 {
			out = append(out, Cell{Width: 0})
		}
	}
	return out
}
