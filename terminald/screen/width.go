package screen

import (
	"sync"

	"github.com/clipperhouse/displaywidth"
)

var widthOpts = displaywidth.Options{}

// bmpWidth caches runeWidth for the Basic Multilingual Plane; it is filled
// on first use of a rune >= U+0300.
var (
	bmpWidth     [0x10000]uint8
	bmpWidthOnce sync.Once
)

func initBMPWidth() {
	for r := 0x300; r < 0x10000; r++ {
		bmpWidth[r] = uint8(lookupWidth(rune(r)))
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
	if r < 0x10000 {
		bmpWidthOnce.Do(initBMPWidth)
		return int(bmpWidth[r])
	}
	if isRegionalIndicator(r) {
		return 1
	}
	return lookupWidth(r)
}
