package attach

import (
	"strings"
	"testing"
)

// TestBracketed: a paste holds exactly one end mark, its own, whatever
// the text, including marks nested so that removing one makes another.
func TestBracketed(t *testing.T) {
	for _, text := range []string{
		"ls -l\r",
		"a\x1b[201~rm -rf ~\r",
		"\x1b[20\x1b[201~1~touch pwned\r",
		"\x1b[2\x1b[20\x1b[201~1~1~x",
		"\x1b\x1b[201~[201~",
	} {
		got := bracketed(text)
		if !strings.HasPrefix(got, "\x1b[200~") || strings.Count(got, "\x1b[201~") != 1 || !strings.HasSuffix(got, "\x1b[201~") {
			t.Errorf("bracketed(%q) = %q: want one end mark, at the end", text, got)
		}
		if strings.Count(got, "\x1b") != 2 {
			t.Errorf("bracketed(%q) = %q: an escape inside the paste", text, got)
		}
	}
}
