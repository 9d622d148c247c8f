package screen

import (
	"reflect"
	"strings"
	"testing"
)

// compactCases are inputs for the compact fast paths on non-ASCII text.
var compactCases = []struct {
	name       string
	in         string
	cols, rows int
}{
	{"wide at last column", "abcd日efgh", 5, 3},
	{"wide at last column after blanks", "ab\x1b[4G日x", 5, 3},
	{"wide fills lines", strings.Repeat("日本語", 20), 7, 3},
	{"emoji fill lines", strings.Repeat("a😀🚀", 12), 6, 3},
	{"pad then cursor back", "abcd日\x1b[1;5HZ\x1b[2;1H", 5, 3},
	{"pad then erase", "abcd日\x1b[1;5H\x1b[K", 5, 3},
	{"pad then combining", "abcd日\x1b[A\x1b[5G\u0301", 5, 3},
	{"pad with colour", "abcd\x1b[41m日\x1b[m", 5, 3},
	{"pad, no autowrap", "\x1b[?7labcd日", 5, 3},
	{"pad then insert", "abcd日\x1b[1;1H\x1b[2@", 5, 3},
	{"two and four byte runs", "éñü αβγ ЖЩ ─│┌ 👍🏽 e\u0301 🇫🇷 ❤\ufe0f 👩\u200d💻\r\n", 9, 3},
	{"C1 and invalid bytes", "a\xc2\x85b\xc0\xafc\xf0\x80\x80\x80d\xed\xa0\x80e\xf4\x90\x80\x80f", 8, 3},
	{"later planes", "\U00020000\U0002a700x\U000e0001y", 6, 3},
	{"grapheme mode", "\x1b[?2027habcd👍🏽🇫🇷e\u0301😀😀😀", 5, 3},
	{"scrolling wide text", strings.Repeat("│漢字 ∑≠ é😀\r\n", 10), 6, 3},
}

// TestCompactMatchesCells checks the compact fast paths for non-ASCII text
// (compactUTF8, and padCompact for a wide character meeting the last
// column) against the general path in cell form: the same bytes written to
// a screen whose rows are all materialised before every byte must leave
// the same cells, wrap pads, flags and scrollback.
func TestCompactMatchesCells(t *testing.T) {
	for _, tc := range compactCases {
		t.Run(tc.name, func(t *testing.T) { checkCompactMatchesCells(t, []byte(tc.in), tc.cols, tc.rows) })
	}
}

// FuzzCompactMatchesCells is TestCompactMatchesCells on random bytes.
func FuzzCompactMatchesCells(f *testing.F) {
	for _, tc := range compactCases {
		f.Add([]byte(tc.in), uint8(tc.cols), uint8(tc.rows))
	}
	f.Fuzz(func(t *testing.T, data []byte, cols, rows uint8) {
		checkCompactMatchesCells(t, data, int(cols%40)+1, int(rows%10)+1)
	})
}

// checkCompactMatchesCells writes in to two screens, one as usual and one
// with every row materialised before each byte, and compares them.
func checkCompactMatchesCells(t *testing.T, in []byte, cols, rows int) {
	t.Helper()
	fast, _ := newRec(cols, rows, 50)
	fast.Write(in)
	checkInvariants(t, fast)

	slow, _ := newRec(cols, rows, 50)
	for i := range in {
		for _, l := range slow.cur.lines {
			slow.mat(l)
		}
		slow.Write(in[i : i+1])
	}
	if a, b := snapshot(fast, nil), snapshot(slow, nil); a != b {
		t.Fatalf("compact:\n%s\ncells:\n%s", a, b)
	}
	for y := range rows {
		lf, ls := fast.cur.lines[y], slow.cur.lines[y]
		fast.mat(lf)
		slow.mat(ls)
		// used is a bound (cells from it on are blank), which the cell
		// form may set a column further: not compared.
		if !reflect.DeepEqual(lf.c, ls.c) || lf.wrapped != ls.wrapped || lf.complex != ls.complex || len(lf.comb) != len(ls.comb) {
			t.Errorf("row %d: compact gives %+v wrapped %v complex %v comb %v\ncells give %+v wrapped %v complex %v comb %v",
				y, lf.c, lf.wrapped, lf.complex, lf.comb, ls.c, ls.wrapped, ls.complex, ls.comb)
		}
	}
}

// TestResizeKeepsWrapPad widens and narrows a screen whose compact row
// ends in a wrap pad: the pad must be in the cells afterwards, as when the
// row was in cell form.
func TestResizeKeepsWrapPad(t *testing.T) {
	for _, cols := range []int{3, 5, 8} {
		fast, _ := newRec(5, 3, 10)
		slow, _ := newRec(5, 3, 10)
		fast.Write([]byte("abcd日x"))
		slow.Write([]byte("abcd"))
		slow.mat(slow.cur.lines[0])
		slow.Write([]byte("日x"))
		fast.Resize(cols, 3)
		slow.Resize(cols, 3)
		checkInvariants(t, fast)
		if a, b := snapshot(fast, nil), snapshot(slow, nil); a != b {
			t.Fatalf("resize to %d cols: compact:\n%s\ncells:\n%s", cols, a, b)
		}
	}
}
