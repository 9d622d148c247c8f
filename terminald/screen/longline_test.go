package screen

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// longLineData returns ~size bytes of words in lines of 40-80 columns
// ending in CRLF, and the same bytes with every CRLF replaced by two
// spaces: one line without a newline.
func longLineData(size int) (withNL, without []byte) {
	withNL = benchData("ascii", size)
	without = bytes.ReplaceAll(withNL, []byte("\r\n"), []byte("  "))
	return withNL, without
}

// TestLongLineCases feeds long lines without a newline (whole and split at
// every byte, as TestCases does) and checks they read back whole.
func TestLongLineCases(t *testing.T) {
	long := strings.Repeat("0123456789", 30)
	tests := []tcase{
		{name: "300 chars at 7 cols", cols: 7, rows: 3, sb: 100, in: long, lines: []string{long}},
		{name: "300 chars at 80 cols", cols: 80, rows: 2, sb: 100, in: long, lines: []string{long}},
		{name: "with SGR", cols: 9, rows: 2, sb: 100, in: "\x1b[31m" + long + "\x1b[m" + long, lines: []string{long + long}},
		{name: "wide chars", cols: 5, rows: 2, sb: 100, in: strings.Repeat("日本語", 20), lines: []string{strings.Repeat("日本語", 20)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			s, r := runCase(t, tc, [][]byte{in})
			checkInvariants(t, s)
			if got := s.LastLines(100); strings.Join(got, "|") != strings.Join(tc.lines, "|") {
				t.Fatalf("lines = %q, want %q", got, tc.lines)
			}
			want := snapshot(s, r)
			for k := 1; k < len(in); k++ {
				s2, r2 := runCase(t, tc, [][]byte{in[:k], in[k:]})
				if got := snapshot(s2, r2); got != want {
					t.Fatalf("split at %d differs:\n%s\nwant:\n%s", k, got, want)
				}
			}
		})
	}
}

// TestLongLineLinear checks that one write of a long line without a
// newline costs about what the same bytes cost in 4 KiB writes (it used to
// be quadratic: 2.1 s against 8 ms for 1 MiB). The bound is loose: at this
// size the quadratic version took thousands of times longer.
func TestLongLineLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	_, line := longLineData(4 << 20)
	// CPU time of this thread, best of three: a loaded machine that
	// deschedules the test does not count.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := func(f func()) time.Duration {
		d := time.Duration(1 << 62)
		for range 3 {
			t0 := threadCPU()
			f()
			d = min(d, threadCPU()-t0)
		}
		return d
	}
	whole := best(func() {
		New(Options{Cols: 80, Rows: 24}).Write(line)
	})
	chunked := best(func() {
		s := New(Options{Cols: 80, Rows: 24})
		for p := line; len(p) > 0; p = p[min(len(p), 4096):] {
			s.Write(p[:min(len(p), 4096)])
		}
	})
	t.Logf("4 MiB line: one write %v, 4 KiB writes %v", whole, chunked)
	if whole > 5*chunked+20*time.Millisecond {
		t.Errorf("one write %v, 4 KiB writes %v: not linear", whole, chunked)
	}
}

// BenchmarkLongLine ingests 100 MB of text in 64 KiB writes, as a PTY
// reader does, once in lines of 40-80 columns and once as a single line
// without a newline (the same bytes, CRLF replaced by two spaces), plus
// the 1 MiB single write of the issue. Compare the MB/s of the variants.
func BenchmarkLongLine(b *testing.B) {
	withNL, without := longLineData(100 << 20)
	for _, v := range []struct {
		name  string
		data  []byte
		chunk int
	}{
		{"newlines-100MB", withNL, 64 << 10},
		{"nonewline-100MB", without, 64 << 10},
		{"newlines-1MiB-onewrite", withNL[:1<<20], 1 << 20},
		{"nonewline-1MiB-onewrite", without[:1<<20], 1 << 20},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(v.data)))
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0 := threadCPU()
			for i := 0; i < b.N; i++ {
				s := New(Options{Cols: 80, Rows: 24})
				for p := v.data; len(p) > 0; {
					n := min(len(p), v.chunk)
					s.Write(p[:n])
					p = p[n:]
				}
			}
			if d := threadCPU() - t0; d > 0 {
				b.ReportMetric(float64(len(v.data))*float64(b.N)/1e6/d.Seconds(), "cpuMB/s")
			}
		})
	}
}

// ExampleScreen_Write_longLine shows that a line longer than the screen
// reads back whole: rows wrapped by the terminal are joined again.
func ExampleScreen_Write_longLine() {
	s := New(Options{Cols: 10, Rows: 2})
	s.Write([]byte(strings.Repeat("abc", 10)))
	fmt.Println(s.LastLines(1))
	// Output: [abcabcabcabcabcabcabcabcabcabc]
}
