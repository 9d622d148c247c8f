package screen

import (
	"encoding/binary"
	"unicode/utf8"
)

// printable8 reports whether all 8 bytes of w are printable ASCII
// (0x20-0x7e), using the "has less" / "has more" SWAR tests.
func printable8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := (w - 0x20*ones) &^ w
	more := (w + ones) | w
	return (less|more)&highs == 0
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
			b := p[i]
			if b >= 0x20 && b < 0x7f {
				j := i + 1
				for j+8 <= n && printable8(binary.LittleEndian.Uint64(p[j:])) {
					j += 8
				}
				for j < n && p[j] >= 0x20 && p[j] < 0x7f {
					j++
				}
				// Fast path: append to a compact row without wrapping.
				if l := s.cur.lines[s.y]; l.compact && s.x >= l.ccol && s.x+(j-i) < s.cols &&
					!s.wrapNext && !s.m.Insert && !s.charsets[s.gl] {
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
				s.execute(b)
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
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(p[i:]) {
			s.p.un = copy(s.p.ubuf[:], p[i:])
			return len(p)
		}
		if size > 1 && r >= 0xa0 {
			// Fast path: append the rune's bytes to a compact row.
			w := runeWidth(r)
			l := s.cur.lines[s.y]
			if w > 0 && l.compact && s.x >= l.ccol && s.x+w < s.cols &&
				!s.wrapNext && !s.m.Insert && !s.charsets[s.gl] {
				if s.x != l.ccol || s.pen.fg != l.rfg || s.pen.bg != l.rbg || s.pen.attr != l.rattr {
					compactStyle(l, s.x, &s.pen)
				}
				l.text = append(l.text, p[i:i+size]...)
				l.ccol = s.x + w
				l.combLen = 0
				l.complex = true
				s.x += w
				s.lastRune = r
				s.clean[s.y] = false
				i += size
				continue
			}
		}
		s.printRune(r)
		i += size
	}
	return i
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
	w := runeWidth(r)
	if w == 0 {
		s.combine(r)
		return
	}
	s.put(r, w)
}

// execute performs a C0 control.
func (s *Screen) execute(b byte) {
	switch b {
	case 0x07:
		s.event(Event{Kind: EventBell})
	case 0x08:
		s.backspace()
	case 0x09:
		s.tab(1)
	case 0x0a, 0x0b, 0x0c:
		s.linefeed()
	case 0x0d:
		s.x = 0
		s.wrapNext = false
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

func (ps *parser) pushParam() {
	if ps.np < maxParams {
		if ps.colon {
			ps.sub |= 1 << ps.np
		}
		ps.params[ps.np] = ps.cur
		ps.np++
	}
	ps.cur = -1
	ps.colon = false
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
