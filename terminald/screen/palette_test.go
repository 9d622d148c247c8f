package screen

import "testing"

// TestNearest256 checks the rounding every 256-colour client sees: the
// cube where it is nearer, the grey ramp where that is (config.json's
// "#303030" is grey 236, not black).
func TestNearest256(t *testing.T) {
	for _, c := range []struct {
		name    string
		r, g, b uint8
		want    uint8
	}{
		{"black", 0, 0, 0, 16},
		{"white", 255, 255, 255, 231},
		{"red", 255, 0, 0, 196},
		{"mid grey", 128, 128, 128, 244},
		{"README's status bg #303030", 0x30, 0x30, 0x30, 236},
		{"dark grey #1c1c1c", 0x1c, 0x1c, 0x1c, 234},
		{"near black #080808", 8, 8, 8, 232},
		{"#050505 nearer the cube's black than grey 232", 3, 3, 3, 16},
		{"light grey #eeeeee", 0xee, 0xee, 0xee, 255},
		{"cube grey #5f5f5f", 0x5f, 0x5f, 0x5f, 59},
		{"palette blue #4c8bf5", 0x4c, 0x8b, 0xf5, 69},
		{"palette gray #8b949e", 0x8b, 0x94, 0x9e, 246},
		{"greyish blue stays in the cube", 0x30, 0x30, 0x90, 60},
	} {
		if got := Nearest256(c.r, c.g, c.b); got != c.want {
			t.Errorf("%s: Nearest256(%d,%d,%d) = %d, want %d", c.name, c.r, c.g, c.b, got, c.want)
		}
	}
}

// TestNearest256Exhaustive checks Nearest256 against a search of all 240
// colours it may return, over a grid of inputs.
func TestNearest256Exhaustive(t *testing.T) {
	level := func(n int) (int, int, int) {
		if n >= 232 {
			v := 8 + 10*(n-232)
			return v, v, v
		}
		n -= 16
		return cubeLevels[n/36], cubeLevels[n/6%6], cubeLevels[n%6]
	}
	for r := 0; r < 256; r += 7 {
		for g := 0; g < 256; g += 5 {
			for b := 0; b < 256; b += 3 {
				got := Nearest256(uint8(r), uint8(g), uint8(b))
				gr, gg, gb := level(int(got))
				gd := dist3(uint8(r), uint8(g), uint8(b), gr, gg, gb)
				for n := 16; n < 256; n++ {
					lr, lg, lb := level(n)
					if d := dist3(uint8(r), uint8(g), uint8(b), lr, lg, lb); d < gd {
						t.Fatalf("Nearest256(%d,%d,%d) = %d at distance %d; %d is nearer (%d)", r, g, b, got, gd, n, d)
					}
				}
			}
		}
	}
}
