package screen

import (
	"reflect"
	"strings"
	"testing"
)

func TestResize(t *testing.T) {
	s := New(Options{Cols: 10, Rows: 4})
	s.Write([]byte("0123456789abc\r\nline2\r\nline3"))
	// Narrower: the wrapped line is re-wrapped (reflow_test.go has the
	// details); the cursor stays after "line3", with a wrap pending.
	s.Resize(5, 4)
	checkInvariants(t, s)
	if got := rowText(s, 0); got != "56789" || s.ScrollbackLen() != 1 {
		t.Errorf("row0 after narrowing %q, sb %d", got, s.ScrollbackLen())
	}
	if c := s.Cursor(); c.X != 4 || c.Y != 3 {
		t.Errorf("cursor %+v", c)
	}
	// Shorter: rows above the cursor go to the scrollback.
	s.Resize(5, 2)
	checkInvariants(t, s)
	if s.ScrollbackLen() != 3 || rowText(s, 0) != "line2" || rowText(s, 1) != "line3" {
		t.Errorf("sb %d rows %q %q", s.ScrollbackLen(), rowText(s, 0), rowText(s, 1))
	}
	// Wider and taller: the line is whole again, new cells are blank.
	s.Resize(20, 6)
	checkInvariants(t, s)
	if got := s.LastLines(10); !reflect.DeepEqual(got, []string{"0123456789abc", "line2", "line3"}) {
		t.Errorf("lines %q", got)
	}
	if c := s.Cursor(); c.X != 5 || c.Y != 1 {
		t.Errorf("cursor after widening %+v", c)
	}
	s.Write([]byte("\x1b[6;20HZ"))
	if rowText(s, 5) != strings.Repeat(" ", 19)+"Z" {
		t.Errorf("row5 %q", rowText(s, 5))
	}

	// Blank rows below the cursor are dropped first when shrinking.
	s2 := New(Options{Cols: 10, Rows: 6})
	s2.Write([]byte("a\r\nb"))
	s2.Resize(10, 3)
	if s2.ScrollbackLen() != 0 || rowText(s2, 0) != "a" || s2.Cursor().Y != 1 {
		t.Errorf("sb %d row0 %q cursor %+v", s2.ScrollbackLen(), rowText(s2, 0), s2.Cursor())
	}

	// Resizing on the alt screen keeps both buffers consistent.
	s3 := New(Options{Cols: 10, Rows: 4})
	s3.Write([]byte("main\x1b[?1049h\x1b[4;1Halt"))
	s3.Resize(6, 2)
	checkInvariants(t, s3)
	s3.Write([]byte("\x1b[?1049l"))
	checkInvariants(t, s3)
	if got := s3.LastLines(5); !reflect.DeepEqual(got, []string{"main"}) {
		t.Errorf("after alt resize %q", got)
	}
	// Degenerate sizes are clamped.
	s3.Resize(0, -1)
	if c, r := s3.Size(); c != 1 || r != 1 {
		t.Errorf("size %dx%d", c, r)
	}
	s3.Write([]byte("日本語abc\r\n"))
	checkInvariants(t, s3)
}

func TestScrollbackRowStyles(t *testing.T) {
	s := New(Options{Cols: 10, Rows: 1})
	// A compact row, a cell row (overwritten), wide + combining.
	s.Write([]byte("\x1b[31mred\x1b[0m \x1b[1;44mbold\x1b[0m\r\n"))
	s.Write([]byte("abcdef\x1b[2G\x1b[32mX\x1b[0m\r\n"))
	s.Write([]byte("日e\u0301\x1b[7m本\x1b[0m\r\n"))
	if s.ScrollbackLen() != 3 {
		t.Fatalf("sb %d", s.ScrollbackLen())
	}
	row, wrapped := s.ScrollbackRow(0)
	if wrapped || len(row) != 8 || row[0].Style.Fg != IndexedColor(1) || row[3].Style != (Style{}) ||
		row[4].Style != (Style{Bg: IndexedColor(4), Attrs: AttrBold}) || row[7].Rune != 'd' {
		t.Errorf("row0 %+v", row)
	}
	row, _ = s.ScrollbackRow(1)
	if dumpCells(row) != "a{1000002,0,0}X{0,0,0}cdef" {
		t.Errorf("row1 %s", dumpCells(row))
	}
	row, _ = s.ScrollbackRow(2)
	if len(row) != 5 || row[0].Width != 2 || row[1].Width != 0 || row[2].Comb != "\u0301" ||
		row[3].Rune != '本' || row[3].Style.Attrs != AttrInverse || row[4].Style.Attrs != AttrInverse {
		t.Errorf("row2 %+v", row)
	}
	if got := s.LastLines(5); !reflect.DeepEqual(got, []string{"red bold", "aXcdef", "日e\u0301本"}) {
		t.Errorf("lines %q", got)
	}
	if r, _ := s.ScrollbackRow(3); r != nil {
		t.Error("out of range row")
	}
}

func TestScrollbackDisabledAndNilCallbacks(t *testing.T) {
	s := New(Options{Cols: 5, Rows: 2, Scrollback: -1})
	s.Write([]byte("1\r\n2\r\n3\x1b[c\x1b]11;?\x07\a\x1b]2;t\x07"))
	if s.ScrollbackLen() != 0 || !reflect.DeepEqual(s.LastLines(5), []string{"2", "3"}) || s.Title() != "t" {
		t.Errorf("sb %d lines %q", s.ScrollbackLen(), s.LastLines(5))
	}
}

func TestDirty(t *testing.T) {
	s := New(Options{Cols: 10, Rows: 4})
	if len(s.Dirty()) != 0 {
		t.Errorf("fresh screen dirty %v", s.Dirty())
	}
	s.Write([]byte("\x1b[3;1Hx"))
	if got := s.Dirty(); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("dirty %v", got)
	}
	s.ClearDirty()
	s.Write([]byte("\x1b[4;1H\n"))
	if got := s.Dirty(); len(got) != 4 {
		t.Errorf("after scroll dirty %v", got)
	}
}

func TestLastLinesJoinAcrossScrollback(t *testing.T) {
	s := New(Options{Cols: 4, Rows: 2})
	s.Write([]byte("first\r\n" + strings.Repeat("x", 10) + "\r\nend"))
	got := s.LastLines(3)
	want := []string{"first", strings.Repeat("x", 10), "end"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q want %q", got, want)
	}
	if got := s.LastLines(1); !reflect.DeepEqual(got, []string{"end"}) {
		t.Errorf("last 1 %q", got)
	}
	if s.LastLines(0) != nil {
		t.Error("LastLines(0) not nil")
	}
}

func TestScrollbackRingWraps(t *testing.T) {
	s := New(Options{Cols: 20, Rows: 2, Scrollback: 1000})
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		b.WriteString("\x1b[3")
		b.WriteByte(byte('0' + i%8))
		b.WriteString("mline ")
		b.WriteString(strings.Repeat("é", i%5))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("\r\n")
	}
	s.Write([]byte(b.String()))
	if s.ScrollbackLen() != 1000 {
		t.Fatalf("len %d", s.ScrollbackLen())
	}
	lines := s.LastLines(1001)
	if len(lines) != 1001 || lines[1000] != "line "+strings.Repeat("é", 4999%5)+string(rune('a'+4999%26)) {
		t.Errorf("last %q (%d lines)", lines[len(lines)-1], len(lines))
	}
	if lines[0] != "line "+strings.Repeat("é", 3999%5)+string(rune('a'+3999%26)) {
		t.Errorf("first %q", lines[0])
	}
	row, _ := s.ScrollbackRow(0)
	if row[0].Style.Fg != IndexedColor(3999%8) {
		t.Errorf("style %+v", row[0].Style)
	}
	if len(s.sb.chunks) > 3 {
		t.Errorf("%d chunks live for 1000 short lines", len(s.sb.chunks))
	}
}
