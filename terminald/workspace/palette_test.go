package workspace

import "testing"

// TestPaletteANSI256 checks the derived 256-colour indexes of the theme
// palette: the nearest of the cube and the grey ramp (gray is a grey).
// Purple and yellow were hand-picked as 141 and 178 before, farther away.
func TestPaletteANSI256(t *testing.T) {
	want := map[string]int{
		"blue": 69, "green": 71, "orange": 209, "purple": 135, "red": 203,
		"teal": 80, "yellow": 172, "pink": 169, "gray": 246,
	}
	for _, c := range Palette {
		if c.ANSI256 != want[c.Name] {
			t.Errorf("%s (%s): ANSI256 %d, want %d", c.Name, c.Hex, c.ANSI256, want[c.Name])
		}
	}
	if len(Palette) != len(want) {
		t.Errorf("palette has %d colours, the test knows %d", len(Palette), len(want))
	}
}
