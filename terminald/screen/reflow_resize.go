package screen

import "unicode/utf8"

// Reflow on resize.
//
// When the width changes, the main buffer — scrollback and screen as one
// list of rows — is re-wrapped: each logical line (a run of soft-wrapped
// rows ended by a row that was not) is joined and cut again at the new
// width, as xterm's successors (Ghostty, kitty, tmux) do. Rows that were
// not wrapped stay separate lines; a wide character (or, with mode 2027,
// a grapheme cluster) never straddles two rows: the row before it ends
// one column short, as when it was printed.
//
// The work is done on the scrollback encoding (text plus style runs), so
// the scrollback is never expanded into cells: a line that was a single
// row and still fits is copied as it is, an ASCII line is cut at byte
// offsets, and only lines holding other characters are walked character
// by character. The rows are written into a new arena; the last of them
// become the screen.
//
// Positions are tracked through the reflow by their column offset in
// their logical line: the cursor stays on its character, and so does the
// saved cursor. A cursor right after the text stays right after it (with
// a wrap pending if that is the end of a row); further out, the blanks up
// to it become part of its line. The text of every logical line is kept
// byte for byte (the blanks a wrapped row did not store are not added,
// exactly as LastLines joins rows), so reads by logical line (read.go)
// see the same lines before and after.
//
// Which rows become the screen follows Ghostty: the cursor keeps its
// distance from the bottom of the screen, less the rows that the lines
// above it on the screen grew by, so narrowing a screen with blank rows
// below the prompt pushes nothing into the scrollback, and narrowing a
// full screen then widening it back restores it. One difference: when
// the lines above the cursor get shorter and there were blank rows below
// it, the top row stays and the blank rows grow, where Ghostty would pull
// rows back from the scrollback (after a clear, the old output would
// reappear above the prompt). Rows below the cursor are never lost: if
// they do not fit, the cursor goes to the top row. When the height
// changes too, blank rows below the cursor go first, or new rows are
// added at the bottom, as without reflow. The alternate screen is not
// reflowed: its rows are cut or padded, since the full-screen program on
// it redraws on SIGWINCH.

// reflowPos is a position tracked through a reflow.
type reflowPos struct {
	row, x  int  // before: index in the combined rows, column
	pending bool // a wrap was pending after column x
	off     int  // column offset in its logical line
	nrow    int  // after: index in the new rows
	nx      int
	npend   bool // a wrap is pending after the new column
	done    bool
}

// arun is a style run at an absolute column of a logical line.
type arun struct {
	col int
	st  Style
}

// reflower holds the state of one reflow.
type reflower struct {
	oldCols, cols int
	src           *scrollback // scrollback rows come first
	nsb           int
	scr           [][]byte // then the screen rows, encoded
	swrap         []bool
	out           scrollback
	pos           []*reflowPos

	// The logical line being built.
	text   []byte
	ends   []int32 // general path: byte end of each character cell
	widths []uint8 // and its width (0 for marks alone at a row start)
	runs   []arun
	gmode  bool
	gs     gscratch
	ri     int   // next run to apply while cutting rows
	cur    Style // style in effect at the row being cut
	enc    []byte
}

func (r *reflower) total() int { return r.nsb + len(r.scr) }

// row returns the encoded data, wrap flag and grapheme flag of row k.
func (r *reflower) row(k int) ([]byte, bool, bool) {
	if k < r.nsb {
		e := r.src.at(k)
		d := r.src.data(e)
		return d, e.wrapped, encodedGmode(d)
	}
	k -= r.nsb
	return r.scr[k], r.swrap[k], encodedGmode(r.scr[k])
}

// reflowMain re-wraps the main buffer (scrollback and screen) to cols
// columns and rows rows. (*cx, *cy, *pending) is the cursor position the
// screen is anchored on, updated in place; saved, if not nil and set, is
// mapped too.
func (s *Screen) reflowMain(cols, rows int, cx, cy *int, pending *bool, saved *savedCursor) {
	g := s.main
	oldRows := len(g.lines)
	r := &reflower{oldCols: s.cols, cols: cols, src: &s.sb, nsb: s.sb.n}
	if s.sb.max <= 0 {
		r.nsb = 0
	}

	// The screen rows down to the last one showing something or holding
	// a tracked position; blank rows below it are not part of the text.
	anchorY := min(max(*cy, 0), oldRows-1)
	last := oldRows - 1
	for last > anchorY && lineEmpty(g.lines[last]) && (saved == nil || !saved.set || saved.y < last) {
		last--
	}
	var buf []byte
	offs := make([]int, 0, last+2)
	r.swrap = make([]bool, last+1)
	for y := 0; y <= last; y++ {
		l := g.lines[y]
		offs = append(offs, len(buf))
		buf = s.encodeRow(buf, l)
		r.swrap[y] = l.wrapped
	}
	offs = append(offs, len(buf))
	r.scr = make([][]byte, last+1)
	for y := range r.scr {
		r.scr[y] = buf[offs[y]:offs[y+1]:offs[y+1]]
	}

	cursor := &reflowPos{row: r.nsb + anchorY, x: min(max(*cx, 0), r.oldCols-1), pending: *pending}
	top := &reflowPos{row: r.nsb}
	r.pos = []*reflowPos{cursor, top}
	var sp *reflowPos
	if saved != nil && saved.set && saved.y <= last {
		sp = &reflowPos{row: r.nsb + saved.y, x: min(saved.x, r.oldCols-1), pending: saved.wrapNext}
		r.pos = append(r.pos, sp)
	}

	r.out.max = 1 << 40 // trimmed to the real bound below
	r.out.runs = s.sb.runs
	r.run()

	// Choose the rows that become the screen (see above).
	n := r.out.n
	remaining := oldRows - 1 - anchorY
	extra := (cursor.nrow - top.nrow) - anchorY
	d := remaining - max(0, extra)
	if extra < 0 && remaining > 0 {
		// Lines above the cursor got shorter and there were blank rows
		// below it: the top stays, the blank rows grow (Ghostty would
		// pull rows back from the scrollback, even after a clear).
		d -= extra
	}
	if rows > oldRows {
		d += rows - oldRows
	} else {
		d = max(d-(oldRows-rows), 0)
	}
	// Rows below the cursor stay in view even if the cursor cannot.
	d = max(d, n-1-cursor.nrow)
	first := max(cursor.nrow+d+1-rows, 0)

	// Build the screen from rows [first, first+rows).
	lines := make([]*line, rows)
	for y := range lines {
		l := &line{c: make([]cell, cols), compact: true}
		fillBlank(l.c, blankCell)
		if k := first + y; k < n {
			e := r.out.at(k)
			d := r.out.data(e)
			s.decodeRowInto(l, d, e.wrapped, encodedGmode(d), cols)
		}
		lines[y] = l
	}
	g.lines, g.base = lines, nil

	// What is above the screen is the new scrollback.
	r.out.n = min(first, n)
	r.out.max = s.sb.max
	r.out.trim = s.sb.trim
	for r.out.n > max(r.out.max, 0) {
		r.out.dropOldest()
	}
	r.out.shrinkRing()
	if s.sb.max <= 0 {
		r.out.reset()
	}
	s.sb = r.out

	*cx, *cy, *pending = cursor.nx, min(max(cursor.nrow-first, 0), rows-1), cursor.npend
	if sp != nil {
		saved.x, saved.y, saved.wrapNext = sp.nx, min(max(sp.nrow-first, 0), rows-1), sp.npend
	} else if saved != nil {
		saved.x, saved.y = min(saved.x, cols-1), min(saved.y, rows-1)
	}
}

// run reflows every logical line into r.out.
func (r *reflower) run() {
	total := r.total()
	for k := 0; k < total; {
		e := k
		for e < total-1 {
			_, w, _ := r.row(e)
			if !w {
				break
			}
			e++
		}
		r.line(k, e)
		k = e + 1
	}
}

// line reflows the logical line made of rows a..e.
func (r *reflower) line(a, e int) {
	// Fast path: a single row of ASCII that still fits is copied.
	if a == e {
		data, _, gm := r.row(a)
		text := lineText(data)
		if len(text) <= r.cols && asciiText(text) && r.fitsRow(a) {
			for _, p := range r.pos {
				if p.row == a {
					off := p.x
					if p.pending {
						off++
					}
					r.place(p, r.out.n, off, off >= len(text))
				}
			}
			r.out.addRow(text, data[3+len(text):], false, gm)
			return
		}
	}
	r.text, r.ends, r.widths, r.runs = r.text[:0], r.ends[:0], r.widths[:0], r.runs[:0]
	r.gmode = false
	ascii := true
	col := 0
	var st Style // style in effect at the end of the text so far
	for k := a; k <= e; k++ {
		data, _, gm := r.row(k)
		r.gmode = r.gmode || gm
		text := lineText(data)
		runs := data[min(len(data), 3+len(text)):]
		start := col
		for _, p := range r.pos {
			if p.row == k {
				p.off = start + p.x
				if p.pending {
					p.off++
				}
			}
		}
		// Style runs, moved to columns of the logical line. Each row
		// starts in the default style.
		if st != (Style{}) && (len(runs) == 0 || runs[0] != 0) {
			r.runs = append(r.runs, arun{col: start})
			st = Style{}
		}
		for len(runs) > 0 {
			c, rs, rest, ok := nextRun(runs)
			if !ok {
				break
			}
			r.runs = append(r.runs, arun{col: start + c, st: rs})
			st = rs
			runs = rest
		}
		if ascii && asciiText(text) {
			r.text = append(r.text, text...)
			col += len(text)
		} else {
			if ascii {
				ascii = false
				for i := range r.text {
					r.ends = append(r.ends, int32(i+1))
					r.widths = append(r.widths, 1)
				}
			}
			col += r.appendCells(text, gm)
		}
	}
	// A cursor further after the end of the text stays on its cell: the
	// blanks up to it are part of the line. Right after the text, it
	// stays there, with a wrap pending if that is the end of a row.
	for _, p := range r.pos {
		if p.row < a || p.row > e || p.pending || p.off < col {
			continue
		}
		if p.off == col {
			p.pending = true
			continue
		}
		if st != (Style{}) {
			r.runs = append(r.runs, arun{col: col})
			st = Style{}
		}
		for ; col <= p.off; col++ {
			r.text = append(r.text, ' ')
			if !ascii {
				r.ends = append(r.ends, int32(len(r.text)))
				r.widths = append(r.widths, 1)
			}
		}
	}
	r.ri, r.cur = 0, Style{}
	if ascii {
		r.cutASCII(a, e)
	} else {
		r.cutCells(a, e)
	}
}

// fitsRow reports whether the tracked positions in row k stay in the
// row at the new width.
func (r *reflower) fitsRow(k int) bool {
	for _, p := range r.pos {
		if p.row == k && p.x >= r.cols {
			return false
		}
	}
	return true
}

// appendCells appends text to the line as character cells and returns
// its width.
func (r *reflower) appendCells(text []byte, gm bool) int {
	base := len(r.text)
	r.text = append(r.text, text...)
	w := 0
	for i := 0; i < len(text); {
		// ASCII not followed by a mark is a cell of its own.
		if text[i] < utf8.RuneSelf && (i+1 == len(text) || text[i+1] < utf8.RuneSelf) {
			i++
			r.ends = append(r.ends, int32(base+i))
			r.widths = append(r.widths, 1)
			w++
			continue
		}
		n, cw := nextCell(text[i:], gm, &r.gs)
		i += n
		r.ends = append(r.ends, int32(base+i))
		r.widths = append(r.widths, uint8(cw))
		w += cw
	}
	return w
}

// tracked reports whether a tracked position is in rows a..e.
func (r *reflower) tracked(a, e int) bool {
	for _, p := range r.pos {
		if p.row >= a && p.row <= e {
			return true
		}
	}
	return false
}

// cutASCII cuts an ASCII line into rows of r.cols.
func (r *reflower) cutASCII(a, e int) {
	n := len(r.text)
	track := r.tracked(a, e)
	for c0 := 0; ; c0 += r.cols {
		c1 := min(c0+r.cols, n)
		end := c1 >= n
		if track {
			for _, p := range r.pos {
				if p.row >= a && p.row <= e && !p.done && (p.off < c1 || end) {
					r.place(p, r.out.n, p.off-c0, p.off >= n)
				}
			}
		}
		r.emit(r.text[c0:c1], c0, c1, !end)
		if end {
			return
		}
	}
}

// cutCells cuts a line of character cells into rows of r.cols.
func (r *reflower) cutCells(a, e int) {
	track := r.tracked(a, e)
	b0, c0 := 0, 0 // start of the row being cut: byte, column
	col, x := 0, 0 // column of the next cell: in the line, in the row
	prev := 0      // byte end of the previous cell
	for i, end := range r.ends {
		w := int(r.widths[i])
		if x+w > r.cols && x > 0 {
			r.emit(r.text[b0:prev], c0, col, true)
			b0, c0, x = prev, col, 0
		}
		if track {
			for _, p := range r.pos {
				if p.row >= a && p.row <= e && !p.done && p.off < col+max(w, 1) && p.off >= col {
					r.place(p, r.out.n, x+p.off-col, false)
				}
			}
		}
		col += w
		x += w
		prev = int(end)
	}
	if track {
		for _, p := range r.pos {
			if p.row >= a && p.row <= e && !p.done {
				r.place(p, r.out.n, p.off-c0, true)
			}
		}
	}
	r.emit(r.text[b0:], c0, col, false)
}

// place puts p at column x of new row k; past says it is after the text,
// where a column beyond the width is clamped.
func (r *reflower) place(p *reflowPos, k, x int, past bool) {
	p.done, p.nrow = true, k
	p.nx, p.npend = x, false
	if x >= r.cols {
		p.nx = r.cols - 1
		p.npend = past && p.pending && x == r.cols
	}
	p.nx = max(p.nx, 0)
}

// emit appends one row of the line being cut: text, covering columns
// [c0, c1) of the line.
func (r *reflower) emit(text []byte, c0, c1 int, wrapped bool) {
	st := r.cur
	for r.ri < len(r.runs) && r.runs[r.ri].col <= c0 {
		st = r.runs[r.ri].st
		r.ri++
	}
	enc := r.enc[:0]
	if st != (Style{}) {
		enc = appendStyleRun(enc, 0, st)
	}
	for r.ri < len(r.runs) && r.runs[r.ri].col < c1 {
		ar := r.runs[r.ri]
		if ar.st != st {
			enc = appendStyleRun(enc, ar.col-c0, ar.st)
			st = ar.st
		}
		r.ri++
	}
	r.cur = st
	r.enc = enc
	r.out.addRow(text, enc, wrapped, r.gmode)
}

// appendStyleRun appends a style run starting at column col.
func appendStyleRun(runs []byte, col int, st Style) []byte {
	c := cell{fg: st.Fg, bg: st.Bg, attr: st.Attrs}
	return appendRunSlow(runs, col, &c)
}

// asciiText reports whether b holds only ASCII bytes.
func asciiText(b []byte) bool {
	for len(b) >= 8 {
		if (uint64(b[0])|uint64(b[1])<<8|uint64(b[2])<<16|uint64(b[3])<<24|
			uint64(b[4])<<32|uint64(b[5])<<40|uint64(b[6])<<48|uint64(b[7])<<56)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// addRow appends an encoded row made of text and style runs.
func (sb *scrollback) addRow(text, runs []byte, wrapped, gm bool) {
	size := 3 + len(text) + len(runs)
	if sb.n == sb.max {
		sb.dropOldest()
	}
	dst, seq := sb.alloc(size)
	dst = dst[:size]
	n := len(text)
	dst[0], dst[1], dst[2] = byte(n), byte(n>>8), byte(n>>16)|gmodeBit(gm)
	copy(dst[3:], text)
	copy(dst[3+n:], runs)
	off := sb.used
	sb.used += size
	sb.add(sbLine{off: uint32(off), n: uint32(size), seq: seq, wrapped: wrapped, text: textLen16(n)})
}

// shrinkRing gives the ring the size its bound needs, after a rebuild
// that held more rows.
func (sb *scrollback) shrinkRing() {
	if len(sb.ring) <= max(sb.max, 256) {
		return
	}
	ring := make([]sbLine, max(min(sb.max, 2*sb.n), min(sb.max, 256), sb.n))
	for i := 0; i < sb.n; i++ {
		ring[i] = *sb.at(i)
	}
	sb.ring, sb.head = ring, 0
}

// encodeRow appends the scrollback encoding of visible row l to dst, as
// push would store it.
func (s *Screen) encodeRow(dst []byte, l *line) []byte {
	if l.compact {
		end := compactEnd(l)
		dst = append(dst, byte(end), byte(end>>8), byte(end>>16)|gmodeBit(l.gmode))
		dst = append(dst, l.text[:end]...)
		return append(dst, l.runs...)
	}
	cells, worst := l.storedCells()
	if cap(dst)-len(dst) < worst {
		nd := make([]byte, len(dst), 2*cap(dst)+worst)
		copy(nd, dst)
		dst = nd
	}
	base := len(dst)
	if l.complex {
		dst, _ = encodeLine(dst, cells, l.comb, nil)
	} else {
		dst, _ = encodeASCII(dst, cells, nil)
	}
	dst[base+2] |= gmodeBit(l.gmode)
	return dst
}

// decodeRowInto makes l, a blank row of cols cells, show an encoded row.
func (s *Screen) decodeRowInto(l *line, data []byte, wrapped, gm bool, cols int) {
	text := lineText(data)
	l.wrapped, l.gmode = wrapped, gm
	if len(text) == 0 && len(data) <= 3 {
		return // stays a compact blank row
	}
	l.compact = true
	l.text = append(l.text[:0], text...)
	l.runs = append(l.runs[:0], data[3+len(text):]...)
	s.mat(l)
	if wrapped && l.used == cols-1 {
		// The next row starts with a wide character that did not fit.
		pad := blankCell
		pad.fl = flPad
		l.c[cols-1] = pad
		l.used, l.complex = cols, true
	}
}
