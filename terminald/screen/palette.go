package screen

// Nearest256 returns the xterm 256-colour palette index closest to the
// 24-bit colour r, g, b: the nearest of the 6x6x6 colour cube (16-231)
// and of the 24-step grey ramp (232-255), never the themeable 0-15. Every
// place that turns an RGB colour into a palette index for a terminal
// without 24-bit colour uses it: a tab's content, config.json's status
// line colours, the theme palette's groups and tabs.
func Nearest256(r, g, b uint8) uint8 {
	// The cube's distance is a sum over channels, so the nearest level
	// per channel gives the nearest cube colour.
	ri, gi, bi := cubeIndex(r), cubeIndex(g), cubeIndex(b)
	// The grey nearest to r, g, b is one of the two ramp levels (8, 18,
	// ..., 238) around their mean.
	best, bd := 16+36*ri+6*gi+bi, dist3(r, g, b, cubeLevels[ri], cubeLevels[gi], cubeLevels[bi])
	k := min(max(((int(r)+int(g)+int(b))/3-8)/10, 0), 23)
	for _, k := range []int{k, min(k+1, 23)} {
		v := 8 + 10*k
		if d := dist3(r, g, b, v, v, v); d < bd {
			best, bd = 232+k, d
		}
	}
	return uint8(best)
}

// cubeLevels are the channel values of xterm's 6x6x6 colour cube.
var cubeLevels = [6]int{0, 95, 135, 175, 215, 255}

// cubeIndex is the cube level nearest to channel value v.
func cubeIndex(v uint8) int {
	best, bd := 0, 1<<30
	for i, l := range cubeLevels {
		d := int(v) - l
		if d < 0 {
			d = -d
		}
		if d < bd {
			best, bd = i, d
		}
	}
	return best
}

func dist3(r, g, b uint8, r2, g2, b2 int) int {
	dr, dg, db := int(r)-r2, int(g)-g2, int(b)-b2
	return dr*dr + dg*dg + db*db
}
