package config

import (
	"strings"
	"testing"
)

// TestParseFormat checks status line formats: variables, ## and errors.
func TestParseFormat(t *testing.T) {
	vals := map[string]string{"window": "main", "host": "box", "tab": "vim"}
	tests := []struct {
		in, want string
		errIn    string // a substring of the error; "" when valid
	}{
		{"", "", ""},
		{"plain", "plain", ""},
		{"#{window}", "main", ""},
		{"#{host}: #{tab} ## 100%", "box: vim # 100%", ""},
		{"#{windo}", "", `did you mean "window"?`},
		{"#{window", "", "no closing"},
		{"50#", "", "lone"},
		{"#W", "", "lone"},
		{"a\tb", "", "control character"},
	}
	for _, tt := range tests {
		f, err := ParseFormat(tt.in)
		switch {
		case tt.errIn != "" && (err == nil || !strings.Contains(err.Error(), tt.errIn)):
			t.Errorf("ParseFormat(%q) error = %v, want one with %q", tt.in, err, tt.errIn)
		case tt.errIn == "" && err != nil:
			t.Errorf("ParseFormat(%q): %v", tt.in, err)
		case tt.errIn == "":
			if got := f.Expand(func(n string) string { return vals[n] }); got != tt.want {
				t.Errorf("ParseFormat(%q).Expand = %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

// TestParseColour checks colour forms and the SGR parameters they give.
func TestParseColour(t *testing.T) {
	tests := []struct {
		in            string
		fg, bg, bg256 string // SGR for the foreground, truecolor background, 256-colour background
		ok            bool
	}{
		{"", "", "", "", true},
		{"default", "39", "49", "49", true},
		{"red", "31", "41", "41", true},
		{"Bright-Blue", "94", "104", "104", true},
		{"colour250", "38;5;250", "48;5;250", "48;5;250", true},
		{"color8", "38;5;8", "48;5;8", "48;5;8", true},
		{"#303030", "38;2;48;48;48", "48;2;48;48;48", "48;5;236", true}, // the grey ramp, not black
		{"#1c1c1c", "38;2;28;28;28", "48;2;28;28;28", "48;5;234", true},
		{"#5f87af", "38;2;95;135;175", "48;2;95;135;175", "48;5;67", true},
		{"#ff0000", "38;2;255;0;0", "48;2;255;0;0", "48;5;196", true},
		{"#12345", "", "", "", false},
		{"#gggggg", "", "", "", false},
		{"colour256", "", "", "", false},
		{"colour007", "", "", "", false},
		{"purple", "", "", "", false},
	}
	for _, tt := range tests {
		c, err := ParseColour(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseColour(%q): %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if got := c.SGR(false, true); got != tt.fg {
			t.Errorf("%q fg = %q, want %q", tt.in, got, tt.fg)
		}
		if got := c.SGR(true, true); got != tt.bg {
			t.Errorf("%q bg = %q, want %q", tt.in, got, tt.bg)
		}
		if got := c.SGR(true, false); got != tt.bg256 {
			t.Errorf("%q bg (256 colours) = %q, want %q", tt.in, got, tt.bg256)
		}
	}
}

// FuzzParseFormat checks that ParseFormat never panics and that a format
// it accepts expands to text without control characters.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"#{window}", "## #{host}", "#{", "#", "a\x1bb", "#{tab}#{tab_id}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fm, err := ParseFormat(s)
		if err != nil {
			return
		}
		out := fm.Expand(func(string) string { return "" })
		if strings.ContainsAny(out, "\x1b\r\n\x00") {
			t.Errorf("ParseFormat(%q) expands to %q", s, out)
		}
	})
}

// FuzzParseColour checks that ParseColour never panics and that an
// accepted colour gives SGR parameters of digits and semicolons.
func FuzzParseColour(f *testing.F) {
	for _, s := range []string{"#303030", "colour1", "bright-red", "default", "#", "colour", "bright-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseColour(s)
		if err != nil {
			return
		}
		for _, sgr := range []string{c.SGR(true, true), c.SGR(false, false)} {
			if strings.Trim(sgr, "0123456789;") != "" || (c.IsSet() && sgr == "") {
				t.Errorf("ParseColour(%q).SGR = %q", s, sgr)
			}
		}
	})
}
