package attach

import (
	"regexp"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/config"
)

// helpSession is a session showing the key list at cols x rows.
func helpSession(cols, rows int) *session {
	s := &session{o: Options{Prefix: DefaultPrefix, Live: NewLive(NewSettings(config.Config{}))}, cols: cols, rows: rows}
	s.mode = modeHelp
	return s
}

// TestKeyListSizes lays the key list out at sizes from 40x12 to 120x40
// and reads it page by page as j scrolls it: the box fits the terminal,
// no row is cut at its edge, the first page starts with the first keys
// (n p), every row of keyList shows whole (its key beside its text, the
// text unbroken but for wrapping) on some page, so do every command with
// keys and every mark's legend, and the last line says how to scroll exactly when it must.
func TestKeyListSizes(t *testing.T) {
	for _, c := range []struct {
		cols, rows int
		scrolls    bool
	}{
		{80, 24, false},
		{120, 40, false},
		{60, 20, true},
		{40, 12, true},
	} {
		s := helpSession(c.cols, c.rows)
		seen := map[int]string{} // the rows of the list shown, by their place in it
		var footer string
		for range 200 {
			v := s.helpView()
			b := s.helpBox()
			if len(b.cells) > c.rows-1 || b.y+len(b.cells) > c.rows-1 {
				t.Fatalf("%dx%d: the box has %d rows at row %d, over the tab area of %d", c.cols, c.rows, len(b.cells), b.y, c.rows-1)
			}
			for _, r := range b.cells {
				if len(r) != v.inner+4 || b.x+len(r) > c.cols {
					t.Fatalf("%dx%d: a box row %d cells wide at column %d: %q", c.cols, c.rows, len(r), b.x, cellsText(r))
				}
			}
			for i, r := range v.rows[v.top : v.top+v.page] {
				if len(r) > v.inner {
					t.Errorf("%dx%d: row %d is %d cells, the box %d: cut at its edge: %q", c.cols, c.rows, v.top+i, len(r), v.inner, cellsText(r))
				}
				seen[v.top+i] = cellsText(r)
			}
			footer = ""
			for _, r := range v.footer {
				footer += cellsText(r)
			}
			if v.scrolls() != c.scrolls {
				t.Errorf("%dx%d: scrolls = %v, want %v (%d rows)", c.cols, c.rows, v.scrolls(), c.scrolls, len(v.rows))
			}
			if v.top == 0 && !strings.Contains(cellsText(b.cells[1]), "n p ") {
				t.Errorf("%dx%d: the first row shown is %q, not the keys n p", c.cols, c.rows, cellsText(b.cells[1]))
			}
			if !v.scrolls() || v.top+v.page >= len(v.rows) {
				if len(seen) != len(v.rows) {
					t.Errorf("%dx%d: scrolling showed %d of %d rows", c.cols, c.rows, len(seen), len(v.rows))
				}
				break
			}
			s.helpKeys([]byte("j"))
			if s.mode != modeHelp {
				t.Fatalf("%dx%d: j closed a list that scrolls", c.cols, c.rows)
			}
		}
		wantFooter := "any key closes this list"
		if c.scrolls {
			wantFooter = "j/k ↑↓ PgUp/PgDn Space scroll, others close"
		}
		if !strings.Contains(footer, wantFooter) {
			t.Errorf("%dx%d: the last line %q, want %q in it", c.cols, c.rows, footer, wantFooter)
		}
		var all []string
		for i := range len(seen) {
			all = append(all, seen[i])
		}
		text := strings.Join(all, "\n")
		words := strings.Join(strings.Fields(text), " ")
		for _, k := range keyList(config.Config{}.Bindings()) {
			key := strings.TrimPrefix(k[0], "prefix ")
			help := strings.Fields(k[1])
			if key != "" && !regexp.MustCompile(`(?m)(^|\s)`+regexp.QuoteMeta(key)+` +`+regexp.QuoteMeta(help[0])).MatchString(text) {
				t.Errorf("%dx%d: no row has the key %q beside %q:\n%s", c.cols, c.rows, key, help[0], text)
			}
			if !strings.Contains(words, strings.Join(help, " ")) {
				t.Errorf("%dx%d: the text of %q, %q, is not whole on the box:\n%s", c.cols, c.rows, key, k[1], text)
			}
		}
		for _, cmd := range config.Commands() {
			if len(cmd.Keys) > 0 && !strings.Contains(words, cmd.Help) {
				t.Errorf("%dx%d: %s (%s) is not on the box", c.cols, c.rows, cmd.Name, strings.Join(cmd.Keys, " "))
			}
		}
		for _, m := range markLegend {
			if !strings.Contains(text, m.mark+" "+m.means) {
				t.Errorf("%dx%d: the legend lacks %q:\n%s", c.cols, c.rows, m.mark+" "+m.means, text)
			}
		}
	}
}

// TestHelpKeys checks the keys on the key list: the scroll keys move a
// list that does not fit, within it; any other key closes it, and so
// does every key on a list that fits.
func TestHelpKeys(t *testing.T) {
	for _, c := range []struct {
		name       string
		cols, rows int
		top        int // where the list starts
		keys       string
		want       int // the first row shown after, or -1: closed
	}{
		{"j down a row", 40, 12, 0, "j", 1},
		{"Down down a row", 40, 12, 0, "\x1b[B", 1},
		{"k up a row", 40, 12, 3, "k", 2},
		{"Up up a row", 40, 12, 3, "\x1bOA", 2},
		{"k at the top stays", 40, 12, 0, "k", 0},
		{"Space a page down", 40, 12, 0, " ", 7},
		{"PgDn a page down", 40, 12, 0, "\x1b[6~", 7},
		{"PgUp a page up", 40, 12, 9, "\x1b[5~", 2},
		{"PgUp past the top: the top", 40, 12, 3, "\x1b[5~", 0},
		{"Space past the end: the last page", 40, 12, 0, strings.Repeat(" ", 20), -2},
		{"q closes", 40, 12, 0, "q", -1},
		{"Escape closes", 40, 12, 0, "\x1b", -1},
		{"an arrow not scrolling closes, whole", 40, 12, 0, "\x1b[C", -1},
		{"j closes a list that fits", 80, 24, 0, "j", -1},
	} {
		s := helpSession(c.cols, c.rows)
		s.helpTop = c.top
		b := []byte(c.keys)
		for len(b) > 0 && s.mode == modeHelp {
			b = s.helpKeys(b)
		}
		v := s.helpView()
		switch {
		case len(b) != 0:
			t.Errorf("%s: %q left over", c.name, b)
		case c.want == -1 && s.mode != modeNormal:
			t.Errorf("%s: the list stayed open", c.name)
		case c.want == -2 && (s.mode != modeHelp || v.top+v.page != len(v.rows)):
			t.Errorf("%s: rows %d-%d of %d shown, want the last page", c.name, v.top, v.top+v.page, len(v.rows))
		case c.want >= 0 && (s.mode != modeHelp || v.top != c.want):
			t.Errorf("%s: mode %v, first row %d, want %d", c.name, s.mode, v.top, c.want)
		}
	}
}

// TestShortKeys checks how a key list row writes its keys: a whole set
// as one word, a set with a key unbound key by key.
func TestShortKeys(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1 2 3 4 5 6 7 8 9", "1-9"},
		{"1 2 3 5 6 7 8 9", "1 2 3 5 6 7 8 9"},
		{"Up Down Left Right o", "arrows o"},
		{"Up Down Right o", "Up Down Right o"},
		{"C-Up C-Down C-Left C-Right", "C-arrows"},
		{"K C-Up C-Down C-Left C-Right Up Down Left Right", "K C-arrows arrows"},
		{"% |", "% |"},
	} {
		if got := shortKeys(c.in); got != c.want {
			t.Errorf("shortKeys(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestKeyListTiny lays the key list out on terminals too small for it,
// down to 1x1, and scrolls it: nothing panics, the box is no wider than
// the terminal once it has room for a border.
func TestKeyListTiny(t *testing.T) {
	for cols := 1; cols <= 30; cols += 3 {
		for rows := 1; rows <= 10; rows++ {
			s := helpSession(cols, rows)
			for _, k := range []string{" ", "j", "\x1b[5~", "k"} {
				b := s.helpBox()
				if cols >= 5 && b.x+len(b.cells[0]) > cols {
					t.Errorf("%dx%d: the box is %d wide at %d", cols, rows, len(b.cells[0]), b.x)
				}
				s.helpKeys([]byte(k))
				s.mode = modeHelp
			}
		}
	}
}
