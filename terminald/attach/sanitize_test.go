package attach

import "testing"

// TestSanitize: a name or title an agent chose keeps its letters and
// emoji (ZWJ sequences whole) and loses controls and bidi formatting
// characters, which would drive or reorder the human's terminal.
func TestSanitize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"build", "build"},
		{"日本語 ✓ 👩‍💻", "日本語 ✓ 👩‍💻"},
		{"a\x1b]2;x\x07b", "a]2;xb"},
		{"\u009b2J", "2J"},
		{"ok\u202eko", "okko"},
		{"\u2066x\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d", "x"},
	} {
		if got := sanitize(c.in); got != c.want {
			t.Errorf("sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
