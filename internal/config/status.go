package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// Status configures attach's status line, tmux-like but small: text
// before the tabs, text at the right end, and the bar's colours.
type Status struct {
	// Left is shown before the tabs; empty by default.
	Left string `json:"left,omitempty"`
	// Right is shown at the right end; default "#{window}". A message
	// (an error, copy mode's position) takes its place for a while.
	Right string `json:"right,omitempty"`
	// Style holds the bar's colours.
	Style StatusStyle `json:"style"`
}

// StatusStyle holds the status line's colours: "#rrggbb", "colour0" to
// "colour255", one of the eight names (black, red, green, yellow, blue,
// magenta, cyan, white, each also "bright-…"), or "default". Unset
// colours keep the default bar: the client's colours in inverse video.
type StatusStyle struct {
	// BG and FG colour the bar.
	BG string `json:"bg,omitempty"`
	FG string `json:"fg,omitempty"`
	// ActiveBG and ActiveFG colour the tab shown.
	ActiveBG string `json:"active_bg,omitempty"`
	ActiveFG string `json:"active_fg,omitempty"`
}

// DefaultStatusRight is the right-hand side without configuration.
const DefaultStatusRight = "#{window}"

// FormatVars are the variables a status line format may use, as
// "#{name}".
var FormatVars = []string{"window", "window_id", "tab", "tab_id", "dir", "host"}

// Format is a parsed status line format: text with variables.
type Format []FormatPart

// FormatPart is literal Text, or the variable Var when Var is set.
type FormatPart struct {
	Text string
	Var  string
}

// ParseFormat reads a status line format: text in which "#{name}" stands
// for a variable of FormatVars and "##" for "#".
func ParseFormat(s string) (Format, error) {
	var f Format
	var text strings.Builder
	for i := 0; i < len(s); {
		r := rune(s[i])
		if r < 0x80 && unicode.IsControl(r) {
			return nil, fmt.Errorf("format %q: control character %q at byte %d; the status line shows text only", s, r, i)
		}
		if s[i] != '#' {
			text.WriteByte(s[i])
			i++
			continue
		}
		rest := s[i+1:]
		switch {
		case strings.HasPrefix(rest, "#"):
			text.WriteByte('#')
			i += 2
		case strings.HasPrefix(rest, "{"):
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return nil, fmt.Errorf("format %q: \"#{\" at byte %d has no closing \"}\"", s, i)
			}
			name := rest[1:end]
			if !slices.Contains(FormatVars, name) {
				return nil, fmt.Errorf("format %q: unknown variable #{%s}%s; the variables are #{%s}",
					s, name, suggest(name, FormatVars), strings.Join(FormatVars, "}, #{"))
			}
			if text.Len() > 0 {
				f = append(f, FormatPart{Text: text.String()})
				text.Reset()
			}
			f = append(f, FormatPart{Var: name})
			i += end + 2
		default:
			return nil, fmt.Errorf("format %q: lone \"#\" at byte %d; write #{name} for a variable, ## for a #", s, i)
		}
	}
	if text.Len() > 0 {
		f = append(f, FormatPart{Text: text.String()})
	}
	return f, nil
}

// Expand writes f with each variable's value from value.
func (f Format) Expand(value func(name string) string) string {
	var b strings.Builder
	for _, p := range f {
		if p.Var != "" {
			b.WriteString(value(p.Var))
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Colour is a parsed status line colour; the zero Colour is unset.
type Colour struct {
	kind    colourKind
	n       int // colourIndex: 0-255; colourBasic: 0-15
	r, g, b uint8
}

type colourKind int

const (
	colourUnset colourKind = iota
	colourDefault
	colourBasic
	colourIndex
	colourRGB
)

// basicColours are the eight ANSI colour names; "bright-" adds 8.
var basicColours = []string{"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"}

// ParseColour reads a colour as StatusStyle describes it; "" is unset.
func ParseColour(s string) (Colour, error) {
	name := strings.ToLower(s)
	switch {
	case name == "":
		return Colour{}, nil
	case name == "default":
		return Colour{kind: colourDefault}, nil
	case strings.HasPrefix(name, "#"):
		v, err := strconv.ParseUint(name[1:], 16, 32)
		if len(name) != 7 || err != nil {
			return Colour{}, fmt.Errorf("colour %q: write #rrggbb with six hex digits, e.g. #303030", s)
		}
		return Colour{kind: colourRGB, r: uint8(v >> 16), g: uint8(v >> 8), b: uint8(v)}, nil
	}
	if rest, ok := strings.CutPrefix(name, "colour"); ok || strings.HasPrefix(name, "color") {
		if !ok {
			rest = name[len("color"):]
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || n > 255 || rest != strconv.Itoa(n) {
			return Colour{}, fmt.Errorf("colour %q: write colour0 to colour255", s)
		}
		return Colour{kind: colourIndex, n: n}, nil
	}
	base, bright := strings.CutPrefix(name, "bright-")
	if i := slices.Index(basicColours, base); i >= 0 {
		if bright {
			i += 8
		}
		return Colour{kind: colourBasic, n: i}, nil
	}
	return Colour{}, fmt.Errorf("colour %q: write #rrggbb, colour0 to colour255, default, or one of %s (each also bright-…)",
		s, strings.Join(basicColours, ", "))
}

// IsSet reports whether the colour was given.
func (c Colour) IsSet() bool { return c.kind != colourUnset }

// SGR returns the SGR parameters that select c as the background (bg) or
// foreground: 24-bit with trueColor, else the nearest of 256 colours
// (screen.Nearest256: the cube or the grey ramp).
// An unset colour gives "".
func (c Colour) SGR(bg, trueColor bool) string {
	base := 38
	if bg {
		base = 48
	}
	switch c.kind {
	case colourDefault:
		return strconv.Itoa(base + 1)
	case colourBasic:
		if c.n >= 8 {
			return strconv.Itoa(base + 52 + c.n - 8) // 90-97, 100-107
		}
		return strconv.Itoa(base - 8 + c.n) // 30-37, 40-47
	case colourIndex:
		return fmt.Sprintf("%d;5;%d", base, c.n)
	case colourRGB:
		if trueColor {
			return fmt.Sprintf("%d;2;%d;%d;%d", base, c.r, c.g, c.b)
		}
		return fmt.Sprintf("%d;5;%d", base, screen.Nearest256(c.r, c.g, c.b))
	}
	return ""
}

// check validates the status line settings.
func (s Status) check() error {
	for _, f := range []struct{ name, v string }{{"left", s.Left}, {"right", s.Right}} {
		if _, err := ParseFormat(f.v); err != nil {
			return fmt.Errorf("status.%s: %w", f.name, err)
		}
	}
	st := s.Style
	for _, c := range []struct{ name, v string }{{"bg", st.BG}, {"fg", st.FG}, {"active_bg", st.ActiveBG}, {"active_fg", st.ActiveFG}} {
		if _, err := ParseColour(c.v); err != nil {
			return fmt.Errorf("status.style.%s: %w", c.name, err)
		}
	}
	return nil
}
