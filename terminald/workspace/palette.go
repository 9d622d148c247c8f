package workspace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// Color is one named colour of the theme palette that groups and tabs use.
type Color struct {
	Name string
	Hex  string
	// ANSI256 is the nearest xterm 256-colour index, for clients
	// without 24-bit colour (screen.Nearest256 of Hex).
	ANSI256 int
}

// Palette is the theme's named colours, in the order a new group picks them.
var Palette = []Color{
	themeColor("blue", "#4c8bf5"),
	themeColor("green", "#3fb950"),
	themeColor("orange", "#f0883e"),
	themeColor("purple", "#a371f7"),
	themeColor("red", "#f85149"),
	themeColor("teal", "#39c5cf"),
	themeColor("yellow", "#d29922"),
	themeColor("pink", "#db61a2"),
	themeColor("gray", "#8b949e"),
}

// themeColor is the palette colour name of hex "#rrggbb", its 256-colour
// index derived, so that no table of indexes can disagree with the
// renderer's rounding.
func themeColor(name, hex string) Color {
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil || len(hex) != 7 {
		panic("workspace: palette colour " + name + " has a bad hex " + hex)
	}
	return Color{Name: name, Hex: hex, ANSI256: int(screen.Nearest256(uint8(v>>16), uint8(v>>8), uint8(v)))}
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
