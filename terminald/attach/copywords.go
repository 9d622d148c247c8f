package attach

import (
	"strings"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// Copy mode's word motions and selection shapes, as tmux's vi copy mode
// has them: w, b and e move by words as vi does (a word is a run of
// letters, digits and other characters that are not word separators, or
// a run of separators; blanks and line ends only part them), W, B and E
// by blank-separated WORDs; V selects whole lines, Ctrl-V a rectangle.

// wordSeparators are tmux's default word-separators (3.3): ASCII
// punctuation but the underscore.
const wordSeparators = "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~"

// Character classes for the word motions.
const (
	classBlank = iota
	classSeparator
	classWord
)

// bigClass is r's class for the WORD motions: blank or not.
func bigClass(r rune) int {
	if charClass(r) == classBlank {
		return classBlank
	}
	return classWord
}

// charClass is r's class for the word motions.
func charClass(r rune) int {
	switch {
	case r == ' ' || r == 0 || r == '\t':
		return classBlank
	case r < 0x80 && strings.ContainsRune(wordSeparators, r):
		return classSeparator
	}
	return classWord
}

// wordPos is a place in the history for the word motions: line y, the
// i-th character of it (lineRunes); i == the line's length is its end,
// which counts as a blank.
type wordPos struct{ y, i int }

// wordText reads the history a line at a time for the word motions.
type wordText struct {
	class func(rune) int // charClass, or bigClass for W, B, E
	total int
	read  func(y int) []screen.Cell
	y     int // the line in runes and cols; -1 for none
	runes []rune
	cols  []int
}

// load makes line y the current one.
func (t *wordText) load(y int) {
	if t.y != y {
		t.y = y
		t.runes, t.cols = lineRunes(t.read(y))
	}
}

// at is the character at p (a blank at the line's end).
func (t *wordText) at(p wordPos) rune {
	t.load(p.y)
	if p.i >= len(t.runes) {
		return ' '
	}
	return t.runes[p.i]
}

// next is the place after p; false at the end of the history.
func (t *wordText) next(p wordPos) (wordPos, bool) {
	t.load(p.y)
	if p.i < len(t.runes) {
		return wordPos{p.y, p.i + 1}, true
	}
	if p.y+1 >= t.total {
		return p, false
	}
	return wordPos{p.y + 1, 0}, true
}

// prev is the place before p; false at the start of the history.
func (t *wordText) prev(p wordPos) (wordPos, bool) {
	if p.i > 0 {
		return wordPos{p.y, p.i - 1}, true
	}
	if p.y == 0 {
		return p, false
	}
	t.load(p.y - 1)
	return wordPos{p.y - 1, len(t.runes)}, true
}

// pos is the place of column x on line y: the character that covers it.
func (t *wordText) pos(x, y int) wordPos {
	t.load(y)
	i := 0
	for i+1 < len(t.cols) && t.cols[i+1] <= x {
		i++
	}
	if len(t.cols) == 0 {
		return wordPos{y, 0}
	}
	return wordPos{y, i}
}

// column is the column of p.
func (t *wordText) column(p wordPos) int {
	t.load(p.y)
	switch {
	case p.i < len(t.cols):
		return t.cols[p.i]
	case len(t.cols) > 0:
		return t.cols[len(t.cols)-1] + 1
	}
	return 0
}

// maxWordLines bounds how many lines one motion reads, so that w over a
// long run of blank lines stays quick; it stops there.
const maxWordLines = 10_000

// nextWord is vi's w: the start of the next word.
// At the last word it stays.
func (t *wordText) nextWord(p wordPos) wordPos {
	from := p
	if c := t.class(t.at(p)); c != classBlank {
		for t.class(t.at(p)) == c {
			q, ok := t.next(p)
			if !ok {
				return from
			}
			p = q
		}
	}
	for t.class(t.at(p)) == classBlank && p.y-from.y < maxWordLines {
		q, ok := t.next(p)
		if !ok {
			return from
		}
		p = q
	}
	return p
}

// wordEnd is vi's e: the end of this word, or of the next when p is at
// an end already.
func (t *wordText) wordEnd(p wordPos) wordPos {
	start := p.y
	q, ok := t.next(p)
	if !ok {
		return p
	}
	p = q
	for t.class(t.at(p)) == classBlank && p.y-start < maxWordLines {
		if q, ok = t.next(p); !ok {
			return p
		}
		p = q
	}
	c := t.class(t.at(p))
	for {
		q, ok := t.next(p)
		if !ok || t.class(t.at(q)) != c || q.y != p.y {
			return p
		}
		p = q
	}
}

// wordStart is vi's b: the start of this word, or of the one before when
// p is at a start already.
func (t *wordText) wordStart(p wordPos) wordPos {
	start := p.y
	q, ok := t.prev(p)
	if !ok {
		return p
	}
	p = q
	for t.class(t.at(p)) == classBlank && start-p.y < maxWordLines {
		if q, ok = t.prev(p); !ok {
			return p
		}
		p = q
	}
	c := t.class(t.at(p))
	for {
		q, ok := t.prev(p)
		if !ok || t.class(t.at(q)) != c || q.y != p.y {
			return p
		}
		p = q
	}
}

// wordMotion moves the copy cursor by vi's w, b or e, or W, B or E.
func (s *session) wordMotion(key byte) {
	if s.curView() == nil || s.historyTotal() == 0 {
		return
	}
	t := &wordText{class: charClass, total: s.historyTotal(), y: -1, read: func(y int) []screen.Cell {
		lines, _ := s.curView().History(y, 1)
		if len(lines) == 0 {
			return nil
		}
		return lines[0]
	}}
	if key >= 'A' && key <= 'Z' {
		t.class, key = bigClass, key+'a'-'A'
	}
	p := t.pos(s.copy.cx, s.copy.cy)
	switch key {
	case 'w':
		p = t.nextWord(p)
	case 'b':
		p = t.wordStart(p)
	case 'e':
		p = t.wordEnd(p)
	}
	s.moveTo(t.column(p), p.y)
}

// selShape is how a selection runs between its ends.
type selShape int

const (
	selStream selShape = iota // from one end to the other in reading order (v, space, a drag)
	selLines                  // whole lines (V)
	selRect                   // the rectangle between the ends (Ctrl-V)
)

// startShape starts a selection of shape at the cursor, or gives the one
// running that shape: V starts or makes a line selection; Ctrl-V starts a
// rectangle, or toggles a running selection between a rectangle and a
// stream, as tmux's rectangle-toggle does.
func (c *copyState) startShape(shape selShape) {
	switch {
	case !c.sel:
		c.sel, c.ax, c.ay, c.shape = true, c.cx, c.cy, shape
	case shape == selRect && c.shape == selRect:
		c.shape = selStream
	default:
		c.shape = shape
	}
}

// rectText is the text of the rectangle of lines from column sx to ex,
// both included: a line per row, each row's blanks past its text cut.
func rectText(lines [][]screen.Cell, sx, ex int) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		end := len(l) - 1
		for end >= 0 && (l[end].Width == 0 || l[end].Rune == ' ' || l[end].Rune == 0) {
			end--
		}
		for x := max(sx, 0); x <= min(ex, end); x++ {
			switch {
			case l[x].Width == 0:
			case l[x].Rune < 0x20 || l[x].Rune == 0x7f:
				b.WriteByte(' ')
			default:
				b.WriteString(l[x].String())
			}
		}
		if b.Len() > maxClip {
			break
		}
	}
	return b.String()
}
