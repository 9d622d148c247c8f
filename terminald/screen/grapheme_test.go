package screen

import (
	"reflect"
	"strings"
	"testing"
)

// cellsOf renders row y as "text/width" per cell (right halves skipped).
func cellsOf(s *Screen, y int) []string {
	var out []string
	for _, c := range s.Row(y) {
		if c.Width == 0 {
			continue
		}
		if c.Rune == ' ' && c.Comb == "" {
			continue
		}
		out = append(out, c.String()+"/"+string(rune('0'+c.Width)))
	}
	return out
}

func wantCells(want ...string) func(t *testing.T, s *Screen, r *recorder) {
	return func(t *testing.T, s *Screen, r *recorder) {
		t.Helper()
		if got := cellsOf(s, 0); !reflect.DeepEqual(got, want) {
			t.Errorf("cells %q, want %q", got, want)
		}
	}
}

const (
	flagUS   = "🇺🇸"
	family   = "👨\u200d👩\u200d👧"
	thumbs   = "👍🏽"
	heart    = "❤\ufe0f"
	keycap   = "1\ufe0f\u20e3"
	gcOn     = "\x1b[?2027h"
	gcOff    = "\x1b[?2027l"
	gcReport = "\x1b[?2027$p"
)

// graphemeCases follow the width policy of grapheme_width.go: per code
// point as wcwidth(3) by default (regional indicators 1 column each, so a
// flag is 2 as in xterm and tmux), per grapheme cluster with mode 2027 as
// in Ghostty, kitty, WezTerm and foot.
var graphemeCases = []tcase{
	{name: "default: flag is two 1-column cells", in: flagUS + "x", lines: []string{flagUS + "x"}, cursor: cur(3, 0),
		check: wantCells("🇺/1", "🇸/1", "x/1")},
	{name: "default: skin tone per code point", in: thumbs + "x", cursor: cur(5, 0), check: wantCells("👍/2", "🏽/2", "x/1")},
	{name: "default: ZWJ sequence per code point", in: family + "x", cursor: cur(7, 0),
		check: wantCells("👨\u200d/2", "👩\u200d/2", "👧/2", "x/1")},
	{name: "default: VS16 does not widen", in: heart + "x", cursor: cur(2, 0), check: wantCells(heart+"/1", "x/1")},
	{name: "2027: flag is one 2-column cell", in: gcOn + flagUS + "x", lines: []string{flagUS + "x"}, cursor: cur(3, 0),
		check: wantCells(flagUS+"/2", "x/1")},
	{name: "2027: three regional indicators", in: gcOn + "🇺🇸🇫x", cursor: cur(5, 0),
		check: wantCells(flagUS+"/2", "🇫/2", "x/1")},
	{name: "2027: skin tone", in: gcOn + thumbs + "x", lines: []string{thumbs + "x"}, cursor: cur(3, 0),
		check: wantCells(thumbs+"/2", "x/1")},
	{name: "2027: ZWJ sequence", in: gcOn + family + "x", lines: []string{family + "x"}, cursor: cur(3, 0),
		check: wantCells(family+"/2", "x/1")},
	{name: "2027: VS16 widens", in: gcOn + "a" + heart + "x", lines: []string{"a" + heart + "x"}, cursor: cur(4, 0),
		check: wantCells("a/1", heart+"/2", "x/1")},
	{name: "2027: keycap", in: gcOn + keycap + "x", cursor: cur(3, 0), check: wantCells(keycap+"/2", "x/1")},
	{name: "2027: combining marks as before", in: gcOn + "e\u0301x日\u0301", cursor: cur(4, 0),
		check: wantCells("e\u0301/1", "x/1", "日\u0301/2")},
	{name: "2027: VS16 at the last column moves to the next row", cols: 4, in: gcOn + "abc" + heart + "x",
		lines: []string{"abc" + heart + "x"}, cursor: cur(3, 1),
		check: func(t *testing.T, s *Screen, r *recorder) {
			if got := cellsOf(s, 1); !reflect.DeepEqual(got, []string{heart + "/2", "x/1"}) {
				t.Errorf("row 1 %q", got)
			}
		}},
	{name: "2027: VS16 before the last column", cols: 4, in: gcOn + "ab" + heart, cursor: cur(3, 0),
		check: func(t *testing.T, s *Screen, r *recorder) {
			s.Write([]byte("x"))
			if got := cellsOf(s, 1); !reflect.DeepEqual(got, []string{"x/1"}) || !s.RowWrapped(0) {
				t.Errorf("row 1 %q", got)
			}
		}},
	{name: "2027: flag wraps whole", cols: 3, in: gcOn + "a" + flagUS + flagUS, lines: []string{"a" + flagUS + flagUS},
		check: wantCells("a/1", flagUS+"/2")},
	{name: "2027 off again: per code point", in: gcOn + gcOff + flagUS, cursor: cur(2, 0), check: wantCells("🇺/1", "🇸/1")},
	{name: "DECRQM 2027", in: gcReport + gcOn + gcReport + gcOff + gcReport,
		replies: []string{"\x1b[?2027;2$y", "\x1b[?2027;1$y", "\x1b[?2027;2$y"}},
	{name: "RIS turns 2027 off", in: gcOn + "\x1bc" + flagUS, cursor: cur(2, 0)},
	{name: "2027: clusters in the scrollback", cols: 10, rows: 1, sb: 10, in: gcOn + flagUS + thumbs + "x\r\n" + gcOff + thumbs + "\r\n",
		lines: []string{flagUS + thumbs + "x", thumbs},
		check: func(t *testing.T, s *Screen, r *recorder) {
			c, _ := s.ScrollbackRow(0)
			if len(c) != 5 || c[0].String() != flagUS || c[0].Width != 2 || c[2].String() != thumbs || c[4].Rune != 'x' {
				t.Errorf("scrollback row 0 %+v", c)
			}
			c, _ = s.ScrollbackRow(1)
			if len(c) != 4 || c[0].Rune != '👍' || c[2].Rune != '🏽' {
				t.Errorf("scrollback row 1 %+v", c)
			}
		}},
	{name: "2027: overwriting a cluster", in: gcOn + flagUS + "\x1b[1GAB", lines: []string{"AB"}, check: wantCells("A/1", "B/1")},
}

func TestGraphemeCases(t *testing.T) {
	for _, tc := range graphemeCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			s, r := runCase(t, tc, [][]byte{in})
			checkInvariants(t, s)
			if tc.lines != nil {
				if got := s.LastLines(100); !reflect.DeepEqual(got, tc.lines) {
					t.Errorf("lines = %q, want %q", got, tc.lines)
				}
			}
			if tc.cursor != nil && s.Cursor() != *tc.cursor {
				t.Errorf("cursor = %+v, want %+v", s.Cursor(), *tc.cursor)
			}
			if tc.replies != nil && !reflect.DeepEqual(r.replies, tc.replies) {
				t.Errorf("replies = %q, want %q", r.replies, tc.replies)
			}
			want := snapshot(s, r)
			if tc.check != nil {
				tc.check(t, s, r)
			}
			for k := 1; k < len(in); k++ {
				s2, r2 := runCase(t, tc, [][]byte{in[:k], in[k:]})
				if got := snapshot(s2, r2); got != want {
					t.Fatalf("split at %d differs:\n%s\nwant:\n%s", k, got, want)
				}
			}
			var bytewise [][]byte
			for k := range in {
				bytewise = append(bytewise, in[k:k+1])
			}
			if s3, r3 := runCase(t, tc, bytewise); snapshot(s3, r3) != want {
				t.Fatalf("byte-wise differs:\n%s\nwant:\n%s", snapshot(s3, r3), want)
			}
		})
	}
}

// TestGraphemeMaterialise checks that a row printed with clustering reads
// back the same from cells, from the scrollback and after a reflow.
func TestGraphemeMaterialise(t *testing.T) {
	text := strings.Repeat(flagUS+"a"+thumbs+family+keycap+"日", 3)
	s := New(Options{Cols: 13, Rows: 3})
	s.Write([]byte(gcOn + text + "\r\n"))
	before := s.LastLines(10)
	for _, cols := range []int{5, 2, 30, 13} {
		s.Resize(cols, 3)
		checkInvariants(t, s)
		if got := s.LastLines(10); !reflect.DeepEqual(got, before) {
			t.Fatalf("at %d columns %q, want %q", cols, got, before)
		}
	}
	// Every cluster is a cell of 2 columns but "a".
	var cells []string
	for i := 0; i < s.ScrollbackLen(); i++ {
		row, _ := s.ScrollbackRow(i)
		for _, c := range row {
			if c.Width > 0 {
				cells = append(cells, c.String())
			}
		}
	}
	for y := 0; y < 3; y++ {
		for _, c := range s.Row(y) {
			if c.Width > 0 && c.Rune != ' ' {
				cells = append(cells, c.String())
			}
		}
	}
	want := strings.Split(strings.Repeat(flagUS+"|a|"+thumbs+"|"+family+"|"+keycap+"|日|", 3), "|")
	want = want[:len(want)-1]
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %q\nwant %q", cells, want)
	}
}

// BenchmarkGraphemeCJK is BenchmarkWriteCJK with grapheme clustering
// on: every non-ASCII character is checked against the cell before it.
func BenchmarkGraphemeCJK(b *testing.B) {
	data := benchData("cjk", 1<<20)
	s := New(Options{Cols: 80, Rows: 24})
	s.Write([]byte(gcOn))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Write(data)
	}
}
