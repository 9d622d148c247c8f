package screen

import (
	"encoding/binary"
	"unicode/utf8"
	"unsafe"
)

// chunkSize is the size of the arena chunks scrollback lines live in.
const chunkSize = 64 << 10

// sbLine is one compacted scrollback line: its bytes in an arena chunk.
//
// Encoding: text length (3 bytes, little endian), the UTF-8 text of the cells (the right
// halves of wide characters omitted, combining marks after their base),
// then style runs to the end: uvarint start column, a mask byte, and the
// fields present in the mask (fg uint32, bg uint32, attrs uint16, little
// endian). The style before the first run is the default style.
//
// The line holds its place in the chunk rather than a slice of it: a ring
// of pointer-free entries is half the size, and storing one costs no
// write barrier, which matters at one push per line of output.
type sbLine struct {
	off, n  uint32 // the line's bytes are chunk[off:off+n]
	seq     uint32 // arena chunk holding them
	wrapped bool
	// text is the length of the row's text, or textUnknown when it does
	// not fit: dropping the oldest row counts it (trimCount) without
	// touching the row's bytes, long gone from the cache. It fits in the
	// struct's padding.
	text uint16
}

// textUnknown marks a row whose text length must be read from its bytes.
const textUnknown = 1<<16 - 1

// textLen16 is the sbLine.text of a row with n bytes of text.
func textLen16(n int) uint16 { return uint16(min(n, textUnknown)) }

// data returns the encoded bytes of e, a line in the ring.
func (sb *scrollback) data(e *sbLine) []byte {
	c := sb.chunks[e.seq-sb.firstSeq]
	return c[e.off : e.off+e.n : e.off+e.n]
}

// scrollback is a ring of compacted lines over a FIFO of arena chunks.
type scrollback struct {
	max  int
	ring []sbLine
	head int // index of the oldest line in ring
	n    int

	chunks   [][]byte // live chunks, oldest first; the last is being filled
	firstSeq uint32   // seq of chunks[0]
	nextSeq  uint32   // seq the next new chunk gets
	used     int      // bytes used in the last chunk
	spare    [][]byte // recycled chunks
	runs     []byte   // scratch for encodeLine

	// trim counts what was dropped, for line sequence numbers (read.go);
	// carry it over when rebuilding the scrollback.
	trim trimCount
}

func (sb *scrollback) at(i int) *sbLine {
	j := sb.head + i
	if j >= len(sb.ring) {
		j -= len(sb.ring)
	}
	return &sb.ring[j]
}

func (sb *scrollback) reset() {
	*sb = scrollback{max: sb.max, runs: sb.runs, trim: sb.trim.cleared(sb)}
}

func (sb *scrollback) memory() int {
	n := cap(sb.ring)*int(unsafe.Sizeof(sbLine{})) + (cap(sb.chunks)+cap(sb.spare))*24
	for _, c := range sb.chunks {
		n += cap(c)
	}
	for _, c := range sb.spare {
		n += cap(c)
	}
	return n
}

// visibleAttrs are the attributes that show on a blank cell.
const visibleAttrs = AttrInverse | AttrUnderline | AttrDoubleUnderline |
	AttrCurlyUnderline | AttrStrike | AttrOverline

// blankForTrim reports whether a cell at the end of a row may be dropped.
func blankForTrim(c *cell) bool {
	return c.r == ' ' && c.bg == 0 && c.attr&visibleAttrs == 0 && c.fl&flComb == 0
}

// push compacts a row that scrolled off the screen into the scrollback.
func (sb *scrollback) push(l *line) {
	if sb.max <= 0 {
		return
	}
	if l.compact {
		sb.pushCompact(l)
		return
	}
	cells, worst := l.storedCells()
	if sb.n == sb.max {
		sb.dropOldest()
	}
	dst, seq := sb.alloc(worst)
	var data []byte
	if l.complex {
		data, sb.runs = encodeLine(dst, cells, l.comb, sb.runs)
	} else {
		data, sb.runs = encodeASCII(dst, cells, sb.runs)
	}
	if l.gmode {
		data[2] |= gmodeFlag
	}
	off := sb.used
	sb.used += len(data)
	*sb.next() = sbLine{off: uint32(off), n: uint32(len(data)), seq: seq, wrapped: l.wrapped, text: textLen16(len(lineText(data)))}
}

// storedCells returns the cells of visible row l that the scrollback
// keeps — without the padding that ends a wrapped row, or the blanks that
// end a row ending its line — and a bound on their encoded size. push and
// reflow encode rows alike.
func (l *line) storedCells() (cells []cell, worst int) {
	cells = l.c
	end := min(l.used, len(cells))
	if l.wrapped {
		for end > 0 && cells[end-1].fl&flPad != 0 {
			end--
		}
	} else {
		for end > 0 && blankForTrim(&cells[end-1]) {
			end--
		}
	}
	cells = cells[:end]
	worst = 3 + len(cells)*(utf8.UTFMax+binary.MaxVarintLen32+11)
	for k, v := range l.comb {
		if k < end && cells[k].fl&flComb != 0 {
			worst += len(v)
		}
	}
	return cells, worst
}

// pushCompact stores a compact row: its text and runs are already in the
// scrollback encoding.
func (sb *scrollback) pushCompact(l *line) {
	end := compactEnd(l)
	if sb.n == sb.max {
		sb.dropOldest()
	}
	size := 3 + end + len(l.runs)
	dst, seq := sb.alloc(size)
	dst = dst[:size]
	dst[0], dst[1], dst[2] = byte(end), byte(end>>8), byte(end>>16)
	if l.gmode {
		dst[2] |= gmodeFlag
	}
	copy(dst[3:], l.text[:end])
	if len(l.runs) > 0 {
		copy(dst[3+end:], l.runs)
	}
	off := sb.used
	sb.used += size
	*sb.next() = sbLine{off: uint32(off), n: uint32(size), seq: seq, wrapped: l.wrapped, text: textLen16(end)}
}

func (sb *scrollback) add(e sbLine) { *sb.next() = e }

// next makes room for a new newest line and returns its slot. Pushing a
// line fills the slot in place: passing the line to add by value cost more
// than the rest of pushing a short line.
func (sb *scrollback) next() *sbLine {
	if sb.n == len(sb.ring) {
		sb.grow()
	}
	j := sb.head + sb.n
	if j >= len(sb.ring) {
		j -= len(sb.ring)
	}
	sb.n++
	return &sb.ring[j]
}

func (sb *scrollback) grow() {
	size := min(max(2*len(sb.ring), 256), sb.max)
	ring := make([]sbLine, size)
	for i := 0; i < sb.n; i++ {
		ring[i] = *sb.at(i)
	}
	sb.ring, sb.head = ring, 0
}

// alloc returns an empty slice with room for size bytes in the current
// chunk, starting a new chunk if needed, and that chunk's seq.
func (sb *scrollback) alloc(size int) ([]byte, uint32) {
	if k := len(sb.chunks); k > 0 {
		if c := sb.chunks[k-1]; sb.used+size <= len(c) {
			return c[sb.used:sb.used:len(c)], sb.firstSeq + uint32(k-1)
		}
	}
	return sb.allocChunk(size)
}

// allocChunk is alloc when a new chunk is needed.
func (sb *scrollback) allocChunk(size int) ([]byte, uint32) {
	var c []byte
	if size <= chunkSize && len(sb.spare) > 0 {
		c = sb.spare[len(sb.spare)-1]
		sb.spare[len(sb.spare)-1] = nil
		sb.spare = sb.spare[:len(sb.spare)-1]
	} else {
		c = make([]byte, max(size, chunkSize))
	}
	if len(sb.chunks) == 0 {
		sb.firstSeq = sb.nextSeq
	}
	sb.chunks = append(sb.chunks, c)
	sb.nextSeq++
	sb.used = 0
	return c[:0:len(c)], sb.firstSeq + uint32(len(sb.chunks)-1)
}

// dropOldest forgets the oldest line, recycling chunks no line uses.
func (sb *scrollback) dropOldest() {
	sb.trim.drop(sb, &sb.ring[sb.head])
	sb.ring[sb.head] = sbLine{}
	sb.head++
	if sb.head == len(sb.ring) {
		sb.head = 0
	}
	sb.n--
	minSeq := sb.firstSeq + uint32(len(sb.chunks)-1)
	if sb.n > 0 {
		minSeq = sb.ring[sb.head].seq
	}
	for sb.firstSeq < minSeq && len(sb.chunks) > 1 {
		c := sb.chunks[0]
		copy(sb.chunks, sb.chunks[1:])
		sb.chunks[len(sb.chunks)-1] = nil
		sb.chunks = sb.chunks[:len(sb.chunks)-1]
		sb.firstSeq++
		if len(c) == chunkSize && len(sb.spare) < 2 {
			sb.spare = append(sb.spare, c)
		}
	}
}

// encodeLine appends the compact form of cells to dst, which must have
// room for the worst case. runs is scratch space; it is returned for reuse.
func encodeLine(dst []byte, cells []cell, comb map[int]string, runs []byte) ([]byte, []byte) {
	base := len(dst)
	dst = append(dst, 0, 0, 0) // text length, filled in below
	runs = runs[:0]
	var fg, bg Color
	var attr Attr
	for i := range cells {
		c := &cells[i]
		if c.fg != fg || c.bg != bg || c.attr != attr {
			runs = appendRun(runs, i, c)
			fg, bg, attr = c.fg, c.bg, c.attr
		}
		if c.r < utf8.RuneSelf && c.fl == 0 {
			if c.w != 0 {
				dst = append(dst, byte(c.r))
			}
			continue
		}
		if c.w == 0 {
			continue
		}
		dst = utf8.AppendRune(dst, c.r)
		if c.fl&flComb != 0 {
			dst = append(dst, comb[i]...)
		}
	}
	n := len(dst) - base - 3
	dst[base], dst[base+1], dst[base+2] = byte(n), byte(n>>8), byte(n>>16)
	return append(dst, runs...), runs
}

// encodeASCII is encodeLine for rows holding only narrow ASCII cells.
func encodeASCII(dst []byte, cells []cell, runs []byte) ([]byte, []byte) {
	n := len(cells)
	base := len(dst)
	dst = dst[:base+3+n]
	dst[base], dst[base+1], dst[base+2] = byte(n), byte(n>>8), byte(n>>16)
	text := dst[base+3:]
	runs = runs[:0]
	var fg, bg Color
	var attr Attr
	for i := range cells {
		c := &cells[i]
		if c.fg != fg || c.bg != bg || c.attr != attr {
			runs = appendRun(runs, i, c)
			fg, bg, attr = c.fg, c.bg, c.attr
		}
		text[i] = byte(c.r)
	}
	return append(dst, runs...), runs
}

// maxRunLen bounds the encoded size of one style run: a start column
// below maxDim (2 uvarint bytes), the mask, fg, bg and attrs.
const maxRunLen = 2 + 1 + 4 + 4 + 2

// appendRun appends the style run of c starting at column col. Style runs
// are appended for nearly every coloured word of bulk output, so the run
// is written in place after a single capacity check rather than with one
// checked append per field.
func appendRun(runs []byte, col int, c *cell) []byte {
	n := len(runs)
	if cap(runs)-n < maxRunLen || col >= 1<<14 {
		return appendRunSlow(runs, col, c)
	}
	b := runs[n : n+maxRunLen]
	// The two runs of nearly every coloured word: a foreground colour
	// alone, then back to the default style.
	if col < 0x80 && c.bg == 0 && c.attr == 0 {
		b[0] = byte(col)
		if c.fg == 0 {
			b[1] = 0
			return runs[:n+2]
		}
		b[1] = 1
		binary.LittleEndian.PutUint32(b[2:6], uint32(c.fg))
		return runs[:n+6]
	}
	k := 1
	if col < 0x80 {
		b[0] = byte(col)
	} else {
		b[0], b[1] = byte(col)|0x80, byte(col>>7)
		k = 2
	}
	mi := k
	k++
	var mask byte
	if c.fg != 0 {
		mask |= 1
		binary.LittleEndian.PutUint32(b[k:], uint32(c.fg))
		k += 4
	}
	if c.bg != 0 {
		mask |= 2
		binary.LittleEndian.PutUint32(b[k:], uint32(c.bg))
		k += 4
	}
	if c.attr != 0 {
		mask |= 4
		binary.LittleEndian.PutUint16(b[k:], uint16(c.attr))
		k += 2
	}
	b[mi] = mask
	return runs[:n+k]
}

// appendRunSlow is appendRun when runs may have to grow.
func appendRunSlow(runs []byte, col int, c *cell) []byte {
	runs = binary.AppendUvarint(runs, uint64(col))
	var mask byte
	if c.fg != 0 {
		mask |= 1
	}
	if c.bg != 0 {
		mask |= 2
	}
	if c.attr != 0 {
		mask |= 4
	}
	runs = append(runs, mask)
	if c.fg != 0 {
		runs = binary.LittleEndian.AppendUint32(runs, uint32(c.fg))
	}
	if c.bg != 0 {
		runs = binary.LittleEndian.AppendUint32(runs, uint32(c.bg))
	}
	if c.attr != 0 {
		runs = binary.LittleEndian.AppendUint16(runs, uint16(c.attr))
	}
	return runs
}

// gmodeFlag is set in the last byte of an encoded line's text length
// when the line was printed with grapheme clustering (line.gmode): the
// length never needs it, and keeping the flag out of sbLine keeps pushing
// a line as cheap as it was.
const gmodeFlag = 0x80

func gmodeBit(gm bool) byte {
	if gm {
		return gmodeFlag
	}
	return 0
}

// encodedGmode reports whether an encoded line was printed with grapheme
// clustering.
func encodedGmode(data []byte) bool { return len(data) >= 3 && data[2]&gmodeFlag != 0 }

// lineText returns the text part of an encoded line.
func lineText(data []byte) []byte {
	if len(data) < 3 {
		return nil
	}
	n := int(data[0]) | int(data[1])<<8 | int(data[2]&^gmodeFlag)<<16
	if len(data)-3 < n {
		return nil
	}
	return data[3 : 3+n]
}

// decodeCells expands an encoded line into cells; gm says it was printed
// with grapheme clustering.
func decodeCells(data []byte, gm bool) []Cell {
	text := lineText(data)
	runs := data[min(len(data), 3+len(text)):]
	var out []Cell
	if gm {
		out = decodeClusters(text)
		text = nil
	} else {
		out = make([]Cell, 0, len(text))
	}
	for len(text) > 0 {
		r, size := utf8.DecodeRune(text)
		text = text[size:]
		w := 1
		if r >= 0x300 {
			w = runeWidth(r)
		}
		if w == 0 {
			for j := len(out) - 1; j >= 0; j-- {
				if out[j].Width > 0 {
					out[j].Comb += string(r)
					break
				}
			}
			continue
		}
		out = append(out, Cell{Rune: r, Width: w})
		if w == 2 {
			out = append(out, Cell{Width: 0})
		}
	}
	var st Style
	col := 0
	for len(runs) > 0 {
		start, k := binary.Uvarint(runs)
		if k <= 0 || len(runs) < k+1 {
			break
		}
		mask := runs[k]
		runs = runs[k+1:]
		var next Style
		if mask&1 != 0 && len(runs) >= 4 {
			next.Fg = Color(binary.LittleEndian.Uint32(runs))
			runs = runs[4:]
		}
		if mask&2 != 0 && len(runs) >= 4 {
			next.Bg = Color(binary.LittleEndian.Uint32(runs))
			runs = runs[4:]
		}
		if mask&4 != 0 && len(runs) >= 2 {
			next.Attrs = Attr(binary.LittleEndian.Uint16(runs))
			runs = runs[2:]
		}
		for ; col < int(start) && col < len(out); col++ {
			out[col].Style = st
		}
		st = next
	}
	for ; col < len(out); col++ {
		out[col].Style = st
	}
	return out
}
