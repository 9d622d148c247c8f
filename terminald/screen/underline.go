package screen

// Underline colours (SGR 58, 59). A cell holds no colour of its own for
// its underline: its attr numbers one of the screen's ulColors (see
// attrULMask). Programs use a few (an editor's error, warning and
// spelling underlines), so a small table serves; a colour past
// maxULColours is drawn in the nearest one already numbered.

// ulNumber returns the attr bits that number underline colour c, adding
// it to the screen's colours if it is new; 0 for the default colour.
func (s *Screen) ulNumber(c Color) Attr {
	if c.IsDefault() {
		return 0
	}
	for i, u := range s.ulColors {
		if u == c {
			return Attr(i+1) << attrULShift
		}
	}
	if len(s.ulColors) < maxULColours {
		s.ulColors = append(s.ulColors, c)
		return Attr(len(s.ulColors)) << attrULShift
	}
	best, bd := 0, 1<<30
	r, g, b := rgbOf(c)
	for i, u := range s.ulColors {
		ur, ug, ub := rgbOf(u)
		if d := dist3(r, g, b, int(ur), int(ug), int(ub)); d < bd {
			best, bd = i, d
		}
	}
	return Attr(best+1) << attrULShift
}

// underline turns the number in st.Attrs into st.Underline.
func (s *Screen) underline(st *Style) {
	if n := int(st.Attrs&attrULMask) >> attrULShift; n > 0 && n <= len(s.ulColors) {
		st.Underline = s.ulColors[n-1]
	}
	st.Attrs &^= attrULMask
}

// rgbOf is the 24-bit value of a colour: its own, or the xterm
// palette's for an indexed colour (the default ANSI colours for 0-15,
// which terminals theme).
func rgbOf(c Color) (r, g, b uint8) {
	if r, g, b, ok := c.RGB(); ok {
		return r, g, b
	}
	n, _ := c.Indexed()
	switch {
	case n < 16:
		v := ansiRGB[n]
		return uint8(v >> 16), uint8(v >> 8), uint8(v)
	case n >= 232:
		v := uint8(8 + 10*(int(n)-232))
		return v, v, v
	}
	n -= 16
	return uint8(cubeLevels[n/36]), uint8(cubeLevels[n/6%6]), uint8(cubeLevels[n%6])
}

// ansiRGB are xterm's default ANSI colours.
var ansiRGB = [16]uint32{
	0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
	0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
}
