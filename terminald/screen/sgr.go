package screen

import (
	"encoding/binary"
	"math/bits"
)

// sgr applies CSI ... m to the pen.
func (s *Screen) sgr() {
	ps := &s.p
	pen := &s.pen
	for i := 0; i < ps.np; i++ {
		v := ps.params[i]
		if i > 0 && ps.sub&(1<<i) != 0 {
			continue // stray sub-parameter
		}
		switch {
		case v <= 0:
			pen.fg, pen.bg, pen.attr = 0, 0, 0
		case v >= 30 && v <= 37:
			pen.fg = IndexedColor(uint8(v - 30))
		case v >= 40 && v <= 47:
			pen.bg = IndexedColor(uint8(v - 40))
		case v >= 90 && v <= 97:
			pen.fg = IndexedColor(uint8(v - 90 + 8))
		case v >= 100 && v <= 107:
			pen.bg = IndexedColor(uint8(v - 100 + 8))
		case v == 38 || v == 48 || v == 58:
			c, next := ps.extColor(i)
			if c >= 0 {
				switch v {
				case 38:
					pen.fg = Color(c)
				case 48:
					pen.bg = Color(c)
				default:
					pen.attr = pen.attr&^attrULMask | s.ulNumber(Color(c))
				}
			}
			i = next - 1
		case v == 39:
			pen.fg = 0
		case v == 49:
			pen.bg = 0
		case v == 59:
			pen.attr &^= attrULMask
		case v == 4:
			pen.attr &^= AttrUnderlines
			sub := 1
			if i+1 < ps.np && ps.sub&(1<<(i+1)) != 0 {
				sub = int(ps.params[i+1])
				i++
			}
			switch sub {
			case 0:
			case 2:
				pen.attr |= AttrDoubleUnderline
			case 3:
				pen.attr |= AttrCurlyUnderline
			case 4:
				pen.attr |= AttrDottedUnderline
			case 5:
				pen.attr |= AttrDashedUnderline
			default:
				pen.attr |= AttrUnderline
			}
		default:
			pen.attr = sgrAttr(pen.attr, v)
		}
	}
}

// sgrAttr applies a plain attribute code.
func sgrAttr(a Attr, v int32) Attr {
	switch v {
	case 1:
		a |= AttrBold
	case 2:
		a |= AttrDim
	case 3:
		a |= AttrItalic
	case 5, 6:
		a |= AttrBlink
	case 7:
		a |= AttrInverse
	case 8:
		a |= AttrHidden
	case 9:
		a |= AttrStrike
	case 21:
		a = a&^(AttrUnderline|AttrCurlyUnderline) | AttrDoubleUnderline
	case 22:
		a &^= AttrBold | AttrDim
	case 23:
		a &^= AttrItalic
	case 24:
		a &^= AttrUnderline | AttrDoubleUnderline | AttrCurlyUnderline
	case 25:
		a &^= AttrBlink
	case 27:
		a &^= AttrInverse
	case 28:
		a &^= AttrHidden
	case 29:
		a &^= AttrStrike
	case 53:
		a |= AttrOverline
	case 55:
		a &^= AttrOverline
	}
	return a
}

// extColor parses the colour after a 38/48/58 at params[i], in either the
// ";5;n" / ";2;r;g;b" form or the ":5:n" / ":2[:cs]:r:g:b" form. It returns
// the colour (-1 if invalid) and the index of the next unread parameter.
func (ps *parser) extColor(i int) (int64, int) {
	j := i + 1
	if j >= ps.np {
		return -1, j
	}
	colon := ps.sub&(1<<j) != 0
	if colon {
		// Sub-parameters: take everything up to the next ';' parameter.
		end := j
		for end < ps.np && ps.sub&(1<<end) != 0 {
			end++
		}
		sub := ps.params[j:end]
		switch {
		case len(sub) >= 2 && sub[0] == 5:
			return int64(IndexedColor(uint8(clampByte(sub[1])))), end
		case len(sub) >= 4 && sub[0] == 2:
			rgb := sub[1:]
			if len(rgb) >= 4 {
				rgb = rgb[1:] // colour space id
			}
			return int64(RGBColor(clampByte(rgb[0]), clampByte(rgb[1]), clampByte(rgb[2]))), end
		}
		return -1, end
	}
	switch ps.params[j] {
	case 5:
		if j+1 < ps.np {
			return int64(IndexedColor(clampByte(ps.params[j+1]))), j + 2
		}
		return -1, ps.np
	case 2:
		if j+3 < ps.np {
			return int64(RGBColor(clampByte(ps.params[j+1]), clampByte(ps.params[j+2]), clampByte(ps.params[j+3]))), j + 4
		}
		return -1, ps.np
	}
	return -1, j + 1
}

func clampByte(v int32) uint8 {
	return uint8(min(max(v, 0), 255))
}

// sgrUnderlines are the attributes a plain SGR 4 replaces: every
// underline style.
const sgrUnderlines = AttrUnderlines

// sgrOp is the effect of a whole SGR sequence on the pen. Every SGR code
// either leaves a colour alone or replaces it, and maps the attributes as
// a &^ clr | set; compositions keep that form, so any sequence of codes is
// one sgrOp whatever the pen it is applied to.
type sgrOp struct {
	fg, bg         Color
	fgKeep, bgKeep Color // all ones to keep the pen's colour, 0 to replace it
	clr, set       Attr
	// ext is set if the sequence held a 256-colour or true colour. Such
	// sequences are not cached: their colours are many (often one per
	// word), so they would only evict the few short ones that repeat.
	ext bool
}

var identityOp = sgrOp{fgKeep: ^Color(0), bgKeep: ^Color(0)}

// attrs composes the attribute map a -> f(a), for f of the form
// a &^ C | S, after op's: S = f(0) and C = ^f(all) (the bits f clears and
// does not set).
func (op *sgrOp) attrs(f0, fAll Attr) {
	c := ^fAll
	op.clr |= c
	op.set = op.set&^c | f0
}

func (op *sgrOp) apply(pen *cell) {
	pen.fg = pen.fg&op.fgKeep | op.fg
	pen.bg = pen.bg&op.bgKeep | op.bg
	pen.attr = pen.attr&^op.clr | op.set
}

// sgrCacheSize is the number of entries of a Screen's SGR cache (a power
// of two).
const sgrCacheSize = 64

// sgrCacheEntry maps the bytes of a short SGR sequence after "ESC [", up
// to and including its 'm' and zero-padded to 8 bytes, to its effect. A
// key always holds an 'm', so the zero key marks an empty entry.
type sgrCacheEntry struct {
	key uint64
	op  sgrOp
}

// sgrKey returns the cache key of the SGR sequence whose parameters start
// at p[i], and its length up to and including the 'm'; ok is false if the
// first 'm' is not among the next 8 bytes (or fewer than 8 bytes are
// left). The key only identifies the bytes: the entry exists only if
// fastSGR accepted exactly those bytes, so a hit needs no other check.
func sgrKey(p []byte, i int) (key uint64, n int, ok bool) {
	if len(p)-i < 8 {
		return 0, 0, false
	}
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	w := binary.LittleEndian.Uint64(p[i:])
	x := w ^ 'm'*ones
	// Zero bytes of x: only the lowest flagged byte is exact (borrows move
	// up), and the lowest is the one wanted.
	z := (x - ones) &^ x & highs
	if z == 0 {
		return 0, 0, false
	}
	n = bits.TrailingZeros64(z)>>3 + 1
	return w & (^uint64(0) >> (64 - 8*n)), n, true
}

// sgrSlot hashes a key to its cache entry.
func sgrSlot(key uint64) int {
	return int((key * 0x9e3779b97f4a7c15) >> (64 - 6))
}

// cachedSGR applies the SGR sequence starting at p[i] (the byte after
// "ESC [") if it is short and was seen before, and returns the index after
// it; otherwise it parses it with fastSGR, caching its effect when it is
// short. It returns 0 when fastSGR does not accept the sequence.
//
// Coloured output repeats a handful of short sequences ("1;31m", "0m",
// "38;5;12m") millions of times: a cache hit costs a load, a multiply and
// a compare instead of parsing the parameters again.
func (s *Screen) cachedSGR(p []byte, i int) int {
	key, n, ok := sgrKey(p, i)
	if ok {
		e := &s.sgrCache[sgrSlot(key)]
		if e.key == key {
			e.op.apply(&s.pen)
			return i + n
		}
	}
	return s.uncachedSGR(p, i, key, n, ok)
}

// uncachedSGR is cachedSGR after a cache miss, given what sgrKey returned.
func (s *Screen) uncachedSGR(p []byte, i int, key uint64, n int, ok bool) int {
	if notSGR(p, i) {
		return 0
	}
	op, k := fastSGR(p, i)
	if k == 0 {
		return 0
	}
	op.apply(&s.pen)
	if ok && k == i+n && !op.ext {
		s.sgrCache[sgrSlot(key)] = sgrCacheEntry{key: key, op: op}
	}
	return k
}

// notSGR reports whether the CSI sequence whose parameters start at p[i]
// certainly is no SGR: among its next 8 bytes, the first that is not a
// digit, ':' or ';' is not an 'm'. Cursor positioning ("ESC [ 12;40 H") comes
// as often as SGR in some output (vtebench's cursor_motion: once per
// character), and its failed parse in fastSGR, twice per sequence
// (groundCompact, then Write), was 40% of the engine's time on that
// stream. Only 8 bytes are looked at: a long SGR ("38;5;123;48;5;45m",
// one per cell in dense_cells) would otherwise be scanned once here and
// again by fastSGR.
func notSGR(p []byte, i int) bool {
	if len(p)-i < 8 {
		return false // fastSGR decides
	}
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	w := binary.LittleEndian.Uint64(p[i:])
	// Per byte, in its high bit: it is in '0'..';' (digits, ':' and
	// ';'). The low 7 bits are compared so that no sum carries into the
	// next byte; a byte with its own high bit set is no parameter.
	a := w &^ highs
	ge := (a + (0x80-'0')*ones) & highs // a >= '0'
	le := ((0x80+';')*ones - a) & highs // a <= ';'
	other := ^(ge & le &^ w) & highs    // not a parameter byte
	if other == 0 {
		return false // a long sequence: fastSGR decides
	}
	b := p[i+bits.TrailingZeros64(other)>>3]
	return b != 'm'
}

// States of fastSGR: what the next parameter is.
const (
	sgrCode  = iota // an SGR code
	sgrKind         // 5 or 2 after 38/48
	sgrIndex        // the palette index after 38;5 / 48;5
	sgrR            // the components after 38;2 / 48;2
	sgrG
	sgrB
)

// fastSGR parses a complete "ESC [ params m" whose parameters are the
// common SGR forms, with p[i] the byte after "ESC [", into its effect. It
// returns the index after the 'm', or 0 when the sequence is not such an
// SGR, is split across writes or uses anything unusual (colons, empty or
// long numbers in colours, rare codes); the general CSI parser then
// handles it.
//
// Coloured output (ls, grep, compilers, logs) sends an SGR for nearly
// every coloured word, often with a 256-colour or true colour that no
// cache can hold, so this path composes each parameter's effect as it is
// read instead of collecting parameters for the dispatcher. The extended
// colours are states of one loop so that the digit parsing, unrolled for
// up to 3 digits after a single bounds check, exists once and inline.
// Its results must equal those of sgr for every sequence it accepts; the
// fallback keeps the rare forms in one place.
func fastSGR(p []byte, i int) (sgrOp, int) {
	op := identityOp
	state, ext := sgrCode, int32(0)
	var r, g int32
	q := p[i:] // walking a subslice drops the bounds checks
	for {
		if len(q) < 4 {
			return op, 0
		}
		v := int32(-1)
		var t byte
		if d0 := q[0] - '0'; d0 > 9 {
			t = q[0]
			q = q[1:]
		} else if d1 := q[1] - '0'; d1 > 9 {
			v, t = int32(d0), q[1]
			q = q[2:]
		} else if d2 := q[2] - '0'; d2 > 9 {
			v, t = int32(d0)*10+int32(d1), q[2]
			q = q[3:]
		} else if q[3]-'0' > 9 {
			v, t = int32(d0)*100+int32(d1)*10+int32(d2), q[3]
			q = q[4:]
		} else {
			return op, 0 // the general parser saturates long numbers
		}
		if t != ';' && t != 'm' {
			return op, 0
		}
		switch state {
		case sgrCode:
			switch {
			case v <= 0:
				op = sgrOp{clr: ^Attr(0)}
			case v == 4:
				op.attrs(AttrUnderline, ^sgrUnderlines|AttrUnderline)
			case v < 30:
				op.attrs(sgrAttr(0, v), sgrAttr(^Attr(0), v))
			case v <= 37:
				op.fg, op.fgKeep = IndexedColor(uint8(v-30)), 0
			case v == 38 || v == 48:
				state, ext = sgrKind, v
			case v == 39:
				op.fg, op.fgKeep = 0, 0
			case v <= 47:
				op.bg, op.bgKeep = IndexedColor(uint8(v-40)), 0
			case v == 49:
				op.bg, op.bgKeep = 0, 0
			case v >= 90 && v <= 97:
				op.fg, op.fgKeep = IndexedColor(uint8(v-90+8)), 0
			case v >= 100 && v <= 107:
				op.bg, op.bgKeep = IndexedColor(uint8(v-100+8)), 0
			default:
				return op, 0
			}
		case sgrKind:
			switch v {
			case 5:
				state = sgrIndex
			case 2:
				state = sgrR
			default:
				return op, 0
			}
		case sgrIndex:
			if v < 0 {
				return op, 0
			}
			op.setExt(ext, IndexedColor(clampByte(v)))
			state = sgrCode
		case sgrR:
			r, state = v, sgrG
		case sgrG:
			g, state = v, sgrB
		case sgrB:
			if r < 0 || g < 0 || v < 0 {
				return op, 0
			}
			op.setExt(ext, RGBColor(clampByte(r), clampByte(g), clampByte(v)))
			state = sgrCode
		}
		if t == 'm' {
			if state != sgrCode {
				return op, 0 // incomplete colour: sgr's rules for it are subtle
			}
			return op, len(p) - len(q)
		}
	}
}

// setExt sets the colour of an extended colour code (38 or 48).
func (op *sgrOp) setExt(code int32, c Color) {
	op.ext = true
	if code == 38 {
		op.fg, op.fgKeep = c, 0
	} else {
		op.bg, op.bgKeep = c, 0
	}
}
