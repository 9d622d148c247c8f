package screen

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// vtcase is one conformance or edge case: bytes fed to a fresh screen, and
// the state xterm would show afterwards. Every case is run with its input
// whole, split in two at every byte and byte by byte; all must agree.
type vtcase struct {
	name  string // the control and the behaviour checked
	xterm string // the xterm behaviour followed, from ctlseqs or xterm's source

	cols, rows, sb int // default 10x5, scrollback 100
	in             string

	// screen is the visible rows, trailing spaces trimmed; rows past the
	// end must be blank. nil: not checked.
	screen []string
	// sbLines is the scrollback rows (one per physical row, trailing
	// spaces trimmed); always checked (nil: empty).
	sbLines []string
	// lines is LastLines (the read-back agents get). nil: derived from
	// sbLines and screen when no row is soft-wrapped, else not checked.
	lines []string
	// wraps lists the visible rows that are soft-wrapped, e.g. "0,2";
	// "-" for none, "" not checked.
	wraps string
	// cursor is the expected cursor; nil: not checked.
	cursor *Cursor
	// title, if set, is the expected window title.
	title string
	// replies, if non-nil, are the expected query answers.
	replies []string
	// check, if set, checks anything else.
	check func(t *testing.T, s *Screen, r *recorder)
}

func (tc vtcase) screenOf() (*Screen, *recorder) {
	cols, rows, sb := tc.cols, tc.rows, tc.sb
	if cols == 0 {
		cols = 10
	}
	if rows == 0 {
		rows = 5
	}
	if sb == 0 {
		sb = 100
	}
	return newRec(cols, rows, sb)
}

// runVTCases runs each case whole, split at every byte and byte by byte.
func runVTCases(t *testing.T, cases []vtcase) {
	t.Helper()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			s, r := tc.screenOf()
			s.Write(in)
			checkInvariants(t, s)
			checkVTCase(t, tc, s, r)
			want := snapshot(s, r)
			for k := 1; k < len(in); k++ {
				s2, r2 := tc.screenOf()
				s2.Write(in[:k])
				s2.Write(in[k:])
				if got := snapshot(s2, r2); got != want {
					t.Fatalf("split at %d differs:\n%s\nwant:\n%s", k, got, want)
				}
			}
			s3, r3 := tc.screenOf()
			for k := range in {
				s3.Write(in[k : k+1])
			}
			if got := snapshot(s3, r3); got != want {
				t.Fatalf("byte-wise differs:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func checkVTCase(t *testing.T, tc vtcase, s *Screen, r *recorder) {
	t.Helper()
	_, rows := s.Size()
	if tc.screen != nil {
		var got []string
		for y := 0; y < rows; y++ {
			got = append(got, rowText(s, y))
		}
		want := append([]string(nil), tc.screen...)
		for len(want) < rows {
			want = append(want, "")
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("screen:\n%s\nwant:\n%s", strings.Join(got, "|\n"), strings.Join(want, "|\n"))
		}
	}
	var sb []string
	for i := 0; i < s.ScrollbackLen(); i++ {
		cells, _ := s.ScrollbackRow(i)
		var b strings.Builder
		for _, c := range cells {
			b.WriteString(c.String())
		}
		sb = append(sb, strings.TrimRight(b.String(), " "))
	}
	if !reflect.DeepEqual(sb, tc.sbLines) {
		t.Errorf("scrollback = %q, want %q", sb, tc.sbLines)
	}
	lines := tc.lines
	if lines == nil && tc.screen != nil && !s.AltScreen() && !anyWrapped(s) {
		// Without soft wraps the read-back is the scrollback then the
		// screen, trailing blank rows dropped.
		lines = append(append([]string{}, tc.sbLines...), tc.screen...)
		for len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
	}
	if lines != nil {
		tc.lines = lines
		got := s.LastLines(1000)
		if len(got) == 0 {
			got = []string{}
		}
		if !reflect.DeepEqual(got, tc.lines) {
			t.Errorf("lines = %q, want %q", got, tc.lines)
		}
	}
	if tc.wraps != "" {
		var w []string
		for y := 0; y < rows; y++ {
			if s.RowWrapped(y) {
				w = append(w, strconv.Itoa(y))
			}
		}
		got := strings.Join(w, ",")
		if got == "" {
			got = "-"
		}
		if got != tc.wraps {
			t.Errorf("wrapped rows = %s, want %s", got, tc.wraps)
		}
	}
	if tc.cursor != nil && s.Cursor() != *tc.cursor {
		t.Errorf("cursor = %+v, want %+v", s.Cursor(), *tc.cursor)
	}
	if tc.title != "" && s.Title() != tc.title {
		t.Errorf("title = %q, want %q", s.Title(), tc.title)
	}
	if tc.replies != nil && !reflect.DeepEqual(r.replies, tc.replies) {
		t.Errorf("replies = %q, want %q", r.replies, tc.replies)
	}
	if tc.check != nil {
		tc.check(t, s, r)
	}
}

func anyWrapped(s *Screen) bool {
	_, rows := s.Size()
	for y := 0; y < rows; y++ {
		if s.RowWrapped(y) {
			return true
		}
	}
	for i := 0; i < s.ScrollbackLen(); i++ {
		if _, w := s.ScrollbackRow(i); w {
			return true
		}
	}
	return false
}
