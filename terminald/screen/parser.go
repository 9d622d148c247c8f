package screen

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// nonPrintable8 returns a mask with the high bit set in the bytes of w
// (little endian) that are not printable ASCII (0x20-0x7e), using the
// "has less" / "has more" SWAR tests. Only the lowest set bit is exact: a
// borrow or carry out of a flagged byte may flag bytes above it, but never
// below, which is all scanPrintable needs.
func nonPrintable8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := (w - 0x20*ones) &^ w
	more := (w + ones) | w
	return (less | more) & highs
}

// scanPrintable returns the index of the first byte at or after p[j] that
// is not printable ASCII, or len(p). Eight bytes are tested at a time and
// the position inside the word comes from its lowest flagged byte, so a
// run costs a few instructions per 8 bytes and none per byte at its end.
func scanPrintable(p []byte, j int) int {
	// Walking a subslice lets the compiler drop the bounds checks.
	q := p[j:]
	for len(q) >= 8 {
		if m := nonPrintable8(binary.LittleEndian.Uint64(q)); m != 0 {
			return len(p) - len(q) + bits.TrailingZeros64(m)>>3
		}
		q = q[8:]
	}
	for len(q) > 0 && q[0]-0x20 < 0x5f {
		q = q[1:]
	}
	return len(p) - len(q)
}

// Parser states (a VT500-style machine, reduced to what xterm acts on).
const (
	stGround    uint8 = iota
	stEsc             // after ESC
	stCSI             // CSI parameters and intermediates
	stCSIIgnore       // malformed CSI: consume until its final byte
	stOSC             // OSC payload
	stString          // DCS, SOS, PM, APC payload: ignored until ST
)

const (
	maxParams = 32
	maxStr    = 4096 // OSC payload cap; the rest is discarded
)

// parser is the escape-sequence state kept across Write calls.
type parser struct {
	state uint8

	// UTF-8 bytes of a rune split across writes.
	ubuf [4]byte
	un   int

	// ESC / CSI.
	inter  byte // first intermediate byte
	inter2 bool // more than one intermediate
	priv   byte // CSI private marker: '?', '>', '<', '=' or 0
	params [maxParams]int32
	np     int
	sub    uint64 // bit i: params[i] followed a ':' (sub-parameter)
	cur    int32  // parameter being parsed, -1 if none yet
	colon  bool   // the separator before cur was ':'

	// OSC.
	str      []byte
	overflow bool
}

// Write feeds program output to the screen. It always consumes all of p
// and never fails.
func (s *Screen) Write(p []byte) (int, error) {
	ps := &s.p
	i, n := 0, len(p)
	for i < n {
		switch ps.state {
		case stGround:
			if ps.un > 0 {
				i = s.finishUTF8(p, i)
				continue
			}
			// sgrTried: groundCompact stopped at an ESC, which it does
			// where the SGR fast paths below would fail too (a CSI that
			// is not an SGR, such as cursor positioning, or too few
			// bytes left) or right after text filled the row. They
			// need not look at it again: at worst fastCSI then parses
			// an SGR, to the same effect (TestFastSGRMatchesGeneral).
			sgrTried := false
			if !s.wrapNext && !s.m.Insert && !s.charsets[s.gl] && !s.ext.margins {
				if i = s.groundCompact(p, i); i == n {
					break
				}
				sgrTried = p[i] == 0x1b
			}
			b := p[i]
			if b >= 0x20 && b < 0x7f {
				j := scanPrintable(p, i+1)
				// Fast path: append to a compact row without wrapping.
				if l := s.cur.lines[s.y]; l.compact && s.x >= l.ccol && s.x+(j-i) < s.cols &&
					!s.wrapNext && !s.m.Insert && !s.charsets[s.gl] && !s.ext.margins {
					compactAppend(l, s.x, p[i:j], &s.pen)
					s.x += j - i
					s.lastRune = rune(p[j-1])
					s.clean[s.y] = false
				} else {
					s.printASCII(p[i:j])
				}
				i = j
				continue
			}
			if b < 0x20 {
				if b == 0x1b && i+1 < n && p[i+1] == '[' {
					// "ESC [ m" and "ESC [ 0 m" end nearly every
					// coloured word: reset the pen without parsing.
					if !sgrTried && i+3 < n && (p[i+2] == 'm' || p[i+2] == '0' && p[i+3] == 'm') {
						s.pen.fg, s.pen.bg, s.pen.attr = 0, 0, 0
						i += 3
						if p[i-1] == '0' {
							i++
						}
						continue
					}
					if !sgrTried {
						if k := s.cachedSGR(p, i+2); k > 0 {
							i = k
							continue
						}
					}
					if k := s.fastCSI(p, i+2); k > 0 {
						i = k
						continue
					}
					// ESC [ straight into CSI parsing.
					ps.priv, ps.inter, ps.inter2 = 0, 0, false
					ps.np, ps.sub, ps.cur, ps.colon = 0, 0, -1, false
					ps.state = stCSI
					i = s.csiBytes(p, i+2)
					continue
				}
				// CR and LF end every line of bulk output: skip
				// execute's switch for them.
				switch b {
				case '\r':
					if s.ext.margins {
						s.carriageReturn()
					} else {
						s.x = 0
						s.wrapNext = false
						s.lastRune = 0
					}
				case '\n':
					s.lineFeed()
					s.lastRune = 0
				default:
					s.execute(b)
				}
				i++
				continue
			}
			if b == 0x7f {
				i++
				continue
			}
			i = s.printUTF8(p, i)
		case stEsc:
			i = s.escByte(p[i], i)
		case stCSI:
			i = s.csiBytes(p, i)
		case stCSIIgnore:
			b := p[i]
			i++
			switch {
			case b >= 0x40 && b <= 0x7e:
				ps.state = stGround
			case b < 0x20:
				s.controlInSequence(b)
			}
		case stOSC:
			i = s.oscBytes(p, i)
		case stString:
			for i < n {
				b := p[i]
				i++
				if b == 0x1b {
					ps.state = stEsc
					ps.inter, ps.inter2 = 0, false
					break
				}
				if b == 0x18 || b == 0x1a {
					ps.state = stGround
					break
				}
			}
		}
	}
	return n, nil
}

// groundCompact is the loop for bulk output: starting in the ground state
// at p[i], it appends printable ASCII and UTF-8 text (compactUTF8) to
// compact rows (compact.go), applies common SGR sequences and performs CR
// and LF, until it meets anything else, which it leaves for Write's
// general code; it returns the index of that byte (or len(p)).
//
// Output like cat of a log is almost only these five things. Handling them
// in one loop, with the cursor column in a local and the row's dirty flag
// and last printed rune stored once per row, instead of going round
// Write's state switch and re-checking the row and modes for every word,
// SGR and control byte, is most of the engine's speed on such output.
//
// The caller has checked what cannot change inside the loop: no pending
// wrap, no insert mode, no DEC graphics charset, no left/right margins, no
// partial UTF-8 rune.
// Each run is appended only if it fits before the right margin on a
// compact row with the cursor at or after its end, exactly the cases in
// which the general path would append it the same way; wrapping,
// overwriting and everything else take the general path.
func (s *Screen) groundCompact(p []byte, i int) int {
	n := len(p)
	l := s.cur.lines[s.y]
	x, cols := s.x, s.cols
	// last is the index in p of the last ASCII byte printed, or one of
	// the gc* states below.
	last := gcNone
	s.runEnd = 0
	dirty := false
	for i < n {
		b := p[i]
		switch {
		case b-0x20 < 0x5f: // printable ASCII
			// scanPrintable and the text append, inlined by hand: the
			// calls cost as much as the work for a typical word. The
			// rest of a run cut at the right margin is not scanned again
			// (s.runEnd, a field: a local made the loop slower): for a
			// long line without a newline, that made one write quadratic.
			j := s.runEnd
			if i >= j {
				q := p[i+1:]
				for len(q) >= 8 {
					if m := nonPrintable8(binary.LittleEndian.Uint64(q)); m != 0 {
						q = q[bits.TrailingZeros64(m)>>3:]
						break
					}
					q = q[8:]
				}
				for len(q) > 0 && q[0]-0x20 < 0x5f {
					q = q[1:]
				}
				j = n - len(q)
			}
			if !l.compact || x < l.ccol {
				goto out
			}
			wrap := false
			if x+(j-i) >= cols {
				// Lines longer than the screen: print up to the
				// right margin, then wrap as printASCII does.
				if !s.m.Autowrap {
					goto out
				}
				s.runEnd = j
				j, wrap = i+cols-x, true
			}
			if x != l.ccol {
				compactStyle(l, x, &s.pen)
			} else if s.pen.fg != l.rfg || s.pen.bg != l.rbg || s.pen.attr != l.rattr {
				l.runs = appendRun(l.runs, x, &s.pen)
				l.rfg, l.rbg, l.rattr, l.rbyte = s.pen.fg, s.pen.bg, s.pen.attr, len(l.text)
			}
			// Most runs between SGRs are a word or two, for which
			// append's memmove call costs more than the copy: when there
			// is room, 16 bytes are copied with two 8-byte loads and
			// stores (the bytes past j land in the text's spare
			// capacity, which nothing reads).
			t, k := l.text, j-i
			if m := len(t); k <= 16 && n-i >= 16 && cap(t)-m >= 16 {
				d, src := t[m:m+16], p[i:i+16]
				binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(src))
				binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(src[8:]))
				t = t[:m+k]
			} else {
				t = append(t, p[i:j]...)
			}
			l.text = t
			x += k
			l.ccol = x
			l.combLen = 0
			dirty = true
			last = j - 1
			i = j
			if wrap {
				// The cursor stays on the last column with a wrap
				// pending; printable text right after performs it.
				if i == n || p[i]-0x20 >= 0x5f {
					x = cols - 1
					s.wrapNext = true
					goto out
				}
				s.clean[s.y] = false
				dirty = false
				l.wrapped = true
				s.index()
				l = s.cur.lines[s.y]
				x = 0
			}
		case b == 0x1b:
			if i+3 >= n || p[i+1] != '[' {
				goto out
			}
			// "ESC [ m" and "ESC [ 0 m" end nearly every coloured
			// word: reset the pen without parsing.
			if p[i+2] == 'm' {
				s.pen.fg, s.pen.bg, s.pen.attr = 0, 0, 0
				i += 3
				continue
			}
			if p[i+2] == '0' && p[i+3] == 'm' {
				s.pen.fg, s.pen.bg, s.pen.attr = 0, 0, 0
				i += 4
				continue
			}
			// cachedSGR, with its hit path inlined.
			key, kn, ok := sgrKey(p, i+2)
			if ok {
				if e := &s.sgrCache[sgrSlot(key)]; e.key == key {
					e.op.apply(&s.pen)
					i += 2 + kn
					continue
				}
			}
			k := s.uncachedSGR(p, i+2, key, kn, ok)
			if k == 0 {
				goto out
			}
			i = k
		case b == '\r':
			x, last = 0, gcBreak
			i++
		case b == '\n':
			last = gcBreak
			if dirty {
				s.clean[s.y] = false
				dirty = false
			}
			s.x = x
			s.linefeed()
			l = s.cur.lines[s.y]
			x = s.x
			i++
		case b >= 0xc2 && b <= 0xf0:
			// Lead byte of a rune compactUTF8 may print.
			s.x = x
			k := s.compactUTF8(p, i)
			if k == i {
				goto out
			}
			x = s.x
			last = gcUTF8
			i = k
		default:
			goto out
		}
	}
out:
	s.x = x
	if dirty {
		s.clean[s.y] = false
	}
	// REP repeats the last character printed, and nothing after a line
	// break. Tracking it in last costs less than a store per CR or LF into
	// s.lastRune, or a scan for them here.
	if last >= 0 {
		s.lastRune = rune(p[last])
	} else if last == gcBreak {
		s.lastRune = 0
	}
	return i
}

// States of groundCompact's last, when no ASCII byte was printed last.
const (
	gcNone  = -1 // nothing printed yet: lastRune stays as it was
	gcUTF8  = -2 // compactUTF8 printed last and set lastRune
	gcBreak = -3 // a CR or LF came after the last character printed
)

// controlInSequence handles a C0 byte met inside an escape sequence: ESC
// restarts, CAN/SUB abort, others execute without leaving the sequence.
func (s *Screen) controlInSequence(b byte) {
	switch b {
	case 0x1b:
		s.p.state = stEsc
		s.p.inter, s.p.inter2 = 0, false
	case 0x18, 0x1a:
		s.p.state = stGround
	default:
		s.execute(b)
	}
}

// printUTF8 decodes and prints the run of non-ASCII runes starting at p[i].
func (s *Screen) printUTF8(p []byte, i int) int {
	for i < len(p) && p[i] >= 0x80 {
		if !s.ext.margins { // groundCompact's caller checks margins
			if k := s.compactUTF8(p, i); k > i {
				i = k
				continue
			}
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(p[i:]) {
			s.p.un = copy(s.p.ubuf[:], p[i:])
			return len(p)
		}
		s.printRune(r)
		i += size
	}
	return i
}

// compactUTF8 is the fast path for a run of multi-byte UTF-8 sequences
// (accented letters, Greek, Cyrillic, CJK, box drawing, symbols, emoji)
// printed on a compact row without wrapping. It decodes each rune inline,
// takes its width straight from the widths table and appends the whole
// run's bytes at once, with the style checked once per run: the general
// path costs a DecodeRune call, a runeWidth call and a checked append per
// rune. It returns the index after the runes it printed, i if none; it
// stops before anything it does not handle (invalid, overlong or
// incomplete sequences, surrogates, C1 controls, zero-width runes, runes
// past the widths table, the right margin), which the caller then prints
// the general way with exactly the same result. Callers make sure no
// left/right margins are set (checking that here slows the loop down).
//
// Text mixing scripts mixes sequence lengths at random: decoding other
// lengths by tables (utf8Seqs) rather than a branch per length saves a
// mispredicted branch per rune, a good part of the cost of such text.
func (s *Screen) compactUTF8(p []byte, i int) int {
	l := s.cur.lines[s.y]
	if !l.compact || s.x < l.ccol || s.wrapNext || s.m.Insert || s.charsets[s.gl] {
		return i
	}
	widthsOnce.Do(initWidths)
	x, cols, start := s.x, s.cols, i
	var last rune
	q := p[i:]
	for len(q) > 0 {
		// Runs of 3-byte sequences (CJK, kana, hangul, box drawing, most
		// symbols) take a loop of their own: with a fixed stride, the
		// next load does not wait for this rune's decoding.
		for len(q) >= 3 {
			b0, b1, b2 := q[0], q[1], q[2]
			if (uint32(b0)<<16|uint32(b1)<<8|uint32(b2))&0xf0c0c0 != 0xe08080 {
				break
			}
			r := rune(b0&0x0f)<<12 | rune(b1&0x3f)<<6 | rune(b2&0x3f)
			if r < 0x800 || uint32(r)-0xd800 < 0x800 {
				goto done // overlong or surrogate: invalid, decoded as U+FFFD bytewise
			}
			w := int(widths[r])
			if w == 0 || x+w >= cols {
				goto done
			}
			x += w
			q = q[3:]
			last = r
		}
		// Then a few runes of any length by tables: mixed text, which
		// leaves the loop above at a mispredicted branch, stays here a
		// while, without one.
		for k := 0; k < 32 && len(q) > 0; k++ {
			var v uint32
			if len(q) >= 4 {
				v = binary.LittleEndian.Uint32(q)
			} else {
				var b [4]byte // zeros: never a continuation byte
				copy(b[:], q)
				v = binary.LittleEndian.Uint32(b[:])
			}
			size := utf8SeqLen[byte(v)]
			d := &utf8Seqs[size]
			if size == 0 || v&d.mask != d.want {
				goto done
			}
			r := ((v&d.lead)<<18 | (v>>8&0x3f)<<12 | (v>>16&0x3f)<<6 | v>>24&0x3f) >> d.shift
			if r < d.min || r-0xd800 < 0x800 || r >= widthsLen {
				goto done // overlong, a C1 control, a surrogate or past the table
			}
			w := int(widths[r])
			if w == 0 || x+w >= cols {
				goto done
			}
			x += w
			q = q[size:]
			last = rune(r)
		}
	}
done:
	i = len(p) - len(q)
	if i == start || s.m.GraphemeCluster {
		// Mode 2027 (printGrapheme) is checked here, not above, where it
		// slowed the loop down.
		return start
	}
	if s.x != l.ccol || s.pen.fg != l.rfg || s.pen.bg != l.rbg || s.pen.attr != l.rattr {
		compactStyle(l, s.x, &s.pen) // before the text is appended: runs record its offset
	}
	l.text = append(l.text, p[start:i]...)
	l.ccol = x
	l.combLen = 0
	l.complex = true
	s.x = x
	s.lastRune = last
	s.clean[s.y] = false
	return i
}

// utf8SeqLen is the length of the UTF-8 sequence a lead byte starts, for
// the sequences compactUTF8 decodes (up to U+3FFFF), else 0.
var utf8SeqLen = func() (t [256]uint8) {
	for b := 0xc2; b <= 0xdf; b++ {
		t[b] = 2
	}
	for b := 0xe0; b <= 0xef; b++ {
		t[b] = 3
	}
	t[0xf0] = 4
	return t
}()

// utf8Seqs describes the UTF-8 sequences of each length, for decoding the
// 4 bytes at the start of a sequence as a little-endian v: v&mask == want
// checks the lead and continuation bytes' top bits; the rune is the lead's
// lead bits and three continuations' 6 bits, shifted right past the bytes
// that are not part of the sequence; min is the smallest rune the length
// may encode (shorter forms are overlong; for 2 bytes, C1 controls too,
// which compactUTF8 leaves to printRune to ignore).
var utf8Seqs = [5]struct {
	mask, want, lead, min, shift uint32
}{
	2: {0xc0e0, 0x80c0, 0x1f, 0xa0, 12},
	3: {0xc0c0f0, 0x8080e0, 0x0f, 0x800, 6},
	4: {0xc0c0c0f8, 0x808080f0, 0x07, 0x10000, 0},
}

// finishUTF8 continues a rune whose first bytes came in an earlier Write.
// It yields exactly what decoding the bytes in one piece would.
func (s *Screen) finishUTF8(p []byte, i int) int {
	ps := &s.p
	for i < len(p) {
		b := p[i]
		if b&0xc0 != 0x80 {
			// Interrupted: every pending byte is an invalid sequence.
			for ; ps.un > 0; ps.un-- {
				s.printRune(utf8.RuneError)
			}
			return i
		}
		ps.ubuf[ps.un] = b
		ps.un++
		i++
		if utf8.FullRune(ps.ubuf[:ps.un]) {
			r, size := utf8.DecodeRune(ps.ubuf[:ps.un])
			if size == ps.un {
				s.printRune(r)
			} else {
				for k := 0; k < ps.un; k++ {
					s.printRune(utf8.RuneError)
				}
			}
			ps.un = 0
			return i
		}
	}
	return i
}

func (s *Screen) printRune(r rune) {
	if r < 0xa0 {
		if r >= 0x20 && r < 0x7f {
			s.put(r, 1)
		}
		return // C1 controls decoded from UTF-8 are ignored
	}
	if s.m.GraphemeCluster {
		s.printGrapheme(r) // grapheme_width.go
		return
	}
	w := runeWidth(r)
	if w == 0 {
		s.combine(r)
		return
	}
	s.put(r, w)
}

// execute performs a C0 control. Any but NUL and ESC (whose sequence
// decides) cancels REP.
func (s *Screen) execute(b byte) {
	if b != 0 && b != 0x1b {
		s.lastRune = 0
	}
	switch b {
	case 0x07:
		s.event(Event{Kind: EventBell})
	case 0x08:
		s.backspace()
	case 0x09:
		s.tab(1)
	case 0x0a, 0x0b, 0x0c:
		s.lineFeed()
	case 0x0d:
		s.carriageReturn()
	case 0x0e:
		s.gl = 1
	case 0x0f:
		s.gl = 0
	case 0x1b:
		s.p.state = stEsc
		s.p.inter, s.p.inter2 = 0, false
	}
}

// escByte handles one byte after ESC.
func (s *Screen) escByte(b byte, i int) int {
	ps := &s.p
	switch {
	case b >= 0x20 && b <= 0x2f:
		if ps.inter == 0 {
			ps.inter = b
		} else {
			ps.inter2 = true
		}
		return i + 1
	case b < 0x20:
		s.controlInSequence(b)
		return i + 1
	case b == 0x7f:
		return i + 1
	case b >= 0x80:
		ps.state = stGround
		return i // reprocess as text
	}
	ps.state = stGround
	if ps.inter == 0 {
		switch b {
		case '[':
			ps.state = stCSI
			ps.priv, ps.inter, ps.inter2 = 0, 0, false
			ps.np, ps.sub, ps.cur, ps.colon = 0, 0, -1, false
		case ']':
			ps.state = stOSC
			ps.str = ps.str[:0]
			ps.overflow = false
		case 'P', 'X', '^', '_':
			ps.state = stString
		default:
			s.escDispatch(b)
		}
		return i + 1
	}
	if !ps.inter2 {
		s.escInterDispatch(ps.inter, b)
	}
	return i + 1
}

// fastCSI handles the common case of a complete CSI sequence with only
// digits and ';' before its final byte, all within p (p[i] is the byte
// after ESC [). It returns the index after the sequence, or 0 if the
// general parser must handle it; then nothing has been changed.
func (s *Screen) fastCSI(p []byte, i int) int {
	ps := &s.p
	np := 0
	cur := int32(-1)
	for ; i < len(p); i++ {
		b := p[i]
		if d := b - '0'; d <= 9 {
			if cur < 0 {
				cur = 0
			}
			if cur < 100000 {
				cur = cur*10 + int32(d)
			}
			continue
		}
		if np == maxParams {
			return 0
		}
		switch {
		case b == ';':
			ps.params[np] = cur
			np++
			cur = -1
		case b >= 0x40 && b <= 0x7e:
			ps.params[np] = cur
			ps.np = np + 1
			ps.sub, ps.cur, ps.colon = 0, -1, false
			ps.priv, ps.inter, ps.inter2 = 0, 0, false
			if b == 'm' {
				s.sgr()
			} else {
				s.csiDispatch(b)
			}
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// csiBytes consumes CSI parameter, intermediate and final bytes. The
// parameter being parsed and the count are kept in locals in the hot loop.
func (s *Screen) csiBytes(p []byte, i int) int {
	ps := &s.p
	cur, np := ps.cur, ps.np
	for i < len(p) {
		b := p[i]
		i++
		if d := b - '0'; d <= 9 {
			if ps.inter != 0 {
				ps.state = stCSIIgnore
				break
			}
			if cur < 0 {
				cur = 0
			}
			if cur < 100000 {
				cur = cur*10 + int32(d)
			}
			continue
		}
		switch {
		case b == ';' || b == ':':
			if ps.inter != 0 {
				ps.state = stCSIIgnore
				ps.cur, ps.np = cur, np
				return i
			}
			if np < maxParams {
				if ps.colon {
					ps.sub |= 1 << np
				}
				ps.params[np] = cur
				np++
			}
			cur = -1
			ps.colon = b == ':'
		case b >= 0x40 && b <= 0x7e:
			if np < maxParams {
				if ps.colon {
					ps.sub |= 1 << np
				}
				ps.params[np] = cur
				np++
			}
			ps.cur, ps.np, ps.colon = -1, np, false
			ps.state = stGround
			if !ps.inter2 {
				s.csiDispatch(b)
			}
			return i
		case b >= 0x3c && b <= 0x3f:
			if np > 0 || cur >= 0 || ps.priv != 0 || ps.inter != 0 {
				ps.state = stCSIIgnore
				ps.cur, ps.np = cur, np
				return i
			}
			ps.priv = b
		case b >= 0x20 && b <= 0x2f:
			if ps.inter == 0 {
				ps.inter = b
			} else {
				ps.inter2 = true
			}
		case b < 0x20:
			ps.cur, ps.np = cur, np
			s.controlInSequence(b)
			if ps.state != stCSI {
				return i
			}
		default: // DEL and bytes >= 0x80 are ignored
		}
	}
	ps.cur, ps.np = cur, np
	return i
}

// param returns parameter i, or def if it is missing or 0 (for counts).
func (ps *parser) param(i int, def int) int {
	if i >= ps.np || ps.params[i] <= 0 {
		return def
	}
	return int(ps.params[i])
}

// param0 returns parameter i, or def if missing (0 is kept).
func (ps *parser) param0(i int, def int) int {
	if i >= ps.np || ps.params[i] < 0 {
		return def
	}
	return int(ps.params[i])
}

// oscBytes collects an OSC payload until BEL or ST.
func (s *Screen) oscBytes(p []byte, i int) int {
	ps := &s.p
	start := i
	for i < len(p) {
		b := p[i]
		if b >= 0x20 || b == 0x09 { // fast: payload bytes, UTF-8 included
			i++
			continue
		}
		ps.appendStr(p[start:i])
		i++
		switch b {
		case 0x07:
			ps.state = stGround
			s.oscDispatch(true)
			return i
		case 0x1b:
			ps.state = stEsc
			ps.inter, ps.inter2 = 0, false
			s.oscDispatch(false)
			return i
		case 0x18, 0x1a:
			ps.state = stGround
			return i
		}
		start = i // other C0 bytes are dropped
	}
	ps.appendStr(p[start:i])
	return i
}

func (ps *parser) appendStr(b []byte) {
	if ps.overflow || len(b) == 0 {
		return
	}
	if len(ps.str)+len(b) > maxStr {
		ps.overflow = true
		ps.str = ps.str[:0]
		return
	}
	ps.str = append(ps.str, b...)
}
