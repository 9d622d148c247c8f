package screen

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestUnderlineColour checks SGR 58 and 59 in their forms, and that the
// colour stays with the underline style and apart from the attributes.
func TestUnderlineColour(t *testing.T) {
	red := RGBColor(255, 0, 0)
	for _, c := range []struct {
		name  string
		in    string
		attrs Attr
		ul    Color
	}{
		{"curly, colon RGB", "\x1b[4:3;58:2::255:0:0mX", AttrCurlyUnderline, red},
		{"colon RGB with a colour space", "\x1b[4;58:2:0:255:0:0mX", AttrUnderline, red},
		{"semicolon RGB", "\x1b[4m\x1b[58;2;255;0;0mX", AttrUnderline, red},
		{"semicolon indexed", "\x1b[4;58;5;196mX", AttrUnderline, IndexedColor(196)},
		{"colon indexed", "\x1b[21;58:5:33mX", AttrDoubleUnderline, IndexedColor(33)},
		{"59 takes it away", "\x1b[4;58;5;196m\x1b[59mX", AttrUnderline, 0},
		{"0 takes it away", "\x1b[4;58;5;196m\x1b[0;4mX", AttrUnderline, 0},
		{"24 keeps it for the next underline", "\x1b[4;58;5;196m\x1b[24mX", 0, IndexedColor(196)},
		{"a later 58 replaces it", "\x1b[4;58;5;196;58;5;46mX", AttrUnderline, IndexedColor(46)},
		{"bold and colours beside it", "\x1b[1;31;4;58;5;196;44mX", AttrBold | AttrUnderline, IndexedColor(196)},
		{"an incomplete 58 changes nothing", "\x1b[4;58;5;196m\x1b[58;2;1mX", AttrUnderline, IndexedColor(196)},
		{"saved and restored with the cursor", "\x1b[4;58;5;196m\x1b7\x1b[0m\x1b8X", AttrUnderline, IndexedColor(196)},
	} {
		s := New(Options{Cols: 10, Rows: 2, Scrollback: 10})
		s.Write([]byte(c.in))
		got := s.Row(0)[0].Style
		if got.Attrs != c.attrs || got.Underline != c.ul {
			t.Errorf("%s: %q gives attrs %#x underline %#x, want %#x %#x", c.name, c.in, got.Attrs, got.Underline, c.attrs, c.ul)
		}
		// The colour survives the scrollback and a reflow.
		s.Write([]byte("\r\n\r\n"))
		sb, _ := s.ScrollbackRow(0)
		if len(sb) == 0 || sb[0].Style != got {
			t.Errorf("%s: in the scrollback %+v, want %+v", c.name, sb, got)
		}
		s.Resize(5, 2)
		sb, _ = s.ScrollbackRow(0)
		if len(sb) == 0 || sb[0].Style != got {
			t.Errorf("%s: after a reflow %+v, want %+v", c.name, sb, got)
		}
	}
}

// TestUnderlineColourRows checks rows of underlined text printed on the
// fast paths (ASCII runs, compact rows) and the slow ones (wide
// characters, insertions), and many colours: past the table's size the
// nearest one numbered is used.
func TestUnderlineColourRows(t *testing.T) {
	s := New(Options{Cols: 20, Rows: 3, Scrollback: 10})
	s.Write([]byte("ab\x1b[4:3;58:2::10:20:30mcurly\x1b[24;59m plain\r\n"))
	s.Write([]byte("\x1b[4;58;5;208m漢字\x1b[0m \x1b[2;1H\x1b[2@"))
	row := s.Row(0)
	for x, want := range []Color{0, 0, RGBColor(10, 20, 30), RGBColor(10, 20, 30), RGBColor(10, 20, 30), RGBColor(10, 20, 30), RGBColor(10, 20, 30), 0} {
		if row[x].Style.Underline != want {
			t.Errorf("row 0 column %d: underline %#x, want %#x", x, row[x].Style.Underline, want)
		}
	}
	if row := s.Row(1); row[2].Style.Underline != IndexedColor(208) || row[2].Rune != '漢' {
		t.Errorf("row 1 after an insertion: %+v", row[2])
	}
	s = New(Options{Cols: 80, Rows: 2, Scrollback: -1})
	for i := range maxULColours + 5 {
		s.Write([]byte(fmt.Sprintf("\x1b[4;58;2;%d;0;0mx", 8*i)))
	}
	row = s.Row(0)
	for i := range maxULColours {
		if want := RGBColor(uint8(8*i), 0, 0); row[i].Style.Underline != want {
			t.Errorf("colour %d: %#x, want %#x", i, row[i].Style.Underline, want)
		}
	}
	if got, want := row[maxULColours+4].Style.Underline, RGBColor(uint8(8*(maxULColours-1)), 0, 0); got != want {
		t.Errorf("a colour past the table: %#x, want the nearest, %#x", got, want)
	}
}

// TestUnderlineStyles checks each underline style of SGR 4:n and how
// the others replace it.
func TestUnderlineStyles(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Attr
	}{
		{"\x1b[4mX", AttrUnderline},
		{"\x1b[4:1mX", AttrUnderline},
		{"\x1b[4:2mX", AttrDoubleUnderline},
		{"\x1b[21mX", AttrDoubleUnderline},
		{"\x1b[4:3mX", AttrCurlyUnderline},
		{"\x1b[4:4mX", AttrDottedUnderline},
		{"\x1b[4:5mX", AttrDashedUnderline},
		{"\x1b[4:4;4mX", AttrUnderline},
		{"\x1b[4:5m\x1b[4:3mX", AttrCurlyUnderline},
		{"\x1b[4:4m\x1b[21mX", AttrDoubleUnderline},
		{"\x1b[4:5m\x1b[24mX", 0},
		{"\x1b[4:4m\x1b[4:0mX", 0},
		{"\x1b[1;4:5mX", AttrDashedUnderline},
	} {
		s := New(Options{Cols: 4, Rows: 1, Scrollback: -1})
		s.Write([]byte(c.in))
		if got := s.Row(0)[0].Style.Attrs.Underline(); got != c.want {
			t.Errorf("%q: underline %#x, want %#x", c.in, got, c.want)
		}
	}
}

// TestCellSize guards the engine's memory and speed: underline colours
// and styles live in spare attr bits, so a cell stays 16 bytes, and a
// Style's Underline fits in the padding of the public Cell.
func TestCellSize(t *testing.T) {
	if n := unsafe.Sizeof(cell{}); n != 16 {
		t.Errorf("cell is %d bytes, want 16", n)
	}
	if n := unsafe.Sizeof(Cell{}); unsafe.Sizeof(uintptr(0)) == 8 && n != 48 {
		t.Errorf("Cell is %d bytes, want 48", n)
	}
}
