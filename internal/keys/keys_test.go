package keys

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	tests := []struct {
		args    []string
		literal bool
		want    string
	}{
		{[]string{"echo hi", "Enter"}, false, "echo hi\r"},
		{[]string{"C-c"}, false, "\x03"},
		{[]string{"c-C"}, false, "\x03"},
		{[]string{"^C"}, false, "\x03"},
		{[]string{"C-["}, false, "\x1b"},
		{[]string{"C-Space"}, false, "\x00"},
		{[]string{"C-?"}, false, "\x7f"},
		{[]string{"M-x"}, false, "\x1bx"},
		{[]string{"C-M-x"}, false, "\x1b\x18"},
		{[]string{"S-a"}, false, "A"},
		{[]string{"Escape", "Tab", "BTab", "BSpace", "Space"}, false, "\x1b\t\x1b[Z\x7f "},
		{[]string{"Up", "down", "LEFT", "Right"}, false, "\x1b[A\x1b[B\x1b[D\x1b[C"},
		{[]string{"C-Up", "S-Down", "M-Left"}, false, "\x1b[1;5A\x1b[1;2B\x1b[1;3D"},
		{[]string{"Home", "End", "PPage", "NPage", "IC", "DC"}, false, "\x1b[H\x1b[F\x1b[5~\x1b[6~\x1b[2~\x1b[3~"},
		{[]string{"C-Delete", "F1", "F5", "F12", "S-F1"}, false, "\x1b[3;5~\x1bOP\x1b[15~\x1b[24~\x1b[1;2P"},
		{[]string{"S-Tab", "M-Enter"}, false, "\x1b[Z\x1b\r"},
		{[]string{"y", "Enter"}, false, "y\r"},
		// Not key names, nor shaped like one: typed as they are.
		{[]string{"Hello", "C-", "^", "^1", "^é", "e-mail", "C-a b"}, false, "HelloC-^^1^ée-mailC-a b"},
		{[]string{"", "x"}, false, "x"},
		{[]string{"Enter", "C-c", "C-Foo", "F13", "Ctrl-C"}, true, "EnterC-cC-FooF13Ctrl-C"},
		{[]string{"é", "M-é"}, false, "é\x1bé"},
	}
	for _, tc := range tests {
		got, err := Parse(tc.args, tc.literal)
		if err != nil || string(got) != tc.want {
			t.Errorf("Parse(%q, literal=%v) = %q, %v; want %q", tc.args, tc.literal, got, err, tc.want)
		}
	}
}

// TestParseRefuses: what cannot be typed, and names that look like keys
// but name none, are errors that name the argument.
func TestParseRefuses(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{""}, []string{"nothing to type"}},
		{nil, []string{"nothing to type"}},
		{[]string{"ok", "\xff"}, []string{"key 2", "UTF-8"}},
		{[]string{"ls", "C-Foo"}, []string{`key 2, "C-Foo"`, "not a key name", "literal"}},
		{[]string{"C-é"}, []string{`"C-é"`, "not a key name"}},
		{[]string{"S-100"}, []string{`"S-100"`}},
		{[]string{"F13"}, []string{`"F13"`, "F1 to F12"}},
		{[]string{"F0"}, []string{"F1 to F12"}},
		{[]string{"Ctrl-C"}, []string{`"Ctrl-C"`, "try C-C"}},
		{[]string{"alt+x"}, []string{"try M-x"}},
		{[]string{"shift-Tab"}, []string{"try S-Tab"}},
		{[]string{"cmd+c"}, []string{"no cmd key"}},
		{[]string{strings.Repeat("x", MaxBytes), "y"}, []string{"more than"}},
		{[]string{strings.Repeat("x", MaxBytes+1), "y"}, []string{"more than", "before key 2"}},
	}
	for _, tc := range tests {
		got, err := Parse(tc.args, false)
		if err == nil {
			t.Errorf("Parse(%.80q) = %.80q, want an error", tc.args, got)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%.80q): %.300v\nwant it to say %q", tc.args, err, w)
			}
		}
	}
}

// FuzzParse: any argument types bytes or is refused, never panics; text
// that neither is nor looks like a key name is typed exactly; a key name
// types what Named says; literal types every argument as it is; and no
// call types more than MaxBytes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"Enter", "C-c", "^[", "C-M-S-Up", "M-", "S-F12", "c-c-c", "héllo", "\xff", "", "C-\x00", "^é",
		"C-Foo", "F13", "Ctrl+c", "a b"} {
		f.Add(s, "Enter", false)
	}
	f.Fuzz(func(t *testing.T, a, b string, literal bool) {
		got, err := Parse([]string{a, b}, literal)
		if len(got) > MaxBytes {
			t.Fatalf("Parse(%q, %q) typed %d bytes", a, b, len(got))
		}
		var want []byte
		for _, arg := range []string{a, b} {
			k, isKey := Named(arg)
			switch {
			case literal || (!isKey && badName(arg) == ""):
				if !utf8.ValidString(arg) {
					if err == nil {
						t.Fatalf("Parse(%q, %q, %v) typed text that is not UTF-8", a, b, literal)
					}
					return
				}
				want = append(want, arg...)
			case isKey:
				want = append(want, k...)
			default:
				if err == nil || !strings.Contains(err.Error(), "not a key name") {
					t.Fatalf("Parse(%q, %q) = %q, %v; want %q refused as no key name", a, b, got, err, arg)
				}
				return
			}
		}
		switch {
		case len(want) == 0:
			if err == nil {
				t.Fatalf("Parse(%q, %q, %v) typed nothing without an error", a, b, literal)
			}
		case err != nil || !bytes.Equal(got, want):
			t.Fatalf("Parse(%q, %q, %v) = %q, %v; want %q", a, b, literal, got, err, want)
		}
	})
}

func TestSpell(t *testing.T) {
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
		if got := Spell([]byte(tc.keys)); got != tc.want {
			t.Errorf("Spell(%q) = %q, want %q", tc.keys, got, tc.want)
		}
	}
}

// FuzzSpell: the spelling is one line of printable characters, and
// different keys never spell the same.
func FuzzSpell(f *testing.F) {
	for _, s := range []string{"ls\r", "\x03", "␍", "\xff", "", "a\u0085"} {
		f.Add(s, s+"\r")
	}
	f.Add(`"\u0085\r"`, "\u0085\r")
	f.Fuzz(func(t *testing.T, a, b string) {
		sa, sb := Spell([]byte(a)), Spell([]byte(b))
		for _, r := range sa {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Spell(%q) = %q holds control character %U", a, sa, r)
			}
		}
		if a != b && sa == sb {
			t.Fatalf("Spell(%q) = Spell(%q) = %q", a, b, sa)
		}
	})
}
