package attach

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/clipperhouse/displaywidth"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// span is text in one style; a line of the box is a list of spans.
type span struct {
	text  string
	style screen.Style
}

// wrap appends line l, laid out width cells wide, to rows, keeping at
// most limit rows in all.
func wrap(rows [][]screen.Cell, l []span, width, limit int) [][]screen.Cell {
	rows, _ = wrapCount(rows, l, width, limit)
	return rows
}

// wrapCount appends line l to rows, laid out width cells wide by a
// wrapper; rows past limit are counted, not built. It returns the rows and
// how many rows l takes.
func wrapCount(rows [][]screen.Cell, l []span, width, limit int) ([][]screen.Cell, int) {
	w := &wrapper{width: width, limit: limit, rows: rows, row: []screen.Cell{}, n: 1}
	for _, sp := range l {
		inWord := false
		for i, r := range sp.text {
			if r != ' ' && !inWord {
				w.startWord(wordWidth(sp.text[i:]))
			}
			inWord = r != ' '
			w.put(r, sp.style)
		}
	}
	if w.building() {
		w.rows = append(w.rows, w.row)
	}
	return w.rows, w.n
}

// wrapper lays a line out in rows of cells: a word that does not fit the
// rest of a row starts the next one, unless it is too long for any row;
// every character is kept, spaces included. A row's cell index is its
// column: a wide character takes two cells, marks ride in their
// character's cell.
type wrapper struct {
	width, limit int
	rows         [][]screen.Cell
	row          []screen.Cell // being built; unused past limit
	x            int           // columns used in row
	n            int           // rows the line takes so far
}

// building reports whether the current row is kept.
func (w *wrapper) building() bool { return len(w.rows) < w.limit }

// startWord moves to a new row before a word of width cells that does not
// fit the rest of this row but fits a row of its own.
func (w *wrapper) startWord(width int) {
	if w.x > 0 && w.x+width > w.width && width <= w.width {
		w.newRow()
	}
}

// put lays out one character, on a new row when it does not fit.
func (w *wrapper) put(r rune, st screen.Style) {
	cw := cellWidth(r)
	if cw > w.width {
		r, cw = '?', 1
	}
	if cw == 0 {
		w.mark(r, st)
		return
	}
	if w.x+cw > w.width {
		w.newRow()
	}
	w.x += cw
	if w.building() {
		w.row = append(w.row, screen.Cell{Rune: r, Width: cw, Style: st})
		if cw == 2 {
			w.row = append(w.row, screen.Cell{Style: st}) // the right half
		}
	}
}

// newRow ends the row.
func (w *wrapper) newRow() {
	if w.building() {
		w.rows = append(w.rows, w.row)
	}
	w.row, w.x = []screen.Cell{}, 0
	w.n++
}

// mark puts a zero-width character (a combining mark) on the character
// before it, or on a blank when there is none.
func (w *wrapper) mark(r rune, st screen.Style) {
	if !w.building() {
		return
	}
	i := len(w.row) - 1
	if i >= 1 && w.row[i].Width == 0 {
		i-- // the right half of a wide character: its left half
	}
	if i < 0 {
		w.row, w.x, i = append(w.row, screen.Cell{Rune: ' ', Width: 1, Style: st}), w.x+1, 0
	}
	w.row[i].Comb += string(r)
}

// wordWidth is how many cells the word s starts with takes, up to its
// first space.
func wordWidth(s string) int {
	n := 0
	for _, r := range s {
		if r == ' ' {
			break
		}
		n += cellWidth(r)
	}
	return n
}

// cellWidth is how many cells r takes, as the screen package counts.
func cellWidth(r rune) int {
	if r < 0x300 {
		return 1
	}
	return min(max(displaywidth.Rune(r), 0), 2)
}

// maxMarks is how many combining marks one character may carry on the
// box; more are shown as escapes, so a pile of them cannot smear the box.
const maxMarks = 3

// Visible makes agent text honest on the human's screen: control, format
// (bidi overrides, zero-width), separator and blank-looking characters
// become escapes such as \x1b and \u202e, as do combining marks past
// maxMarks on one character. Nothing in the result acts on a terminal.
func Visible(s string) string {
	var b strings.Builder
	marks := 0
	for _, r := range s {
		if unicode.In(r, unicode.Mn, unicode.Me) {
			if marks++; marks <= maxMarks {
				b.WriteRune(r)
				continue
			}
		} else {
			marks = 0
			if shown(r) {
				b.WriteRune(r)
				continue
			}
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// shown reports whether r may be drawn as itself: the space, or a
// graphic character that does not look blank.
func shown(r rune) bool {
	switch r {
	case ' ':
		return true
	case 0x115f, 0x1160, 0x2800, 0x3164, 0xffa0: // Hangul fillers, braille blank
		return false
	}
	return unicode.IsGraphic(r) && !unicode.Is(unicode.Zs, r)
}
