package bench

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/terminald/screen"
)

var sgrRE = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// TestGenerator checks the generated input is what the benchmarks claim:
// deterministic, valid UTF-8, lines of 20 to 120 columns, about half of
// them coloured in all three colour forms, some CJK, and the end marker
// last, which a screen shows as its last line.
func TestGenerator(t *testing.T) {
	var a, b bytes.Buffer
	sizeA, marker, err := generate(&a, "t", 512<<10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := generate(&b, "t", 512<<10, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs generated different bytes")
	}
	if int64(a.Len()) != sizeA || sizeA < 512<<10 {
		t.Fatalf("size %d, buffer %d, want >= %d", sizeA, a.Len(), 512<<10)
	}
	if !utf8.Valid(a.Bytes()) {
		t.Fatal("invalid UTF-8")
	}
	text := strings.TrimSuffix(a.String(), "\n")
	lines := strings.Split(text, "\n")
	if got := lines[len(lines)-1]; got != marker {
		t.Fatalf("last line %q, want the marker %q", got, marker)
	}
	lines = lines[:len(lines)-1]
	var coloured, cjk int
	for i, l := range lines {
		plain := sgrRE.ReplaceAllString(l, "")
		if strings.ContainsRune(plain, 0x1b) {
			t.Fatalf("line %d: stray escape: %q", i, l)
		}
		w := 0
		for _, r := range plain {
			if r < 0x80 {
				w++
			} else {
				w += 2
			}
		}
		if w < 20 || w > 120 {
			t.Fatalf("line %d is %d columns wide: %q", i, w, plain)
		}
		if plain != l {
			coloured++
		}
		if len(plain) != utf8.RuneCountInString(plain) {
			cjk++
		}
	}
	n := len(lines)
	if f := float64(coloured) / float64(n); f < 0.35 || f > 0.65 {
		t.Errorf("%.0f%% of lines coloured, want about half", 100*f)
	}
	if f := float64(cjk) / float64(n); f < 0.03 || f > 0.15 {
		t.Errorf("%.0f%% of lines have CJK, want about a tenth", 100*f)
	}
	for _, form := range []string{"\x1b[3", "\x1b[38;5;", ";48;5;", "\x1b[38;2;", "\x1b[1;9"} {
		if !strings.Contains(text, form) {
			t.Errorf("no %q colours", form)
		}
	}

	s := screen.New(screen.Options{Cols: 80, Rows: 24, Scrollback: 1000})
	s.Write(ptyBytes(a.Bytes()))
	if got := s.LastLines(1); len(got) != 1 || got[0] != marker {
		t.Fatalf("screen's last line %q, want %q", got, marker)
	}
}
