package main

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func TestParseKeys(t *testing.T) {
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
		// Not key names: typed as they are.
		{[]string{"Hello", "C-", "^", "C-ab", "C-é"}, false, "HelloC-^C-abC-é"},
		{[]string{"Enter", "C-c"}, true, "EnterC-c"},
		{[]string{"é", "M-é"}, false, "é\x1bé"},
	}
	for _, tc := range tests {
		got, err := parseKeys(tc.args, tc.literal)
		if err != nil || string(got) != tc.want {
			t.Errorf("parseKeys(%q, literal=%v) = %q, %v; want %q", tc.args, tc.literal, got, err, tc.want)
		}
	}
	for _, bad := range [][]string{{""}, {"\xff"}} {
		if got, err := parseKeys(bad, false); err == nil {
			t.Errorf("parseKeys(%q) = %q, want an error", bad, got)
		}
	}
}

// FuzzParseKeys: any argument either types bytes or is refused as text
// that is not UTF-8; key names never panic, and text that is no key name
// is typed exactly.
func FuzzParseKeys(f *testing.F) {
	for _, s := range []string{"Enter", "C-c", "^[", "C-M-S-Up", "M-", "S-F12", "c-c-c", "héllo", "\xff", "", "C-\x00", "^é"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, arg string, literal bool) {
		got, err := parseKeys([]string{arg}, literal)
		if err != nil {
			if arg != "" && utf8.ValidString(arg) {
				if _, isKey := keyBytes(arg); literal || !isKey {
					t.Fatalf("parseKeys(%q, %v) refused valid text: %v", arg, literal, err)
				}
			}
			return
		}
		if _, isKey := keyBytes(arg); (literal || !isKey) && !bytes.Equal(got, []byte(arg)) {
			t.Fatalf("parseKeys(%q, %v) = %q, want the text itself", arg, literal, got)
		}
		if len(got) == 0 {
			t.Fatalf("parseKeys(%q, %v) typed nothing without an error", arg, literal)
		}
	})
}
