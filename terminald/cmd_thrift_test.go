package terminald

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestCompactLines: runs of blank lines collapse to one, very long lines
// keep their head and a marker saying how much was cut (never inside a
// UTF-8 character), and the compaction counts what was done.
func TestCompactLines(t *testing.T) {
	long := strings.Repeat("x", 5000)
	wide := strings.Repeat("é", 1500) // 3000 bytes
	tests := []struct {
		name        string
		in, want    []string
		blanks, cut uint32
		bytesCut    uint64
	}{
		{"nothing to do", []string{"a", "", "b"}, []string{"a", "", "b"}, 0, 0, 0},
		{"blank run", []string{"a", "", "", "", "b"}, []string{"a", "", "b"}, 2, 0, 0},
		{"blank start and end", []string{"", "", "a", "", ""}, []string{"", "a", ""}, 2, 0, 0},
		{"whitespace-only lines are blank", []string{"a", " ", "\t", "b"}, []string{"a", "", "b"}, 1, 0, 0},
		{"long line", []string{long}, []string{strings.Repeat("x", 1000) + "[… 4000 more bytes cut]"}, 0, 1, 4000},
		{"at the limit", []string{long[:2000]}, []string{long[:2000]}, 0, 0, 0},
		{"cut on a character boundary", []string{wide}, []string{strings.Repeat("é", 500) + "[… 2000 more bytes cut]"}, 0, 1, 2000},
		{"empty", nil, []string{}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, c := compactLines(tt.in)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || len(got) != len(tt.want) {
				t.Errorf("lines %.200q, want %.200q", got, tt.want)
			}
			if c.GetBlankLinesRemoved() != tt.blanks || c.GetLinesCut() != tt.cut || c.GetBytesCut() != tt.bytesCut {
				t.Errorf("compaction %v, want %d blank lines removed, %d lines cut, %d bytes", c, tt.blanks, tt.cut, tt.bytesCut)
			}
			for _, l := range got {
				if !utf8.ValidString(l) {
					t.Errorf("invalid UTF-8 in %q", l)
				}
			}
		})
	}
}

// TestParseWaitFor: "idle", a regular expression, or an error naming the
// field and the input.
func TestParseWaitFor(t *testing.T) {
	tests := []struct {
		in        string
		idle      bool
		match     string
		noMatch   string
		errSubstr string
	}{
		{in: "idle", idle: true},
		{in: "listening on port [0-9]+", match: "Server listening on port 8080", noMatch: "listening on port x"},
		{in: "^done$", match: "done", noMatch: "undone"},
		{in: "(?i)error", match: "ERROR: x", noMatch: "fine"},
		{in: "Idle", match: "Idle now", noMatch: "idle"},
		{in: "a(b", errSubstr: `wait_for "a(b" is not a regular expression`},
		{in: "  ", errSubstr: "wait_for is blank"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			w, err := parseWaitFor(tt.in)
			if tt.errSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSubstr) || !errdefs.Is(err, errdefs.ErrInvalidArgument) {
					t.Fatalf("err = %v, want an invalid argument containing %q", err, tt.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.idle != tt.idle {
				t.Fatalf("idle = %v, want %v", w.idle, tt.idle)
			}
			if !tt.idle && (!w.re.MatchString(tt.match) || w.re.MatchString(tt.noMatch)) {
				t.Errorf("%q should match %q and not %q", tt.in, tt.match, tt.noMatch)
			}
		})
	}
}

// FuzzParseWaitFor: any input parses to idle, a compiled pattern, or an
// invalid-argument error quoting it; never a panic.
func FuzzParseWaitFor(f *testing.F) {
	for _, s := range []string{"idle", "", "a(b", "^x$", "(?i)error", `\`, "[[:alpha:]]+", "x{1001}", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := parseWaitFor(s)
		switch {
		case err != nil:
			if !errdefs.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "wait_for") {
				t.Fatalf("error %v is not an invalid argument naming wait_for", err)
			}
		case w.idle:
			if s != "idle" {
				t.Fatalf("%q parsed as idle", s)
			}
		case w.re == nil:
			t.Fatalf("%q: no pattern and no error", s)
		default:
			w.re.MatchString(s)
		}
	})
}
