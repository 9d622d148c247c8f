package screen

import (
	"fmt"
	"strings"
	"testing"
)

// recorder collects replies and events.
type recorder struct {
	replies []string
	events  []Event
}

func newRec(cols, rows int, sb int) (*Screen, *recorder) {
	r := &recorder{}
	s := New(Options{Cols: cols, Rows: rows, Scrollback: sb,
		Reply:   func(b []byte) { r.replies = append(r.replies, string(b)) },
		OnEvent: func(e Event) { r.events = append(r.events, e) }})
	return s, r
}

// snapshot renders the whole observable state of s deterministically.
func snapshot(s *Screen, r *recorder) string {
	var b strings.Builder
	cols, rows := s.Size()
	c := s.Cursor()
	fmt.Fprintf(&b, "size=%dx%d cursor=%+v alt=%v title=%q cwd=%q modes=%+v sb=%d\n",
		cols, rows, c, s.AltScreen(), s.Title(), s.Cwd(), s.Modes(), s.ScrollbackLen())
	for i := 0; i < s.ScrollbackLen(); i++ {
		cells, w := s.ScrollbackRow(i)
		fmt.Fprintf(&b, "sb%d w=%v %s\n", i, w, dumpCells(trimBlank(cells)))
	}
	for y := 0; y < rows; y++ {
		fmt.Fprintf(&b, "row%d w=%v %s\n", y, s.RowWrapped(y), dumpCells(s.Row(y)))
	}
	fmt.Fprintf(&b, "lines=%q\n", s.LastLines(1<<30))
	if r != nil {
		fmt.Fprintf(&b, "replies=%q events=%+v\n", r.replies, r.events)
	}
	return b.String()
}

// trimBlank drops trailing blank cells that the scrollback may or may not
// store, depending on whether the row was compact.
func trimBlank(cells []Cell) []Cell {
	for len(cells) > 0 {
		c := cells[len(cells)-1]
		if c.Rune != ' ' || c.Comb != "" || c.Style.Bg != 0 || c.Style.Attrs&visibleAttrs != 0 {
			break
		}
		cells = cells[:len(cells)-1]
	}
	return cells
}

func dumpCells(cells []Cell) string {
	var b strings.Builder
	var st Style
	for _, c := range cells {
		if c.Style != st {
			fmt.Fprintf(&b, "{%x,%x,%x}", uint32(c.Style.Fg), uint32(c.Style.Bg), uint16(c.Style.Attrs))
			st = c.Style
		}
		switch c.Width {
		case 0:
			b.WriteString("_")
		default:
			b.WriteString(c.String())
		}
	}
	return b.String()
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// rowText is the text of visible row y with trailing spaces removed.
func rowText(s *Screen, y int) string {
	var b strings.Builder
	for _, c := range s.Row(y) {
		b.WriteString(c.String())
	}
	return strings.TrimRight(b.String(), " ")
}

// checkInvariants verifies the internal consistency of s.
func checkInvariants(t testing.TB, s *Screen) {
	t.Helper()
	if s.x < 0 || s.x >= s.cols || s.y < 0 || s.y >= s.rows {
		t.Fatalf("cursor %d,%d out of %dx%d", s.x, s.y, s.cols, s.rows)
	}
	if s.top < 0 || s.bot >= s.rows || s.top >= s.bot && s.rows > 1 {
		t.Fatalf("bad region %d..%d", s.top, s.bot)
	}
	if s.sb.n > s.sb.max {
		t.Fatalf("scrollback %d > %d", s.sb.n, s.sb.max)
	}
	if len(s.tabs) != s.cols || len(s.clean) != s.rows {
		t.Fatalf("tabs/dirty size")
	}
	for _, g := range []*grid{s.main, s.alt} {
		if g == nil {
			continue
		}
		if len(g.lines) != s.rows {
			t.Fatalf("grid has %d rows, want %d", len(g.lines), s.rows)
		}
		for y, l := range g.lines {
			if l.compact {
				if l.ccol > s.cols {
					t.Fatalf("compact row %d has %d columns", y, l.ccol)
				}
				for _, r := range string(l.text) {
					if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
						t.Fatalf("compact row %d has rune %U", y, r)
					}
				}
				if !l.complex && !isASCII(l.text) {
					t.Fatalf("compact row %d: non-ASCII text but not complex", y)
				}
				// Materialising a copy must give consistent cells.
				cp := *l
				cp.c = make([]cell, len(l.c))
				cp.text = append([]byte(nil), l.text...)
				cp.comb = nil
				s.mat(&cp)
				if cp.used != l.ccol {
					t.Fatalf("compact row %d: %d columns materialise to %d", y, l.ccol, cp.used)
				}
				continue
			}
			if len(l.c) != s.cols {
				t.Fatalf("row %d has %d cells, want %d", y, len(l.c), s.cols)
			}
			for x := range l.c {
				c := l.c[x]
				if x >= l.used && c != blankCell {
					t.Fatalf("row %d cell %d %+v beyond used %d", y, x, c, l.used)
				}
				if !l.complex && x < l.used && (c.r >= 0x80 || c.w != 1 || c.fl != 0) {
					t.Fatalf("row %d cell %d %+v in simple row", y, x, c)
				}
				switch c.w {
				case 2:
					if x+1 >= len(l.c) || l.c[x+1].w != 0 {
						t.Fatalf("row %d: wide cell at %d without right half", y, x)
					}
				case 0:
					if x == 0 || l.c[x-1].w != 2 {
						t.Fatalf("row %d: orphan right half at %d", y, x)
					}
				case 1:
				default:
					t.Fatalf("row %d: width %d", y, c.w)
				}
				if c.w != 0 && (c.r < 0x20 || c.r == 0x7f || c.r >= 0x80 && c.r < 0xa0) {
					t.Fatalf("row %d: control rune %U stored", y, c.r)
				}
			}
		}
	}
	for i := 0; i < s.sb.n; i++ {
		s.ScrollbackRow(i)
	}
}
