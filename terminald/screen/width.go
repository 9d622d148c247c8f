package screen

import (
	"sync"

	"github.com/clipperhouse/displaywidth"
)

var widthOpts = displaywidth.Options{}

// widths caches runeWidth for the first two planes: the Basic Multilingual
// Plane and the Supplementary Multilingual Plane (emoji, symbols, historic
// scripts), all but a few runes programs print. It is filled on first use
// of non-ASCII text, in about a millisecond; a lookup costs a fraction of
// displaywidth's.
var (
	widths     [widthsLen]uint8
	widthsOnce sync.Once
)

// widthsLen is the number of runes widths covers.
const widthsLen = 0x20000

func initWidths() {
	for r := rune(0); r < widthsLen; r++ {
		w := 1
		if r >= 0x300 && !isRegionalIndicator(r) {
			w = lookupWidth(r)
		}
		widths[r] = uint8(w)
	}
}

func lookupWidth(r rune) int {
	w := widthOpts.Rune(r)
	return min(max(w, 0), 2)
}

// runeWidth returns the cell width of a printable rune: 0 for combining
// and other zero-width runes, 2 for wide (East Asian wide, emoji), else 1.
// Ambiguous-width runes are narrow, as in xterm and tmux by default.
// Regional indicators are 1 column each, as in wcwidth(3): a flag is two
// of them (see grapheme_width.go for the clustering mode).
func runeWidth(r rune) int {
	if r < 0x300 {
		return 1
	}
	if r < widthsLen {
		widthsOnce.Do(initWidths)
		return int(widths[r])
	}
	return lookupWidth(r)
}
