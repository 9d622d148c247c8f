package screen

import "testing"

// TestNotSGR checks the quick refusal of CSI sequences that cannot be an
// SGR, given the bytes after "ESC [".
func TestNotSGR(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"12;40HAbcdefgh", true},     // cursor position
		{"1;1HmXXXXXXXX", true},      // an 'm' after the final byte is text
		{"?25hxxxxxxxxx", true},      // private marker
		{"2Jxxxxxxxxxxx", true},      // erase display
		{"1;31mxxxxxxxx", false},     // an SGR
		{"mxxxxxxxxxxxx", false},     // SGR with no parameters
		{"38;5;123;48;5;45m", false}, // long: fastSGR decides
		{"4:3mxxxxxxxxx", false},     // a colon: fastSGR decides (and refuses)
		{"12;40H", false},            // under 8 bytes: fastSGR decides
		{"1\x80;2Hxxxxxxx", true},    // a byte with the high bit set ends it
	} {
		if got := notSGR([]byte(tc.in), 0); got != tc.want {
			t.Errorf("notSGR(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzNotSGR checks that notSGR refuses only what fastSGR refuses too:
// skipping fastSGR after it must never change what the screen does.
func FuzzNotSGR(f *testing.F) {
	for _, s := range []string{"12;40HA", "1;31mhello", "38;5;1;48;2;1;2;3m", "?1049h", "0;1;4;7mxx", "1:2m", "m"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if notSGR(p, 0) {
			if _, k := fastSGR(p, 0); k != 0 {
				t.Fatalf("notSGR(%q) refused what fastSGR accepts (up to %d)", p, k)
			}
		}
	})
}
