package workspace

import (
	"fmt"
	"strings"
)

// Color is one named colour of the theme palette that groups and tabs use.
type Color struct {
	Name    string
	Hex     string
	ANSI256 int
}

// Palette is the theme's named colours, in the order a new group picks them.
var Palette = []Color{
	{"blue", "#4c8bf5", 69},
	{"green", "#3fb950", 71},
	{"orange", "#f0883e", 209},
	{"purple", "#a371f7", 141},
	{"red", "#f85149", 203},
	{"teal", "#39c5cf", 80},
	{"yellow", "#d29922", 178},
	{"pink", "#db61a2", 169},
	{"gray", "#8b949e", 246},
}

// checkColor accepts "" (the default) or a palette name.
func checkColor(field, name string) error {
	if name == "" {
		return nil
	}
	for _, c := range Palette {
		if c.Name == name {
			return nil
		}
	}
	names := make([]string, len(Palette))
	for i, c := range Palette {
		names[i] = c.Name
	}
	return invalid(field, fmt.Sprintf("unknown colour %q; use one of %s", name, strings.Join(names, ", ")))
}
