package screen

import (
	"unicode/utf8"
)

// Reading the history in pages.
//
// The main buffer's text — the scrollback, then the main screen down to
// its last non-blank row — is a sequence of logical lines: runs of
// soft-wrapped rows joined, trailing spaces trimmed, exactly as LastLines
// renders them. Every logical line has a sequence number: the oldest line
// ever held is 0, and a line keeps its number when older lines are dropped
// from the scrollback (the scrollback counts what it dropped, trimCount)
// and when the screen is resized. Lines on the visible screen are still
// live: a program can redraw or erase them, so the text at a number on the
// screen may change until it scrolls into the scrollback. Without a
// scrollback (Options.Scrollback < 0) rows that scroll off are not
// counted, so numbers only hold on the screen itself.
//
// A Pos names a byte of a line's text, so that a line too long for one
// page can be read in parts, and a reader that stopped at the end of the
// newest line can later read what was appended to it.

// Pos is a place in the history: byte Off of the text of the logical line
// numbered Seq. Pos{Seq: n} is the start of line n; Pos{Seq: n, Off: len}
// is the end of its text.
type Pos struct {
	Seq uint64
	Off int
}

// Page is a run of text read from the history: whole lines, except that
// the first may start and the last may end inside a line too long for one
// page.
type Page struct {
	// Lines are the text, oldest first.
	Lines []string
	// Start is where Lines[0] begins; Start.Off > 0 when it begins inside
	// its line (the bytes before it were in another page, or trimmed).
	Start Pos
	// End is just after the last byte of the last entry: a forward read
	// from End continues with the text that follows, including what a
	// program later appends to that line.
	End Pos
	// LastCut is true when the last entry stops inside its line: the rest
	// of that line follows at End.
	LastCut bool
	// More is true when a byte bound or line limit stopped the read while
	// text remained in the asked direction (after End for a forward read,
	// before Start within the window for a backward one).
	More bool
	// Trimmed counts lines asked for that the scrollback had already
	// dropped, so they could not be returned.
	Trimmed uint64
	// Bytes is the page's size as bounded: the bytes of every entry plus
	// one per entry (its line break).
	Bytes int
}

// minPageBytes is the smallest byte bound honoured: room for a break and
// the longest UTF-8 character, so every page makes progress.
const minPageBytes = 1 + utf8.UTFMax

// trimCount is what the scrollback has forgotten, so that logical lines
// keep their sequence numbers after the oldest rows are dropped. It lives
// in the scrollback (scrollback.trim): dropOldest counts every row it
// drops, reset (ED 3) counts everything it erases, and anything that
// rebuilds the scrollback must carry it over.
type trimCount struct {
	// lines is the number of logical lines dropped whole: the sequence
	// number of the oldest line still held.
	lines uint64
	// head is the number of text bytes dropped from that oldest line (its
	// first rows went while the rest stayed); 0 when it is whole.
	head int
}

// drop counts row e, the oldest, leaving the scrollback sb.
func (t *trimCount) drop(sb *scrollback, e *sbLine) {
	if e.wrapped {
		if e.text != textUnknown {
			t.head += int(e.text)
		} else {
			t.head += len(lineText(sb.data(e)))
		}
		return
	}
	t.lines++
	t.head = 0
}

// cleared returns t after every row of sb is erased.
func (t trimCount) cleared(sb *scrollback) trimCount {
	for i := 0; i < sb.n; i++ {
		t.drop(sb, sb.at(i))
	}
	return t
}

// source is a sequence of lines a page is read from. Offsets are byte
// offsets into a line's text; a line's available text is [start, end).
type source interface {
	count() int
	span(i int) (start, end int)
	appendText(dst []byte, i, a, b int) []byte
}

// history is the main buffer's text as logical lines (see above).
type history struct {
	s      *Screen
	sbn    int // rows in the scrollback
	nrows  int // rows in all: scrollback, then screen rows to the last non-blank
	nlines int // logical lines
	trim   trimCount
	buf    []byte // scratch for screen rows

	// The last line located: index ci spans rows [cr0, cr1).
	ci, cr0, cr1 int
}

func (s *Screen) history() *history {
	last := s.rows - 1
	for last >= 0 && lineEmpty(s.main.lines[last]) {
		last--
	}
	h := &history{s: s, sbn: s.sb.n, nrows: s.sb.n + last + 1, trim: s.sb.trim, ci: -1}
	if h.nrows > 0 {
		h.nlines = 1
		for k := 0; k < h.nrows-1; k++ {
			if !h.wrapped(k) {
				h.nlines++
			}
		}
	}
	return h
}

func (h *history) wrapped(k int) bool {
	if k < h.sbn {
		return h.s.sb.at(k).wrapped
	}
	return h.s.main.lines[k-h.sbn].wrapped
}

// row returns the text of row k. A screen row's text is built in h.buf
// and valid until the next call.
func (h *history) row(k int) []byte {
	if k < h.sbn {
		return lineText(h.s.sb.data(h.s.sb.at(k)))
	}
	h.buf = appendRowText(h.buf[:0], h.s.main.lines[k-h.sbn])
	return h.buf
}

func (h *history) count() int { return h.nlines }

// rows returns the rows [r0, r1) of logical line i. Pages walk lines one
// by one, so it starts from the line located last when that is nearer
// than either end.
func (h *history) rows(i int) (r0, r1 int) {
	if h.ci == i {
		return h.cr0, h.cr1
	}
	switch {
	case h.ci >= 0 && i > h.ci && i-h.ci <= min(i, h.nlines-1-i):
		r0, r1 = h.walkDown(h.cr1, i-h.ci)
	case h.ci >= 0 && i < h.ci && h.ci-i <= min(i, h.nlines-1-i):
		r0, r1 = h.walkUp(h.cr0, h.ci-i)
	case i <= h.nlines-1-i:
		r0, r1 = h.walkDown(0, i+1)
	default:
		r0, r1 = h.walkUp(h.nrows, h.nlines-i)
	}
	h.ci, h.cr0, h.cr1 = i, r0, r1
	return r0, r1
}

// walkDown returns the rows of the n-th logical line starting at or after
// row r, a line's first row (n >= 1).
func (h *history) walkDown(r, n int) (r0, r1 int) {
	for ; n > 0; n-- {
		r0, r1 = r, r+1
		for r1 < h.nrows && h.wrapped(r1-1) {
			r1++
		}
		r = r1
	}
	return r0, r1
}

// walkUp returns the rows of the n-th logical line ending before row r, a
// line's first row or the end (n >= 1).
func (h *history) walkUp(r, n int) (r0, r1 int) {
	for ; n > 0; n-- {
		r0, r1 = r-1, r
		for r0 > 0 && h.wrapped(r0-1) {
			r0--
		}
		r = r0
	}
	return r0, r1
}

// span returns the offsets of line i's available text: its first line
// may have lost its beginning to trimming.
func (h *history) span(i int) (start, end int) {
	r0, r1 := h.rows(i)
	if i == 0 {
		start = h.trim.head
	}
	end = start
	for k := r0; k < r1; k++ {
		end += len(h.row(k))
	}
	// Trailing spaces are trimmed from the joined line; they can span rows.
	for k := r1 - 1; k >= r0; k-- {
		t := h.row(k)
		n := len(t)
		for n > 0 && t[n-1] == ' ' {
			n--
		}
		end -= len(t) - n
		if n > 0 {
			break
		}
	}
	return start, end
}

// appendText appends bytes [a, b) of line i.
func (h *history) appendText(dst []byte, i, a, b int) []byte {
	r0, r1 := h.rows(i)
	off := 0
	if i == 0 {
		off = h.trim.head
	}
	for k := r0; k < r1 && off < b; k++ {
		t := h.row(k)
		if lo, hi := max(a-off, 0), min(b-off, len(t)); lo < hi {
			dst = append(dst, t[lo:hi]...)
		}
		off += len(t)
	}
	return dst
}

// altRows is the alternate screen's visible rows, one line per row, down
// to the last non-blank one.
type altRows struct {
	s   *Screen
	n   int
	buf []byte
}

func (a *altRows) count() int { return a.n }

func (a *altRows) text(i int) []byte {
	a.buf = trimSpaces(appendRowText(a.buf[:0], a.s.cur.lines[i]))
	return a.buf
}

func (a *altRows) span(i int) (int, int) { return 0, len(a.text(i)) }

func (a *altRows) appendText(dst []byte, i, lo, hi int) []byte {
	return append(dst, a.text(i)[lo:hi]...)
}

// HistoryBounds returns the sequence numbers of the oldest logical line
// the history holds and one past the newest: lines [oldest, next) can be
// read. Lines before oldest were dropped from the scrollback.
func (s *Screen) HistoryBounds() (oldest, next uint64) {
	h := s.history()
	return h.trim.lines, h.trim.lines + uint64(h.nlines)
}

// HistoryEnd returns the position just after the newest text of the
// history: a forward read from it returns only what comes later.
func (s *Screen) HistoryEnd() Pos {
	h := s.history()
	if h.nlines == 0 {
		return Pos{Seq: h.trim.lines}
	}
	_, e := h.span(h.nlines - 1)
	return Pos{Seq: h.trim.lines + uint64(h.nlines) - 1, Off: e}
}

// ReadForward reads the history from from on, oldest first: at most
// maxLines entries (no limit when <= 0) and maxBytes bytes counting one
// per entry for its line break. A line that does not fit a page by itself
// is returned in parts. Reading from the end of a line's text returns the
// bytes appended to it since, then the lines after it; a Pos past a line's
// end (a line the program shortened) continues with the next line. A Pos
// before the oldest line held starts at the oldest, counting the lines
// skipped in Trimmed. A Pos inside the line just past the newest (one the
// program erased) stays where it is; one further on moves back to the
// start of that line.
func (s *Screen) ReadForward(from Pos, maxLines, maxBytes int) Page {
	h := s.history()
	base := h.trim.lines
	var p Page
	if from.Seq < base {
		p.Trimmed = base - from.Seq
		from = Pos{Seq: base}
	}
	if from.Seq > base+uint64(h.nlines) {
		from = Pos{Seq: base + uint64(h.nlines)}
	}
	i, off := int(from.Seq-base), from.Off
	p.Start, p.End = from, from
	if i == h.nlines {
		// Past the newest line, which the program erased since: most
		// often a shell redrawing its prompt, which prints the same text
		// there again. The position stays, so that a redraw does not
		// read as new output; what comes past it does.
		return p
	}
	if start, _ := h.span(i); off < start {
		off = start // the line's beginning was trimmed
	}
	off = alignRune(h, i, off)
	return readForward(h, base, i, off, maxLines, maxBytes, p)
}

// readForward is ReadForward over any source, numbering line i as base+i.
func readForward(src source, base uint64, i, off, maxLines, maxBytes int, p Page) Page {
	maxBytes = max(maxBytes, minPageBytes)
	var buf []byte
	first := true
	for ; i < src.count(); i, off = i+1, 0 {
		start, end := src.span(i)
		off = max(off, start)
		if off > 0 && off >= end {
			// Nothing new in a line read to its end (or shortened since).
			if i == src.count()-1 {
				p.End = Pos{Seq: base + uint64(i), Off: off}
				break
			}
			continue
		}
		if maxLines > 0 && len(p.Lines) == maxLines {
			p.More = true
			break
		}
		room := maxBytes - p.Bytes - 1
		n := end - off
		// A line that fits a page of its own waits for the next page; one
		// that fits none is cut anyway, so its first part fills this one.
		if n > room && !first && (n < maxBytes || room < minPageBytes) {
			p.More = true
			break
		}
		cut := n > room
		if cut {
			n = room
		}
		buf = src.appendText(buf[:0], i, off, off+n)
		if cut {
			buf = buf[:runeCut(buf)]
		}
		if first {
			p.Start = Pos{Seq: base + uint64(i), Off: off}
			first = false
		}
		p.Lines = append(p.Lines, string(buf))
		p.Bytes += len(buf) + 1
		p.End = endPos(src, base, i, off+len(buf), end)
		if cut {
			p.LastCut, p.More = true, true
			break
		}
	}
	return p
}

// alignRune moves off forward to the start of a UTF-8 character of line
// i, so that no entry begins or ends inside one.
func alignRune(src source, i, off int) int {
	_, end := src.span(i)
	if off <= 0 || off >= end {
		return off
	}
	b := src.appendText(nil, i, off, min(off+utf8.UTFMax, end))
	k := 0
	for k < len(b) && !utf8.RuneStart(b[k]) {
		k++
	}
	return off + k
}

// endPos is the position after byte off of line i, whose text ends at
// end: the start of the next line once line i was read to its end, so
// that an empty line is not read twice; the end of the newest line stays
// on it, so that a later read gets what is appended to it.
func endPos(src source, base uint64, i, off, end int) Pos {
	if off >= end && i < src.count()-1 {
		return Pos{Seq: base + uint64(i) + 1}
	}
	return Pos{Seq: base + uint64(i), Off: off}
}

// runeCut returns the length of the longest prefix of b that does not end
// inside a UTF-8 character.
func runeCut(b []byte) int {
	for k := len(b) - 1; k >= 0 && k >= len(b)-utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			if utf8.FullRune(b[k:]) {
				return len(b)
			}
			return k
		}
	}
	return len(b)
}

// ReadBackward reads the text before end, newest first but returned
// oldest first: the page that ends at end and holds as much as fits in
// maxBytes (counting one byte per entry for its line break) and maxLines
// entries (no limit when <= 0), going no further back than the start of
// line stop. A line that does not fit a page by itself is returned in
// parts, the page holding its last part. An end past the newest line means
// the end of the history; lines of the window [stop, end) that were
// already dropped are counted in Trimmed.
func (s *Screen) ReadBackward(end Pos, stop uint64, maxLines, maxBytes int) Page {
	h := s.history()
	base, next := h.trim.lines, h.trim.lines+uint64(h.nlines)
	var p Page
	i, off := -1, wholeLine
	if end.Seq >= next {
		i = h.nlines - 1
	} else if end.Seq >= base {
		i, off = int(end.Seq-base), end.Off
		if start, _ := h.span(i); off <= start {
			i, off = i-1, wholeLine // nothing of line i is before end
		}
	}
	if stop < base {
		p.Trimmed = min(base, end.Seq) - stop
		stop = base
	}
	switch {
	case end.Seq < base:
		end = Pos{Seq: base}
	case end.Seq >= next:
		end = Pos{Seq: next}
	}
	p.Start, p.End = end, end
	if stop > end.Seq || i < 0 {
		return p
	}
	if off != wholeLine {
		off = alignRune(h, i, off)
	}
	return readBackward(h, base, i, off, int(stop-base), maxLines, maxBytes, p)
}

// wholeLine as the offset of readBackward's first line takes all of it.
const wholeLine = -1

// readBackward is ReadBackward over any source: the text before byte off
// of line i (all of it when off is wholeLine), down to line lo.
func readBackward(src source, base uint64, i, off, lo, maxLines, maxBytes int, p Page) Page {
	maxBytes = max(maxBytes, minPageBytes)
	var rev []string
	var buf []byte
	for ; i >= lo; i, off = i-1, wholeLine {
		start, end := src.span(i)
		if off == wholeLine || off > end {
			off = end
		}
		if maxLines > 0 && len(rev) == maxLines {
			p.More = true
			break
		}
		room := maxBytes - p.Bytes - 1
		n := off - start
		if n > room && len(rev) > 0 && (n < maxBytes || room < minPageBytes) {
			p.More = true
			break
		}
		cut := n > room
		if cut {
			n = room
		}
		buf = src.appendText(buf[:0], i, off-n, off)
		skip := 0
		if cut {
			for skip < len(buf) && !utf8.RuneStart(buf[skip]) {
				skip++
			}
		}
		if len(rev) == 0 {
			p.End = endPos(src, base, i, off, end)
			p.LastCut = off < end
		}
		rev = append(rev, string(buf[skip:]))
		p.Bytes += len(buf) - skip + 1
		p.Start = Pos{Seq: base + uint64(i), Off: off - n + skip}
		if cut {
			p.More = true
			break
		}
	}
	p.Lines = make([]string, len(rev))
	for k, l := range rev {
		p.Lines[len(rev)-1-k] = l
	}
	return p
}

// ReadAltScreen reads the alternate screen's visible rows, one entry per
// row down to the last non-blank one, as a backward read from the bottom:
// the newest rows that fit maxBytes (counting one per entry) and maxLines.
// Positions in the page number the rows from 0 at the top; they are not
// history positions. It returns false when the alternate screen is not
// active.
func (s *Screen) ReadAltScreen(maxLines, maxBytes int) (Page, bool) {
	if !s.altActive {
		return Page{}, false
	}
	last := s.rows - 1
	for last >= 0 && lineEmpty(s.cur.lines[last]) {
		last--
	}
	a := &altRows{s: s, n: last + 1}
	var p Page
	if a.n == 0 {
		return p, true
	}
	return readBackward(a, 0, a.n-1, wholeLine, 0, maxLines, maxBytes, p), true
}

// CursorPos returns the history position of the cursor: the logical line
// holding the cursor's row and the byte of its text at the cursor's
// column, counting the blanks before the cursor (past the line's trimmed
// text when the cursor is). Shell integration
// marks are placed with it: a command's output runs from the cursor at
// its start mark to the cursor at its end mark. On the alternate screen
// it returns the end of the history, which the full-screen program does
// not touch.
func (s *Screen) CursorPos() Pos {
	if s.altActive {
		return s.HistoryEnd()
	}
	k := s.sb.n + s.y // the cursor's row, counting the scrollback's
	seq := s.sb.trim.lines
	first := 0 // the first row of the cursor's logical line
	for r := 0; r < k; r++ {
		wrapped := false
		if r < s.sb.n {
			wrapped = s.sb.at(r).wrapped
		} else {
			wrapped = s.main.lines[r-s.sb.n].wrapped
		}
		if !wrapped {
			seq++
			first = r + 1
		}
	}
	off := 0
	if first == 0 {
		off = s.sb.trim.head
	}
	var buf []byte
	for r := first; r < k; r++ {
		if r < s.sb.n {
			off += len(lineText(s.sb.data(s.sb.at(r))))
		} else {
			buf = appendRowText(buf[:0], s.main.lines[r-s.sb.n])
			off += len(buf)
		}
	}
	l := s.main.lines[s.y]
	if l.compact && s.x == l.ccol {
		off += len(l.text)
	} else {
		s.mat(l)
		part := *l
		part.c = l.c[:min(s.x, len(l.c))]
		// Blank cells before the cursor count: the cursor may be past the
		// line's (trimmed) text, where what is printed next will go.
		off += len(appendRowText(buf[:0], &part))
	}
	return Pos{Seq: seq, Off: off}
}

// ReadRange reads the text from from up to (not including) to, the
// newest part of it when it does not fit: at most maxLines entries (no
// limit when <= 0) and maxBytes bytes counting one per entry, oldest
// first, like ReadBackward over the window. Lines of the range already
// dropped from the scrollback are counted in Trimmed; More is true when
// older text of the range was left out.
func (s *Screen) ReadRange(from, to Pos, maxLines, maxBytes int) Page {
	if to.Seq < from.Seq || to.Seq == from.Seq && to.Off <= from.Off {
		return Page{Start: from, End: from}
	}
	p := s.ReadBackward(to, from.Seq, maxLines, maxBytes)
	if from.Off > 0 && len(p.Lines) > 0 && p.Start.Seq == from.Seq && p.Start.Off < from.Off {
		// The range starts inside its first line.
		cut := min(from.Off-p.Start.Off, len(p.Lines[0]))
		for cut < len(p.Lines[0]) && !utf8.RuneStart(p.Lines[0][cut]) {
			cut++
		}
		p.Lines[0] = p.Lines[0][cut:]
		p.Bytes -= cut
		p.Start.Off += cut
	}
	return p
}

// EventCleared reports that the program erased the whole main screen (ED
// 2). The rows' sequence numbers are then handed out again to what it
// prints next, so a reader tracking a range of lines (a command's output)
// restarts it at the cleared screen's first row. Its value is kept apart
// from the kinds declared with Event.
const EventCleared EventKind = 64

// screenCleared reports ED 2 on the main screen to OnEvent.
func (s *Screen) screenCleared() {
	if !s.altActive {
		s.event(Event{Kind: EventCleared})
	}
}

// ScreenStart returns the position of the main screen's first row: the
// first line a program that just cleared the screen can print on.
func (s *Screen) ScreenStart() Pos {
	seq := s.sb.trim.lines
	for r := 0; r < s.sb.n; r++ {
		if !s.sb.at(r).wrapped {
			seq++
		}
	}
	return Pos{Seq: seq}
}
