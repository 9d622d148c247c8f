package screen

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestEraseCompactTail checks erasing the end of a compact row (ops.go's
// cut of its text) against the same erase on the row in cell form: the
// rows, the scrollback they go to and what printing after the erase does
// must be the same.
func TestEraseCompactTail(t *testing.T) {
	full := strings.Repeat("abcdefghij", 8) // fills 80 columns: the wrap is pending
	for _, tc := range []struct{ name, before, after string }{
		{"full line, erase with the wrap pending", full, "\x1b[K"},
		{"full line, erase, then more text", full, "\x1b[KXY\r\nnext"},
		{"cursor moved back into the last run", "hello world", "\x1b[4D\x1b[K"},
		{"styled last run", "plain \x1b[31mred text", "\x1b[3D\x1b[K"},
		{"erase at the last run's start", "plain \x1b[31mred", "\x1b[3D\x1b[K"},
		{"erase before the last run", "plain \x1b[31mred", "\x1b[5D\x1b[K"},
		{"coloured background erases in cell form", full, "\x1b[44m\x1b[K"},
		{"erase, then print over the cut", "hello world", "\x1b[6D\x1b[K\x1b[32mthere"},
		{"erase to the start of the line", "hello world", "\x1b[4D\x1b[1K"},
		{"wide text stays in cell form", "日本語 text", "\x1b[2D\x1b[K"},
		{"then scrolled into the scrollback", full, "\x1b[K\r\n" + strings.Repeat("\r\n", 30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast := New(Options{Cols: 80, Rows: 24, Scrollback: 100})
			cells := New(Options{Cols: 80, Rows: 24, Scrollback: 100})
			fast.Write([]byte(tc.before))
			cells.Write([]byte(tc.before))
			_, y := cells.Cursor().X, cells.Cursor().Y
			cells.Row(y) // materialises the row
			fast.Write([]byte(tc.after))
			cells.Write([]byte(tc.after))
			for y := range 24 {
				if a, b := fast.Row(y), cells.Row(y); !slices.Equal(a, b) {
					t.Fatalf("row %d:\n compact: %s\n cells:   %s", y, cellsText(a), cellsText(b))
				}
			}
			if a, b := fast.LastLines(60), cells.LastLines(60); !slices.Equal(a, b) {
				t.Fatalf("history:\n compact: %q\n cells:   %q", a, b)
			}
			if a, b := fast.Cursor(), cells.Cursor(); a != b {
				t.Fatalf("cursor: compact %+v, cells %+v", a, b)
			}
		})
	}
}

// cellsText shows a row's runes and styles for a failure message.
func cellsText(r []Cell) string {
	var b strings.Builder
	for _, c := range r {
		fmt.Fprintf(&b, "%c", max(c.Rune, ' '))
		if c.Style != (Style{}) {
			fmt.Fprintf(&b, "%v", c.Style)
		}
	}
	return b.String()
}
