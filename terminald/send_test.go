package terminald

import "testing"

func TestSpellKeys(t *testing.T) {
	tests := []struct{ keys, want string }{
		{"echo hi\r", "echo hi␍"},
		{"\x03", "␃"},
		{"\x1b[A\x7f\t", "␛[A␡␉"},
		{"héllo wörld", "héllo wörld"},
		// A picture typed as text would be ambiguous: quote instead.
		{"echo ␍\r", `"echo ␍\r"`},
		{"\xff\r", `"\xff\r"`},
		{"a\u0085b", `"a\u0085b"`},
		{`"a\u0085b"`, `"\"a\\u0085b\""`},
	}
	for _, tc := range tests {
		if got := spellKeys([]byte(tc.keys)); got != tc.want {
			t.Errorf("spellKeys(%q) = %q, want %q", tc.keys, got, tc.want)
		}
	}
}

// FuzzSpellKeys: the spelling is one line of printable characters (what
// run_command's rules accept), and different keys never spell the same.
func FuzzSpellKeys(f *testing.F) {
	for _, s := range []string{"ls\r", "\x03", "␍", "\xff", "", "a\u0085"} {
		f.Add(s, s+"\r")
	}
	f.Add(`"\u0085\r"`, "\u0085\r")
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, sb := spellKeys([]byte(a)), spellKeys([]byte(b))
		for _, r := range sa {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("spellKeys(%q) = %q holds control character %U", a, sa, r)
			}
		}
		if a != b && sa == sb {
			t.Fatalf("spellKeys(%q) = spellKeys(%q) = %q", a, b, sa)
		}
	})
}
