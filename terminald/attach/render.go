package attach

import (
	"strconv"
	"strings"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// Renderer turns cells into the escape sequences that draw them on a
// client terminal. It remembers the pen (SGR state) and the input modes it
// last set on the client, so it emits only what changes. The zero value
// is a renderer for a 256-colour client whose state is unknown.
type Renderer struct {
	// TrueColor says the client takes 24-bit colour; without it RGB
	// colours are sent as the nearest xterm 256-colour index.
	TrueColor bool
	// UnderlineColor says the client takes SGR 58 in its colon form
	// (takesUnderlineColor); without it underlines take the text's
	// colour.
	UnderlineColor bool
	// Mouse keeps the client reporting button presses, drags and the
	// wheel, SGR-encoded, whatever the program asks (the session handles
	// the mouse: mouse.go); a program's wish for every motion is kept.
	Mouse bool

	pen    screen.Style
	penOK  bool // pen is known to be the client's state
	modes  clientModes
	cursor cursorState
}

// clientModes are the DEC modes the renderer set on the client.
type clientModes struct {
	appCursor, appKeypad, paste, focus bool
	mouse                              screen.MouseMode
	enc                                screen.MouseEncoding
	cursorStyle                        int
}

// cursorState is the client's cursor visibility as last set.
type cursorState struct {
	known, visible bool
}

// Reset forgets what the client shows: the next cell sets its pen from
// scratch. Call it when the client state is unknown (a full redraw).
func (r *Renderer) Reset() {
	r.penOK = false
	r.cursor = cursorState{}
}

// MoveTo moves the client's cursor to 0-based column x, row y.
func (r *Renderer) MoveTo(b []byte, x, y int) []byte {
	b = append(b, "\x1b["...)
	b = strconv.AppendInt(b, int64(y+1), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(x+1), 10)
	return append(b, 'H')
}

// Row draws cells at row y of a client cols wide: the cells up to cols,
// then the rest of the line erased in the default colours. A row shorter
// than cols (a smaller tab, a scrollback line) is padded the same way.
func (r *Renderer) Row(b []byte, y, cols int, cells []screen.Cell) []byte {
	b = r.MoveTo(b, 0, y)
	end := min(len(cells), cols)
	// Trailing default blanks are cheaper erased than written.
	for end > 0 && isDefaultBlank(cells[end-1]) {
		end--
	}
	x := 0
	for x < end {
		c := cells[x]
		if c.Width == 2 && x+1 >= cols {
			// A wide character that no longer fits: show a blank.
			c = screen.Cell{Rune: ' ', Width: 1, Style: c.Style}
		}
		b = r.setPen(b, c.Style)
		switch {
		case c.Width == 0:
			// Right half of a wide character whose left half was not
			// drawn (cut by the left edge): a blank keeps columns aligned.
			b = append(b, ' ')
			x++
			continue
		case c.Rune == 0 || c.Rune < 0x20 || c.Rune == 0x7f:
			b = append(b, ' ')
		default:
			b = appendRune(b, c.Rune)
			b = append(b, c.Comb...)
		}
		if c.Width == 2 {
			x += 2
		} else {
			x++
		}
	}
	if x < cols {
		b = r.setPen(b, screen.Style{})
		b = append(b, "\x1b[K"...)
	}
	return b
}

// isDefaultBlank reports whether c looks like an erased cell: a space on
// the default background with nothing drawn over it (its foreground
// colour does not show).
func isDefaultBlank(c screen.Cell) bool {
	return (c.Rune == ' ' || c.Rune == 0) && c.Width == 1 && c.Comb == "" && c.Style.Bg == 0 &&
		c.Style.Attrs&(screen.AttrInverse|screen.AttrUnderlines|screen.AttrStrike|screen.AttrOverline) == 0
}

func appendRune(b []byte, r rune) []byte {
	if r < 0x80 {
		return append(b, byte(r))
	}
	return append(b, string(r)...)
}

// ResetPen sets the client's pen to the default rendition.
func (r *Renderer) ResetPen(b []byte) []byte { return r.setPen(b, screen.Style{}) }

// setPen emits the SGR sequence that makes st the client's pen.
func (r *Renderer) setPen(b []byte, st screen.Style) []byte {
	if r.penOK && st == r.pen {
		return b
	}
	r.pen, r.penOK = st, true
	b = append(b, "\x1b[0"...)
	a := st.Attrs
	for _, m := range attrCodes {
		if a&m.attr != 0 {
			b = append(b, m.code...)
		}
	}
	b = append(b, underlineCode(a.Underline())...)
	b = r.appendColor(b, st.Fg, false)
	b = r.appendColor(b, st.Bg, true)
	b = append(b, 'm')
	if r.UnderlineColor && !st.Underline.IsDefault() && a&underlines != 0 {
		b = r.appendUnderlineColor(b, st.Underline)
	}
	return b
}

// underlines are the attributes that draw an underline.
const underlines = screen.AttrUnderlines

// appendUnderlineColor appends the SGR sequence of underline colour c, in
// the colon form (ITU T.416, as kitty, VTE, foot, WezTerm, iTerm2 and
// tmux take it), a sequence of its own: a terminal that does not know it
// then loses only that sequence, not the rest of the pen.
func (r *Renderer) appendUnderlineColor(b []byte, c screen.Color) []byte {
	rr, g, bl, ok := c.RGB()
	if ok && r.TrueColor {
		b = append(b, "\x1b[58:2::"...)
		b = strconv.AppendInt(b, int64(rr), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(g), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(bl), 10)
		return append(b, 'm')
	}
	n, _ := c.Indexed()
	if ok {
		n = screen.Nearest256(rr, g, bl)
	}
	b = append(b, "\x1b[58:5:"...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, 'm')
}

// takesUnderlineColor reports whether a client whose TERM is term takes
// SGR 58's colon form. Terminals that do not parse colons in SGR (the
// Linux console, old VTs) would read its numbers as other attributes.
// Every other TERM is taken to: the xterm-compatible terminals commonly
// met take it, and those that do not know it drop the sequence.
func takesUnderlineColor(term string) bool {
	switch {
	case term == "" || term == "dumb" || term == "linux" || term == "ansi",
		strings.HasPrefix(term, "vt"), strings.HasPrefix(term, "cons"), strings.HasPrefix(term, "linux-"):
		return false
	}
	return true
}

var attrCodes = []struct {
	attr screen.Attr
	code string
}{
	{screen.AttrBold, ";1"},
	{screen.AttrDim, ";2"},
	{screen.AttrItalic, ";3"},
	{screen.AttrBlink, ";5"},
	{screen.AttrInverse, ";7"},
	{screen.AttrHidden, ";8"},
	{screen.AttrStrike, ";9"},
	{screen.AttrOverline, ";53"},
}

// underlineCode is the SGR parameter of underline style u; the styles
// are not single bits (screen.Attr.Underline).
func underlineCode(u screen.Attr) string {
	switch u {
	case screen.AttrUnderline:
		return ";4"
	case screen.AttrDoubleUnderline:
		return ";21"
	case screen.AttrCurlyUnderline:
		return ";4:3"
	case screen.AttrDottedUnderline:
		return ";4:4"
	case screen.AttrDashedUnderline:
		return ";4:5"
	}
	return ""
}

// appendColor appends the SGR parameters for c as foreground or
// background (nothing for the default colour).
func (r *Renderer) appendColor(b []byte, c screen.Color, bg bool) []byte {
	if c.IsDefault() {
		return b
	}
	if rr, g, bl, ok := c.RGB(); ok {
		if !r.TrueColor {
			return appendIndexed(b, screen.Nearest256(rr, g, bl), bg)
		}
		if bg {
			b = append(b, ";48;2;"...)
		} else {
			b = append(b, ";38;2;"...)
		}
		b = strconv.AppendInt(b, int64(rr), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(g), 10)
		b = append(b, ';')
		return strconv.AppendInt(b, int64(bl), 10)
	}
	n, _ := c.Indexed()
	return appendIndexed(b, n, bg)
}

func appendIndexed(b []byte, n uint8, bg bool) []byte {
	base := 30
	if bg {
		base = 40
	}
	switch {
	case n < 8:
		b = append(b, ';')
		return strconv.AppendInt(b, int64(base+int(n)), 10)
	case n < 16:
		b = append(b, ';')
		return strconv.AppendInt(b, int64(base+60+int(n)-8), 10)
	}
	if bg {
		b = append(b, ";48;5;"...)
	} else {
		b = append(b, ";38;5;"...)
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// Cursor places the client's cursor at x, y and shows or hides it.
func (r *Renderer) Cursor(b []byte, x, y int, visible bool) []byte {
	if visible {
		b = r.MoveTo(b, x, y)
	}
	if !r.cursor.known || r.cursor.visible != visible {
		r.cursor = cursorState{known: true, visible: visible}
		if visible {
			b = append(b, "\x1b[?25h"...)
		} else {
			b = append(b, "\x1b[?25l"...)
		}
	}
	return b
}

// Modes makes the client's input modes (cursor keys, keypad, bracketed
// paste, mouse reporting, focus events) and cursor style match m.
func (r *Renderer) Modes(b []byte, m screen.Modes) []byte {
	want := clientModes{
		appCursor: m.AppCursor, appKeypad: m.AppKeypad, paste: m.BracketedPaste,
		focus: m.FocusEvents, mouse: m.Mouse, enc: m.MouseEncoding, cursorStyle: m.CursorStyle,
	}
	if r.Mouse {
		if want.mouse != screen.MouseAny {
			want.mouse = screen.MouseButton
		}
		want.enc = screen.MouseEncodingSGR
	}
	return r.setModes(b, want)
}

// ResetModes turns off every input mode the renderer set on the client,
// as a client must have them when it detaches.
func (r *Renderer) ResetModes(b []byte) []byte {
	return r.setModes(b, clientModes{})
}

func (r *Renderer) setModes(b []byte, want clientModes) []byte {
	have := r.modes
	b = decset(b, 1, have.appCursor, want.appCursor)
	b = decset(b, 2004, have.paste, want.paste)
	b = decset(b, 1004, have.focus, want.focus)
	if have.appKeypad != want.appKeypad {
		if want.appKeypad {
			b = append(b, "\x1b="...)
		} else {
			b = append(b, "\x1b>"...)
		}
	}
	if have.mouse != want.mouse {
		if code := mouseCodes[have.mouse]; code != 0 {
			b = decset(b, code, true, false)
		}
		if code := mouseCodes[want.mouse]; code != 0 {
			b = decset(b, code, false, true)
		}
	}
	if have.enc != want.enc {
		if code := encCodes[have.enc]; code != 0 {
			b = decset(b, code, true, false)
		}
		if code := encCodes[want.enc]; code != 0 {
			b = decset(b, code, false, true)
		}
	}
	if have.cursorStyle != want.cursorStyle {
		b = append(b, "\x1b["...)
		b = strconv.AppendInt(b, int64(want.cursorStyle), 10)
		b = append(b, " q"...)
	}
	r.modes = want
	return b
}

var mouseCodes = map[screen.MouseMode]int{
	screen.MouseX10: 9, screen.MouseNormal: 1000, screen.MouseButton: 1002, screen.MouseAny: 1003,
}

var encCodes = map[screen.MouseEncoding]int{
	screen.MouseEncodingUTF8: 1005, screen.MouseEncodingSGR: 1006,
	screen.MouseEncodingURXVT: 1015, screen.MouseEncodingSGRPixels: 1016,
}

// decset emits DECSET/DECRST for mode when its state changes.
func decset(b []byte, mode int, have, want bool) []byte {
	if have == want {
		return b
	}
	b = append(b, "\x1b[?"...)
	b = strconv.AppendInt(b, int64(mode), 10)
	if want {
		return append(b, 'h')
	}
	return append(b, 'l')
}

// RestoreClient is what a client writes when it leaves: end a frame cut
// short (synchronized output), reset the pen, turn off every input mode
// (mouse reporting included), show the cursor, leave the alternate screen.
const RestoreClient = "\x1b[?2026l\x1b[0m\x1b[?1l\x1b>\x1b[?2004l\x1b[?1004l\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l" +
	"\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l\x1b[0 q\x1b[?25h\x1b[?1049l"

// EnterClient is what a client writes when it attaches: the alternate
// screen (so the user's own screen comes back on detach), cleared.
const EnterClient = "\x1b[?1049h\x1b[H\x1b[2J"
