package screen

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
				if v == 38 {
					pen.fg = Color(c)
				} else if v == 48 {
					pen.bg = Color(c)
				}
			}
			i = next - 1
		case v == 39:
			pen.fg = 0
		case v == 49:
			pen.bg = 0
		case v == 4:
			pen.attr &^= AttrUnderline | AttrDoubleUnderline | AttrCurlyUnderline
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
