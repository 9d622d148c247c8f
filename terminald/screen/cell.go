package screen

// Color is the colour of a cell's foreground or background. The zero value
// is the terminal's default colour. Use [IndexedColor] and [RGBColor] to
// build the other kinds and [Color.Indexed] / [Color.RGB] to read them.
type Color uint32

const (
	colorIndexed = 1 << 24
	colorRGB     = 2 << 24
	colorKind    = 0xff << 24
)

// IndexedColor returns palette colour n (0-15 are the ANSI colours, 16-255
// the xterm 256-colour cube and grey ramp).
func IndexedColor(n uint8) Color { return Color(colorIndexed | uint32(n)) }

// RGBColor returns a 24-bit true colour.
func RGBColor(r, g, b uint8) Color {
	return Color(colorRGB | uint32(r)<<16 | uint32(g)<<8 | uint32(b))
}

// IsDefault reports whether c is the terminal's default colour.
func (c Color) IsDefault() bool { return c == 0 }

// Indexed returns the palette index of an indexed colour.
func (c Color) Indexed() (n uint8, ok bool) {
	return uint8(c), c&colorKind == colorIndexed
}

// RGB returns the components of a true colour.
func (c Color) RGB() (r, g, b uint8, ok bool) {
	return uint8(c >> 16), uint8(c >> 8), uint8(c), c&colorKind == colorRGB
}

// Attr is a set of SGR rendition attributes.
type Attr uint16

// Rendition attributes kept per cell.
const (
	AttrBold Attr = 1 << iota
	AttrDim
	AttrItalic
	AttrUnderline
	AttrBlink
	AttrInverse
	AttrHidden
	AttrStrike
	AttrDoubleUnderline
	AttrCurlyUnderline
	AttrOverline
)

// The dotted and dashed underlines (SGR 4:4, 4:5) are pairs of the
// underline bits that no other SGR sets together, so that they need no
// bits of their own: read a cell's underline with [Attr.Underline], not
// bit by bit.
const (
	AttrDottedUnderline = AttrUnderline | AttrDoubleUnderline
	AttrDashedUnderline = AttrUnderline | AttrCurlyUnderline
	// AttrUnderlines are the bits of every underline style.
	AttrUnderlines = AttrUnderline | AttrDoubleUnderline | AttrCurlyUnderline
)

// Underline returns the underline style a holds: 0 (none),
// AttrUnderline, AttrDoubleUnderline, AttrCurlyUnderline,
// AttrDottedUnderline or AttrDashedUnderline.
func (a Attr) Underline() Attr { return a & AttrUnderlines }

// The top bits of a cell's attr are not attributes: they number the
// cell's underline colour in Screen.ulColors (0: the text's colour), so
// that the colour rides with the attributes through printing, compact
// rows, the scrollback and reflow without making a cell larger. A Style
// returned by Row or ScrollbackRow has them turned into Underline.
const (
	attrULShift       = 11
	attrULMask   Attr = 0x1f << attrULShift
	maxULColours      = int(attrULMask >> attrULShift) // colours one screen numbers
)

// Style is the rendition of a cell: colours and attributes.
type Style struct {
	Fg, Bg Color
	Attrs  Attr
	// Underline is the underline's colour (SGR 58); the default colour
	// means the text's.
	Underline Color
}

// Cell is one screen cell as returned by [Screen.Row] and
// [Screen.ScrollbackRow].
type Cell struct {
	// Rune is the character shown; ' ' for a blank cell and 0 for the
	// right half of a wide character.
	Rune rune
	// Comb holds zero-width runes (combining marks, variation selectors,
	// joiners) that follow Rune in the same cell; usually "".
	Comb string
	// Width is 1 for a normal cell, 2 for the left half of a wide
	// character and 0 for its right half.
	Width int
	// Style is the cell's rendition.
	Style Style
}

// String returns the text of the cell ("" for the right half of a wide
// character).
func (c Cell) String() string {
	if c.Width == 0 {
		return ""
	}
	return string(c.Rune) + c.Comb
}

// cell is the internal 16-byte cell.
type cell struct {
	r    rune
	fg   Color
	bg   Color
	attr Attr
	w    uint8 // 1, 2 (left half of wide) or 0 (right half of wide)
	fl   uint8 // flComb, flPad
}

const (
	flComb = 1 << iota // combining marks are stored in line.comb
	flPad              // blank left at the end of a row when a wide char wrapped
)

func (c *cell) style() Style { return Style{Fg: c.fg, Bg: c.bg, Attrs: c.attr} }

// line is one visible row.
type line struct {
	c       []cell
	wrapped bool // the row continues on the next one (autowrap)
	// gmode is set once the row holds text printed with grapheme
	// clustering (mode 2027): it is cut into cells by clusters when
	// materialised, read back or reflowed (grapheme_width.go).
	gmode bool
	// used bounds the written part: every cell at index >= used is
	// exactly blankCell. It lets scrollback compaction skip the blank tail.
	used int
	// complex is set once a cell holds anything but a narrow ASCII rune
	// (wide, non-ASCII, combining, wrap padding); cleared by resetLine.
	complex bool

	// Compact form (see compact.go): when compact is set the row is text
	// (ASCII) plus style runs, and c is stale.
	compact bool
	text    []byte
	runs    []byte
	rfg     Color // style of the last run
	rbg     Color
	rattr   Attr
	rbyte   int            // text length when the last run started
	ccol    int            // columns covered by text
	combLen int            // bytes of zero-width runes after the last base rune
	cpad    bool           // the last column is a wrap pad, not text (padCompact)
	comb    map[int]string // combining marks of cells with flComb, by column
}

// maxComb caps the bytes of combining marks kept per cell.
const maxComb = 32
