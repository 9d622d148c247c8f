package screen

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// readAll pages through s's whole history forward (backward when back is
// set) with the given byte bound and returns the lines, parts joined, with
// the sequence number of the first. It fails the test when a page breaks
// the bound or a rule of Page.
func readAll(t testing.TB, s *Screen, bound int, back bool) (uint64, []string) {
	t.Helper()
	oldest, next := s.HistoryBounds()
	type entry struct {
		seq  uint64
		text string
		cont bool // continues the previous entry's line
	}
	var pages [][]entry
	check := func(p Page) []entry {
		t.Helper()
		size := 0
		var es []entry
		for k, l := range p.Lines {
			size += len(l) + 1
			if !utf8.ValidString(l) {
				t.Fatalf("page entry %d is not valid UTF-8: %q", k, l)
			}
			es = append(es, entry{seq: p.Start.Seq + uint64(k), text: l, cont: k == 0 && p.Start.Off > 0})
		}
		if size != p.Bytes || size > max(bound, minPageBytes) {
			t.Fatalf("page of %d bytes (reported %d) over the bound %d: %q", size, p.Bytes, bound, p.Lines)
		}
		if len(p.Lines) > 0 {
			last := p.Start.Seq + uint64(len(p.Lines)-1)
			if p.End.Seq != last && p.End != (Pos{Seq: last + 1}) {
				t.Fatalf("page ends at %+v, its last entry is line %d", p.End, last)
			}
		}
		return es
	}
	if back {
		p := s.ReadBackward(Pos{Seq: next}, oldest, 0, bound)
		for n := 0; ; n++ {
			pages = append([][]entry{check(p)}, pages...)
			if !p.More {
				break
			}
			if n > 1e6 {
				t.Fatal("backward paging does not end")
			}
			p = s.ReadBackward(p.Start, oldest, 0, bound)
		}
	} else {
		p := s.ReadForward(Pos{Seq: oldest}, 0, bound)
		for n := 0; ; n++ {
			pages = append(pages, check(p))
			if !p.More {
				break
			}
			if n > 1e6 {
				t.Fatal("forward paging does not end")
			}
			p = s.ReadForward(p.End, 0, bound)
		}
	}
	var out []string
	var first uint64
	prev := uint64(0)
	for _, es := range pages {
		for _, e := range es {
			if len(out) > 0 && e.cont {
				if e.seq != prev {
					t.Fatalf("part of line %d follows line %d", e.seq, prev)
				}
				out[len(out)-1] += e.text
				continue
			}
			if len(out) == 0 {
				first = e.seq
			} else if e.seq != prev+1 {
				t.Fatalf("line %d follows line %d", e.seq, prev)
			}
			out = append(out, e.text)
			prev = e.seq
		}
	}
	return first, out
}

func TestReadPagesMatchLastLines(t *testing.T) {
	long := strings.Repeat("0123456789", 700) // 7000 bytes, one logical line
	wide := strings.Repeat("日本語😀e\u0301", 300)
	var many strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&many, "line %d %s\r\n", i, strings.Repeat("x", i%97))
	}
	cases := []struct {
		name       string
		cols, rows int
		sb         int
		in         string
	}{
		{name: "empty", cols: 20, rows: 5, sb: 100, in: ""},
		{name: "short", cols: 20, rows: 5, sb: 100, in: "a\r\nb\r\n\r\nc"},
		{name: "wrapped", cols: 10, rows: 5, sb: 100, in: "0123456789abcdefghij0123\r\nnext\r\n"},
		{name: "long line", cols: 80, rows: 24, sb: 1000, in: long + "\r\nafter"},
		{name: "long line trimmed at its head", cols: 80, rows: 24, sb: 30, in: long},
		{name: "wide and combining", cols: 33, rows: 7, sb: 1000, in: wide + "\r\n" + wide},
		{name: "many lines trimmed", cols: 40, rows: 10, sb: 500, in: many.String()},
		{name: "trailing spaces across rows", cols: 10, rows: 4, sb: 100, in: "abc" + strings.Repeat(" ", 25) + "\r\nz"},
		{name: "scrollback cleared", cols: 20, rows: 4, sb: 100, in: many.String()[:2000] + "\x1b[3J" + "after clear\r\n"},
		{name: "no scrollback", cols: 20, rows: 4, sb: -1, in: many.String()[:500]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Cols: tc.cols, Rows: tc.rows, Scrollback: tc.sb})
			s.Write([]byte(tc.in))
			want := s.LastLines(1 << 30)
			oldest, next := s.HistoryBounds()
			if int(next-oldest) != len(want) {
				t.Fatalf("bounds [%d, %d) for %d lines", oldest, next, len(want))
			}
			// One unbounded read is LastLines.
			if p := s.ReadBackward(Pos{Seq: next}, 0, 0, 1<<30); !equalLines(p.Lines, want) || p.More || p.LastCut {
				t.Fatalf("tail read = %q more=%v cut=%v, want %q", p.Lines, p.More, p.LastCut, want)
			}
			for _, bound := range []int{1, 7, 16, 100, 1000, 1 << 16} {
				for _, back := range []bool{false, true} {
					first, got := readAll(t, s, bound, back)
					if !equalLines(got, want) || (len(got) > 0 && first != oldest) {
						t.Fatalf("bound %d backward=%v: from %d %q\nwant from %d %q", bound, back, first, got, oldest, want)
					}
				}
			}
		})
	}
}

func equalLines(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func TestReadSequenceNumbers(t *testing.T) {
	s := New(Options{Cols: 20, Rows: 5, Scrollback: 50})
	for i := range 1000 {
		fmt.Fprintf(s, "L%d\r\n", i)
	}
	oldest, next := s.HistoryBounds()
	// 50 in the scrollback and four on the screen (the cursor's row is
	// blank): L946 .. L999.
	if oldest != 946 || next != 1000 {
		t.Fatalf("bounds = [%d, %d), want [946, 1000)", oldest, next)
	}
	tests := []struct {
		name        string
		read        func() Page
		first       string
		n           int
		trimmed     uint64
		start, end  Pos
		more, cut   bool
		bytesAtMost int
	}{
		{name: "forward from a held line", read: func() Page { return s.ReadForward(Pos{Seq: 990}, 3, 1000) },
			first: "L990", n: 3, start: Pos{Seq: 990}, end: Pos{Seq: 993}, more: true},
		{name: "forward from a trimmed line", read: func() Page { return s.ReadForward(Pos{Seq: 900}, 2, 1000) },
			first: "L946", n: 2, trimmed: 46, start: Pos{Seq: 946}, end: Pos{Seq: 948}, more: true},
		{name: "forward from the end", read: func() Page { return s.ReadForward(Pos{Seq: 999, Off: 4}, 0, 1000) },
			n: 0, start: Pos{Seq: 999, Off: 4}, end: Pos{Seq: 999, Off: 4}},
		{name: "forward past the end", read: func() Page { return s.ReadForward(Pos{Seq: 5000}, 0, 1000) },
			n: 0, start: Pos{Seq: 1000}, end: Pos{Seq: 1000}},
		{name: "forward inside a line", read: func() Page { return s.ReadForward(Pos{Seq: 998, Off: 2}, 0, 1000) },
			first: "98", n: 2, start: Pos{Seq: 998, Off: 2}, end: Pos{Seq: 999, Off: 4}},
		{name: "forward by bytes", read: func() Page { return s.ReadForward(Pos{Seq: 950}, 0, 12) },
			first: "L950", n: 2, start: Pos{Seq: 950}, end: Pos{Seq: 952}, more: true, bytesAtMost: 12},
		{name: "backward tail", read: func() Page { return s.ReadBackward(Pos{Seq: 1000}, 990, 0, 1000) },
			first: "L990", n: 10, start: Pos{Seq: 990}, end: Pos{Seq: 999, Off: 4}},
		{name: "backward tail by bytes", read: func() Page { return s.ReadBackward(Pos{Seq: 1000}, 0, 0, 11) },
			first: "L998", n: 2, start: Pos{Seq: 998}, end: Pos{Seq: 999, Off: 4}, more: true, trimmed: 946},
		{name: "backward from a line start", read: func() Page { return s.ReadBackward(Pos{Seq: 960}, 950, 0, 1000) },
			first: "L950", n: 10, start: Pos{Seq: 950}, end: Pos{Seq: 960}},
		{name: "backward into trimmed lines", read: func() Page { return s.ReadBackward(Pos{Seq: 948}, 900, 0, 1000) },
			first: "L946", n: 2, trimmed: 46, start: Pos{Seq: 946}, end: Pos{Seq: 948}},
		{name: "backward all trimmed", read: func() Page { return s.ReadBackward(Pos{Seq: 940}, 900, 0, 1000) },
			n: 0, trimmed: 40, start: Pos{Seq: 946}, end: Pos{Seq: 946}},
		{name: "backward inside a line", read: func() Page { return s.ReadBackward(Pos{Seq: 999, Off: 2}, 998, 0, 1000) },
			first: "L998", n: 2, start: Pos{Seq: 998}, end: Pos{Seq: 999, Off: 2}, cut: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.read()
			if len(p.Lines) != tc.n || (tc.n > 0 && p.Lines[0] != tc.first) || p.Trimmed != tc.trimmed ||
				p.Start != tc.start || p.End != tc.end || p.More != tc.more || p.LastCut != tc.cut ||
				(tc.bytesAtMost > 0 && p.Bytes > tc.bytesAtMost) {
				t.Errorf("page = %+v\nwant first %q, %d lines, trimmed %d, start %+v, end %+v, more %v, cut %v",
					p, tc.first, tc.n, tc.trimmed, tc.start, tc.end, tc.more, tc.cut)
			}
		})
	}
}

// TestReadNumbersSurvive checks that a line keeps its number as the
// scrollback drops lines, is cleared (ED 3) and the screen is resized,
// and that a reader at the end of the newest line gets what is appended.
func TestReadNumbersSurvive(t *testing.T) {
	s := New(Options{Cols: 20, Rows: 5, Scrollback: 30})
	at := func(seq uint64) string {
		p := s.ReadForward(Pos{Seq: seq}, 1, 1000)
		if len(p.Lines) == 0 || p.Start.Seq != seq {
			return ""
		}
		return p.Lines[0]
	}
	for i := range 100 {
		fmt.Fprintf(s, "L%d\r\n", i)
	}
	if got := at(90); got != "L90" {
		t.Fatalf("line 90 = %q", got)
	}
	for i := 100; i < 200; i++ {
		fmt.Fprintf(s, "L%d\r\n", i)
	}
	if got := at(190); got != "L190" {
		t.Fatalf("line 190 after trimming = %q", got)
	}
	s.Write([]byte("\x1b[3J"))
	if oldest, _ := s.HistoryBounds(); oldest != 196 {
		t.Fatalf("after ED 3 the oldest line is %d, want 196 (the screen's)", oldest)
	}
	if got := at(198); got != "L198" {
		t.Fatalf("line 198 after ED 3 = %q", got)
	}
	s.Resize(7, 9)
	s.Resize(30, 3)
	if got := at(199); got != "L199" {
		t.Fatalf("line 199 after resizing = %q", got)
	}
	// A reader that reached the end of the prompt line gets what is typed.
	s.Write([]byte("$ "))
	tail := s.ReadBackward(Pos{Seq: 1 << 40}, 0, 1, 1000)
	if tail.Lines[0] != "$" {
		t.Fatalf("tail = %+v", tail)
	}
	s.Write([]byte("ls\r\nfile\r\n"))
	p := s.ReadForward(tail.End, 0, 1000)
	if want := []string{" ls", "file"}; !reflect.DeepEqual(p.Lines, want) || p.Start.Off != 1 {
		t.Fatalf("after the prompt: %+v, want %q from offset 1", p, want)
	}
	// Nothing new: an empty page that stays put.
	if q := s.ReadForward(p.End, 0, 1000); len(q.Lines) != 0 || q.End != p.End {
		t.Fatalf("nothing new: %+v", q)
	}
}

func TestReadCutsLongLines(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		bound int
	}{
		{name: "ascii", text: strings.Repeat("abcdefghij", 1000), bound: 64},
		{name: "three-byte", text: strings.Repeat("日本語", 500), bound: 10},
		{name: "four-byte", text: strings.Repeat("😀", 300), bound: 6},
		{name: "mixed", text: strings.Repeat("a日😀é", 300), bound: 9},
		{name: "smallest bound", text: strings.Repeat("é😀", 50), bound: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Cols: 50, Rows: 5, Scrollback: 10000})
			s.Write([]byte(tc.text))
			for _, back := range []bool{false, true} {
				_, got := readAll(t, s, tc.bound, back)
				if len(got) != 1 || got[0] != tc.text {
					t.Fatalf("backward=%v: %d lines, want the one line back", back, len(got))
				}
			}
			// A position inside a character moves to the next one.
			p := s.ReadForward(Pos{Seq: 0, Off: 1}, 0, 1<<20)
			if !utf8.ValidString(p.Lines[0]) {
				t.Fatalf("read from inside a character: %q", p.Lines[0][:8])
			}
		})
	}
}

func TestReadAltScreen(t *testing.T) {
	s := New(Options{Cols: 10, Rows: 4, Scrollback: 100})
	s.Write([]byte("main\r\n"))
	if _, ok := s.ReadAltScreen(10, 100); ok {
		t.Fatal("ReadAltScreen on the main screen")
	}
	s.Write([]byte("\x1b[?1049h\x1b[Htop\r\n\r\nbottom line"))
	tests := []struct {
		lines, bytes int
		want         []string
		more         bool
	}{
		{lines: 10, bytes: 100, want: []string{"top", "", "bottom lin", "e"}},
		{lines: 2, bytes: 100, want: []string{"bottom lin", "e"}, more: true},
		{lines: 10, bytes: 13, want: []string{"bottom lin", "e"}, more: true},
	}
	for _, tc := range tests {
		p, ok := s.ReadAltScreen(tc.lines, tc.bytes)
		if !ok || !reflect.DeepEqual(p.Lines, tc.want) || p.More != tc.more {
			t.Errorf("ReadAltScreen(%d, %d) = %+v, want %q more=%v", tc.lines, tc.bytes, p, tc.want, tc.more)
		}
	}
	// The history is still the main buffer's.
	if p := s.ReadForward(Pos{}, 0, 100); !reflect.DeepEqual(p.Lines, []string{"main"}) {
		t.Errorf("history during the alternate screen = %q", p.Lines)
	}
}

// FuzzReadPages feeds arbitrary output and checks that paging forward and
// backward with an arbitrary bound returns exactly LastLines, every page
// within the bound.
func FuzzReadPages(f *testing.F) {
	f.Add([]byte("hello\r\nworld"), uint8(10), uint8(3), uint16(7))
	f.Add([]byte(strings.Repeat("日本語😀 ", 40)+"\r\n\x1b[3Jx"), uint8(7), uint8(2), uint16(1))
	f.Add([]byte("\x1b[?1049habc\x1b[?1049l"+strings.Repeat("y", 300)), uint8(5), uint8(2), uint16(11))
	f.Fuzz(func(t *testing.T, data []byte, cols, rows uint8, bound uint16) {
		s := New(Options{Cols: int(cols%60) + 1, Rows: int(rows%20) + 1, Scrollback: 40})
		s.Write(data)
		want := s.LastLines(1 << 30)
		if s.AltScreen() {
			s.Write([]byte("\x1b[?1049l"))
			want = s.LastLines(1 << 30)
		}
		for _, back := range []bool{false, true} {
			_, got := readAll(t, s, int(bound%300), back)
			if !equalLines(got, want) {
				t.Fatalf("backward=%v: %q\nwant %q", back, got, want)
			}
		}
	})
}

func BenchmarkReadPages(b *testing.B) {
	s := New(Options{Cols: 200, Rows: 50})
	r := rand.New(rand.NewSource(1))
	for i := range 100000 {
		fmt.Fprintf(s, "%d %s\r\n", i, strings.Repeat("abcdefgh", r.Intn(20)))
	}
	b.ResetTimer()
	for range b.N {
		readAll(b, s, 64<<10, true)
	}
}
