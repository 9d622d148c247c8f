package screen

import (
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// reflowCase is written, then the screen is resized to each size in turn.
type reflowCase struct {
	name       string
	cols, rows int
	sb         int
	in         string
	sizes      [][2]int
	after      string   // written after the resizes
	lines      []string // LastLines(100)
	screen     []string // visible rows, trailing spaces trimmed; nil: not checked
	cursor     *Cursor
	check      func(t *testing.T, s *Screen)
}

func (tc reflowCase) run(t *testing.T, chunks [][]byte) *Screen {
	s, _ := newRec(tc.cols, tc.rows, tc.sb)
	for _, c := range chunks {
		s.Write(c)
	}
	for _, sz := range tc.sizes {
		s.Resize(sz[0], sz[1])
		checkInvariants(t, s)
	}
	s.Write([]byte(tc.after))
	checkInvariants(t, s)
	return s
}

var long93 = strings.Repeat("abcdefghi ", 9) + "xyz"

var reflowCases = []reflowCase{
	{name: "issue: 93 chars at 100, to 40 and back", cols: 100, rows: 5, in: long93 + "\r\n$ ",
		sizes: [][2]int{{40, 5}, {100, 5}}, lines: []string{long93, "$"},
		screen: []string{long93, "$", "", "", ""}, cursor: cur(2, 1)},
	{name: "narrow re-wraps, cursor after the prompt", cols: 20, rows: 4, in: "0123456789abcdefghij0123\r\n$ ",
		sizes: [][2]int{{8, 4}}, lines: []string{"0123456789abcdefghij0123", "$"},
		screen: []string{"01234567", "89abcdef", "ghij0123", "$"}, cursor: cur(2, 3)},
	{name: "narrow pushes the top into the scrollback", cols: 10, rows: 3, in: "aaaaaaaaaa\r\nbbbbbbbbbb\r\ncc",
		sizes: [][2]int{{5, 3}}, lines: []string{"aaaaaaaaaa", "bbbbbbbbbb", "cc"},
		screen: []string{"bbbbb", "bbbbb", "cc"}, cursor: cur(2, 2),
		check: func(t *testing.T, s *Screen) {
			if s.ScrollbackLen() != 2 || !s.RowWrapped(0) || s.RowWrapped(1) {
				t.Errorf("sb %d wraps %v %v", s.ScrollbackLen(), s.RowWrapped(0), s.RowWrapped(1))
			}
		}},
	{name: "widen joins rows from the scrollback", cols: 5, rows: 2, in: "0123456789abcde\r\nxy",
		sizes: [][2]int{{20, 2}}, lines: []string{"0123456789abcde", "xy"},
		screen: []string{"0123456789abcde", "xy"}, cursor: cur(2, 1)},
	{name: "wide chars are not split", cols: 10, rows: 3, in: "abc日本語x",
		sizes: [][2]int{{4, 3}}, lines: []string{"abc日本語x"},
		screen: []string{"abc", "日本", "語x"}, cursor: cur(3, 2),
		check: func(t *testing.T, s *Screen) {
			if r := s.Row(0); r[3].Rune != ' ' || r[3].Width != 1 {
				t.Errorf("pad cell %+v", r[3])
			}
		}},
	{name: "wide chars at the edge join back", cols: 5, rows: 3, in: "abcd日本",
		sizes: [][2]int{{12, 3}}, lines: []string{"abcd日本"}, screen: []string{"abcd日本", "", ""}, cursor: cur(8, 0)},
	{name: "cursor stays on its character", cols: 20, rows: 4, in: "hello wonderful world\x1b[1;3H",
		sizes: [][2]int{{6, 4}}, after: "X", lines: []string{"heXlo wonderful world"},
		screen: []string{"heXlo", "wonder", "ful wo", "rld"}},
	{name: "cursor mid-line in a wrapped row", cols: 10, rows: 3, in: "0123456789abcdefghij\x1b[2;4H",
		sizes: [][2]int{{4, 6}}, after: "X", lines: []string{"0123456789abcXefghij"}},
	{name: "pending wrap stays after the last character", cols: 5, rows: 3, in: "abcde",
		sizes: [][2]int{{10, 3}}, after: "f", lines: []string{"abcdef"}, screen: []string{"abcdef", "", ""}, cursor: cur(6, 0)},
	{name: "cursor right after the text at a row end wraps next", cols: 10, rows: 3, in: "abcdef",
		sizes: [][2]int{{3, 3}}, after: "g", lines: []string{"abcdefg"}, screen: []string{"abc", "def", "g"}},
	{name: "cursor in blanks past the text", cols: 20, rows: 3, in: "ab\x1b[1;10H",
		sizes: [][2]int{{6, 3}}, after: "X", lines: []string{"ab       X"}},
	{name: "cleared screen keeps the prompt at the top", cols: 20, rows: 4, in: "1\r\n2\r\n3\r\n4\r\n5\x1b[H\x1b[2J$ some long command",
		sizes: [][2]int{{10, 4}, {20, 4}}, lines: []string{"1", "$ some long command"},
		screen: []string{"$ some long command", "", "", ""}, cursor: cur(19, 0)},
	{name: "narrow then widen restores a full screen", cols: 10, rows: 3, in: "0123456789abcdefgh\r\nline2\r\nline3",
		sizes: [][2]int{{4, 3}, {10, 3}}, lines: []string{"0123456789abcdefgh", "line2", "line3"},
		screen: []string{"abcdefgh", "line2", "line3"}, cursor: cur(5, 2)},
	{name: "styles follow their characters", cols: 10, rows: 2, in: "abcd\x1b[31mefgh\x1b[44mij\x1b[0mkl",
		sizes: [][2]int{{3, 5}}, lines: []string{"abcdefghijkl"},
		check: func(t *testing.T, s *Screen) {
			red, blue := IndexedColor(1), IndexedColor(4)
			want := []Style{{}, {}, {}, {}, {Fg: red}, {Fg: red}, {Fg: red}, {Fg: red}, {Fg: red, Bg: blue}, {Fg: red, Bg: blue}, {}, {}}
			var got []Style
			for y := 0; y < 4; y++ {
				for _, c := range s.Row(y) {
					got = append(got, c.Style)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("styles %+v", got)
			}
		}},
	{name: "scrollback lines are re-wrapped", cols: 12, rows: 2, sb: 100, in: "aaaaaaaaaaaaaaaaaa\r\nbbbbbbbbbb\r\nc\r\nd",
		sizes: [][2]int{{6, 2}}, lines: []string{"aaaaaaaaaaaaaaaaaa", "bbbbbbbbbb", "c", "d"},
		check: func(t *testing.T, s *Screen) {
			var rows []string
			for i := 0; i < s.ScrollbackLen(); i++ {
				cells, w := s.ScrollbackRow(i)
				rows = append(rows, fmt.Sprintf("%s/%v", dumpCells(cells), w))
			}
			want := []string{"aaaaaa/true", "aaaaaa/true", "aaaaaa/false", "bbbbbb/true", "bbbb/false"}
			if !reflect.DeepEqual(rows, want) {
				t.Errorf("scrollback %q", rows)
			}
		}},
	{name: "scrollback bound holds after narrowing", cols: 10, rows: 2, sb: 3, in: "0123456789012345678\r\nx\r\ny",
		sizes: [][2]int{{2, 2}}, screen: []string{"x", "y"},
		check: func(t *testing.T, s *Screen) {
			if s.ScrollbackLen() != 3 {
				t.Errorf("sb %d", s.ScrollbackLen())
			}
		}},
	{name: "alternate screen is not reflowed", cols: 10, rows: 3, in: "0123456789abc\x1b[?1049h\x1b[Halt0123456",
		sizes: [][2]int{{5, 3}}, screen: []string{"alt01", "", ""},
		check: func(t *testing.T, s *Screen) {
			s.Write([]byte("\x1b[?1049lZ"))
			if got := s.LastLines(10); !reflect.DeepEqual(got, []string{"0123456789abcZ"}) {
				t.Errorf("main after alt %q", got)
			}
		}},
	{name: "content below the cursor is kept", cols: 20, rows: 3, in: "hello wonderful world\x1b[1;3H",
		sizes: [][2]int{{6, 3}}, lines: []string{"hello wonderful world"},
		screen: []string{"wonder", "ful wo", "rld"}, cursor: cur(2, 0)},
	{name: "combining marks stay on their base", cols: 6, rows: 2, in: "e\u0301e\u0301e\u0301e\u0301e\u0301",
		sizes: [][2]int{{2, 4}}, lines: []string{strings.Repeat("e\u0301", 5)},
		screen: []string{"e\u0301e\u0301", "e\u0301e\u0301", "e\u0301", ""}},
	{name: "grapheme clusters are not split", cols: 7, rows: 2, in: "\x1b[?2027hab🇺🇸👍🏽c",
		sizes: [][2]int{{3, 4}, {7, 2}}, lines: []string{"ab🇺🇸👍🏽c"},
		screen: []string{"ab🇺🇸👍🏽c", ""}, cursor: cur(7-1, 0)},
	{name: "saved cursor follows its character", cols: 20, rows: 5, in: "hello world\x1b[1;7H\x1b7\x1b[2;1H",
		sizes: [][2]int{{4, 5}}, after: "\x1b8X", lines: []string{"hello Xorld"}},
	{name: "height only keeps a pending wrap", cols: 5, rows: 3, in: "abcde",
		sizes: [][2]int{{5, 5}}, after: "f", lines: []string{"abcdef"}},
	{name: "no scrollback", cols: 10, rows: 2, sb: -1, in: "0123456789abcdefghij\r\nx",
		sizes: [][2]int{{5, 2}}, screen: []string{"fghij", "x"}},
}

func TestReflow(t *testing.T) {
	for _, tc := range reflowCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			s := tc.run(t, [][]byte{in})
			if tc.lines != nil {
				if got := s.LastLines(100); !reflect.DeepEqual(got, tc.lines) {
					t.Errorf("lines = %q, want %q", got, tc.lines)
				}
			}
			if tc.screen != nil {
				var got []string
				for y := 0; y < len(s.main.lines) && !s.altActive || s.altActive && y < s.rows; y++ {
					got = append(got, rowText(s, y))
				}
				if !reflect.DeepEqual(got, tc.screen) {
					t.Errorf("screen = %q, want %q", got, tc.screen)
				}
			}
			if tc.cursor != nil && s.Cursor() != *tc.cursor {
				t.Errorf("cursor = %+v, want %+v", s.Cursor(), *tc.cursor)
			}
			// The bytes written whole, split at every byte and byte by
			// byte give the same state after the same resizes.
			want := snapshot(s, nil)
			if tc.check != nil {
				tc.check(t, s)
			}
			for k := 1; k < len(in); k++ {
				s2 := tc.run(t, [][]byte{in[:k], in[k:]})
				if got := snapshot(s2, nil); got != want {
					t.Fatalf("split at %d differs:\n%s\nwant:\n%s", k, got, want)
				}
			}
			var bytewise [][]byte
			for k := range in {
				bytewise = append(bytewise, in[k:k+1])
			}
			if got := snapshot(tc.run(t, bytewise), nil); got != want {
				t.Fatalf("byte-wise differs:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestReflowRoundTrip narrows and widens back a screen full of mixed
// output: the text and the screen come back as they were.
func TestReflowRoundTrip(t *testing.T) {
	data := benchData("sgr", 20000)
	data = append(data, benchData("cjk", 3000)...)
	s := New(Options{Cols: 100, Rows: 30})
	s.Write(data)
	before := s.LastLines(1 << 20)
	var screen []string
	for y := 0; y < 30; y++ {
		screen = append(screen, fmt.Sprint(s.Row(y)))
	}
	for _, cols := range []int{40, 17, 3, 100} {
		s.Resize(cols, 30)
		checkInvariants(t, s)
		if got := s.LastLines(1 << 20); !reflect.DeepEqual(got, before) {
			t.Fatalf("at %d columns the text changed", cols)
		}
	}
	for y := 0; y < 30; y++ {
		if got := fmt.Sprint(s.Row(y)); got != screen[y] {
			t.Fatalf("row %d: %s\nwant %s", y, got, screen[y])
		}
	}
}

// reflowData is n lines of output 0-200 columns wide: words, one in six
// coloured, and in about one line in seven a word of wide characters.
func reflowData(n int) []byte {
	rng := rand.New(rand.NewSource(2))
	words := []string{"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit"}
	var b strings.Builder
	for range n {
		w := rng.Intn(200)
		for l := 0; l < w; {
			word := words[rng.Intn(len(words))]
			if rng.Intn(150) == 0 {
				word = "日本語"
			}
			if rng.Intn(6) == 0 {
				fmt.Fprintf(&b, "\x1b[%dm%s\x1b[0m ", 31+rng.Intn(6), word)
			} else {
				b.WriteString(word + " ")
			}
			l += len(word) + 1
		}
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// TestReflowLargeScrollback times the reflow of a full 100k-line
// scrollback from 200 to 80 columns and back (wall time, and CPU time of
// the calling thread, steadier on a loaded machine).
func TestReflowLargeScrollback(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	s := New(Options{Cols: 200, Rows: 50})
	s.Write(reflowData(120000))
	before := s.LastLines(1000)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, cols := range []int{80, 200} {
		t0, c0 := time.Now(), threadCPU()
		s.Resize(cols, 50)
		t.Logf("100k lines to %d columns: %v (CPU %v)", cols, time.Since(t0), threadCPU()-c0)
		checkInvariants(t, s)
	}
	if got := s.LastLines(1000); !reflect.DeepEqual(got, before) {
		t.Errorf("text changed")
	}
}

// BenchmarkReflow100k reflows a full 100k-line scrollback (lines of 0-200
// columns, some coloured, a few with wide characters) from 200 to 80
// columns and back: ns/op is the pair; ms/narrow is the 200 to 80 half,
// cpu-ms/narrow its CPU time on the calling thread.
func BenchmarkReflow100k(b *testing.B) {
	s := New(Options{Cols: 200, Rows: 50})
	s.Write(reflowData(120000))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	var narrow, cpu time.Duration
	for i := 0; i < b.N; i++ {
		t0, c0 := time.Now(), threadCPU()
		s.Resize(80, 50)
		narrow += time.Since(t0)
		cpu += threadCPU() - c0
		s.Resize(200, 50)
	}
	b.ReportMetric(float64(narrow.Microseconds())/1e3/float64(b.N), "ms/narrow")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/narrow")
}

// TestReflowKeepsLineNumbers checks that logical lines keep their
// sequence numbers (read.go) through reflows, also when narrowing makes
// the bounded scrollback drop its oldest rows.
func TestReflowKeepsLineNumbers(t *testing.T) {
	s := New(Options{Cols: 40, Rows: 4, Scrollback: 30})
	for i := range 20 {
		fmt.Fprintf(s, "line %02d %s\r\n", i, strings.Repeat("x", i*3))
	}
	read := func() map[uint64]string {
		oldest, next := s.HistoryBounds()
		p := s.ReadForward(Pos{Seq: oldest}, 0, 1<<20)
		m := map[uint64]string{}
		for i, l := range p.Lines {
			m[oldest+uint64(i)] = l
		}
		if uint64(len(p.Lines)) != next-oldest {
			t.Fatalf("read %d lines, bounds %d..%d", len(p.Lines), oldest, next)
		}
		return m
	}
	before := read()
	_, next0 := s.HistoryBounds()
	for _, cols := range []int{7, 40, 13, 80} {
		s.Resize(cols, 4)
		checkInvariants(t, s)
		oldest, next := s.HistoryBounds()
		after := read()
		if next != next0 || cols == 7 && oldest == 0 {
			t.Fatalf("at %d columns: bounds %d..%d, want ..%d and lines dropped", cols, oldest, next, next0)
		}
		for seq, l := range after {
			if before[seq] != l && !(seq == oldest && strings.HasSuffix(before[seq], l)) {
				t.Fatalf("at %d columns line %d is %q, was %q", cols, seq, l, before[seq])
			}
		}
	}
}
