package attach

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// The key list's box (prefix ?), laid out as tmux's list-keys reads in a
// pager: the keys after the prefix in two columns when the width allows,
// then copy mode, the mouse and the legend of the status line's marks. A
// list taller than the terminal scrolls (j/k, arrows, PgUp/PgDn, Space)
// and says so on its last line; any other key closes it.

const (
	helpGap    = 2  // cells between the two columns
	helpMaxCol = 40 // a column's widest: a longer line (a bound command line) wraps in it
	helpMaxKey = 10 // the key column's widest: a longer key gets a row of its own
	helpLabelW = 12 // the label column of copy mode, mouse and status line
	helpWidth  = 72 // the box's inner width at most, with one column
)

// keySets are the sets of keys a key list row writes as one word when it
// has the whole set.
var keySets = []struct {
	keys []string
	as   string
}{
	{[]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, "1-9"},
	{[]string{"Up", "Down", "Left", "Right"}, "arrows"},
	{[]string{"C-Up", "C-Down", "C-Left", "C-Right"}, "C-arrows"},
}

// shortKeys writes a row's keys (names separated by spaces) shorter: a
// whole set of keySets becomes its word, where its first key was.
func shortKeys(keys string) string {
	f := strings.Fields(keys)
	for _, set := range keySets {
		if !containsAll(f, set.keys) {
			continue
		}
		at := slices.Index(f, set.keys[0])
		f[at] = set.as
		f = slices.DeleteFunc(f, func(k string) bool { return slices.Contains(set.keys[1:], k) })
	}
	return strings.Join(f, " ")
}

// containsAll reports whether every one of want is in have.
func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// helpView is the key list laid out for the client: its rows, the page
// of them the box shows and the box's last line.
type helpView struct {
	rows   [][]screen.Cell // the whole list, none wider than inner
	inner  int             // the box's inner width
	top    int             // the first row shown
	page   int             // how many rows are shown
	footer [][]screen.Cell // the last line: how to scroll, how to close
}

// scrolls reports whether the list is taller than its box.
func (v helpView) scrolls() bool { return v.page < len(v.rows) }

// helpView lays the key list out and takes the page from s.helpTop on,
// kept within the list.
func (s *session) helpView() helpView {
	v := helpView{}
	v.rows, v.inner = s.helpRows()
	avail := max(s.rows-3, 1) // the tab area less the box's border
	v.footer = wrap(nil, []span{{"any key closes this list", styleDim}}, v.inner, 1<<20)
	v.page = len(v.rows)
	if len(v.rows)+len(v.footer) <= avail {
		return v
	}
	// The footer's numbers at their longest, so that its rows do not
	// change with the page.
	v.footer = wrap(nil, scrollLine(len(v.rows), len(v.rows), len(v.rows)), v.inner, 1<<20)
	v.page = max(avail-len(v.footer), 1)
	v.top = min(max(s.helpTop, 0), max(len(v.rows)-v.page, 0))
	v.footer = wrap(nil, scrollLine(v.top+1, min(v.top+v.page, len(v.rows)), len(v.rows)), v.inner, 1<<20)
	return v
}

// scrollLine is the last line of a list that scrolls: which rows show,
// the keys that scroll, that any other closes.
func scrollLine(from, to, total int) []span {
	return []span{
		{fmt.Sprintf("%d-%d/%d: ", from, to, total), styleDim},
		{"j/k ↑↓ PgUp/PgDn Space", styleBold},
		{" scroll, others close", styleDim},
	}
}

// helpBox is the key list's box.
func (s *session) helpBox() *sheetBox {
	v := s.helpView()
	body := append(slices.Clone(v.rows[v.top:v.top+v.page]), v.footer...)
	return s.placeBoxWidth(body, fmt.Sprintf(" keys: prefix %s, then ", prefixName(s.o.Prefix)), v.inner)
}

// helpRows lays the key list out for the client's width and returns its
// rows and the box's inner width: the keys after the prefix (in two
// columns, read down, when both fit side by side), then the other rows
// of keyList and the legend, across the box.
func (s *session) helpRows() ([][]screen.Cell, int) {
	var cmds, other [][2]string
	for _, k := range keyList(s.settings().Bindings) {
		if key, ok := strings.CutPrefix(k[0], "prefix "); ok {
			cmds = append(cmds, [2]string{key, k[1]})
		} else {
			other = append(other, k)
		}
	}
	keyW, helpW := 0, 0
	for _, c := range cmds {
		keyW, helpW = max(keyW, plainWidth(c[0])), max(helpW, plainWidth(c[1]))
	}
	keyW = min(keyW, helpMaxKey) + 1
	colW := min(keyW+helpW, helpMaxCol)
	inner := max(min(s.cols-4, helpWidth), 1)
	var rows [][]screen.Cell
	if two := 2*colW + helpGap; two <= s.cols-4 {
		inner = two
		rows = columns(cmds, keyW, colW)
	} else {
		keyW = min(keyW, inner/2)
		for _, c := range cmds {
			rows = append(rows, hangRows(c[0], c[1], keyW, inner)...)
		}
	}
	labelW := min(helpLabelW, inner/2)
	for _, k := range other {
		rows = append(rows, hangRows(k[0], k[1], labelW, inner)...)
	}
	for i, l := range legendLines(inner - labelW) {
		label := ""
		if i == 0 {
			label = "status line"
		}
		rows = append(rows, hangRows(label, l, labelW, inner)...)
	}
	return rows, inner
}

// legendLines lays the legend of the status line's marks (markLegend)
// out in lines at most width cells wide, breaking between entries only.
func legendLines(width int) []string {
	var lines []string
	line := ""
	for _, m := range markLegend {
		e := m.mark + " " + m.means
		switch {
		case line == "":
			line = e
		case textWidth(line+"  "+e) <= width:
			line += "  " + e
		default:
			lines, line = append(lines, line), e
		}
	}
	return append(lines, line)
}

// columns lays rows of keys and texts out in two columns colW cells wide,
// read down the left one first, the left one the longer by a row at most
// (or by a row less than an entry's rows).
func columns(list [][2]string, keyW, colW int) [][]screen.Cell {
	var each [][][]screen.Cell
	total := 0
	for _, c := range list {
		r := hangRows(c[0], c[1], keyW, colW)
		each, total = append(each, r), total+len(r)
	}
	var left, right [][]screen.Cell
	for _, r := range each {
		if len(right) == 0 && len(left) < (total+1)/2 {
			left = append(left, r...)
		} else {
			right = append(right, r...)
		}
	}
	rows := make([][]screen.Cell, max(len(left), len(right)))
	for i := range rows {
		if i < len(left) {
			rows[i] = left[i]
		}
		if i < len(right) {
			rows[i] = append(padCells(rows[i], colW+helpGap), right[i]...)
		}
	}
	return rows
}

// hangRows lays one entry of the list out width cells wide: key in bold,
// its text keyW cells in, and the text's further rows there too. A key
// too long for its column has a row of its own.
func hangRows(key, text string, keyW, width int) [][]screen.Cell {
	var rows [][]screen.Cell
	if plainWidth(key) >= keyW {
		rows = wrap(rows, []span{{key, styleBold}}, width, 1<<20)
		key = ""
	}
	var lead []screen.Cell
	if key != "" {
		lead = wrap(nil, []span{{key, styleBold}}, keyW, 1)[0]
	}
	for i, l := range wrap(nil, []span{{text, stylePlain}}, max(width-keyW, 1), 1<<20) {
		if i > 0 {
			// A wrapped row starts after the space it broke at.
			for len(l) > 0 && l[0].Rune == ' ' {
				l = l[1:]
			}
			lead = nil
		}
		rows = append(rows, append(padCells(slices.Clone(lead), keyW), l...))
	}
	return rows
}

// padCells pads row with blanks to n cells.
func padCells(row []screen.Cell, n int) []screen.Cell {
	for len(row) < n {
		row = append(row, screen.Cell{Rune: ' ', Width: 1})
	}
	return row
}

// helpKeys answers the first key of b on the key list: a scroll key moves
// a list taller than its box; any other key, an arrow's whole sequence
// too, closes it. It returns the bytes after the key.
func (s *session) helpKeys(b []byte) []byte {
	n := 1
	if b[0] == 0x1b && len(b) > 1 {
		n = escLen(b)
	}
	v := s.helpView()
	step := 0
	switch string(b[:n]) {
	case "j", "\x1b[B", "\x1bOB":
		step = 1
	case "k", "\x1b[A", "\x1bOA":
		step = -1
	case " ", "\x1b[6~":
		step = v.page
	case "\x1b[5~":
		step = -v.page
	}
	if !s.scrollHelp(v, step) {
		s.mode, s.needFull = modeNormal, true
	}
	return b[n:]
}

// scrollHelp moves the key list by step rows and reports whether it
// could: the list is taller than its box and step is not 0.
func (s *session) scrollHelp(v helpView, step int) bool {
	if step == 0 || !v.scrolls() {
		return false
	}
	s.helpTop = min(max(v.top+step, 0), len(v.rows)-v.page)
	return true
}
