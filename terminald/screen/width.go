package screen

import "github.com/clipperhouse/displaywidth"

var widthOpts = displaywidth.Options{}

// runeWidth returns the cell width of a printable rune: 0 for combining
// and other zero-width runes, 2 for wide (East Asian wide, emoji), else 1.
// Ambiguous-width runes are narrow, as in xterm and tmux by default.
func runeWidth(r rune) int {
	if r < 0x300 {
		return 1
	}
	w := widthOpts.Rune(r)
	if w > 2 {
		w = 2
	}
	return w
}
