package attach

import (
	"strings"

	"github.com/phantom-dev/phantom/internal/config"
)

// clientColor is what a client said of its terminal's colours: its TERM
// and COLORTERM (ssh passes TERM on but not COLORTERM), and whether the
// terminal answered the client's XTGETTCAP query for "RGB" or "Tc".
type clientColor struct {
	term, colorterm string
	announced       bool
}

// trueColor reports whether a client gets 24-bit colour under
// config.json's "truecolor" mode: always with "on", never with "off",
// and with "auto" (or "") when the terminal says it takes it, as tmux's
// RGB feature does: COLORTERM=truecolor or 24bit, a TERM for direct
// colour (xterm-direct and the like), or the XTGETTCAP answer.
func trueColor(mode string, c clientColor) bool {
	switch mode {
	case config.TrueColorOn:
		return true
	case config.TrueColorOff:
		return false
	}
	switch strings.ToLower(c.colorterm) {
	case "truecolor", "24bit":
		return true
	}
	return c.announced || strings.HasSuffix(c.term, "-direct")
}

// applyTrueColor sets the renderer's colours from the settings and what
// the client said, and redraws everything when they change: rows already
// drawn carry the old colours.
func (s *session) applyTrueColor() {
	if tc := trueColor(s.settings().TrueColor, s.color); tc != s.r.TrueColor {
		s.r.TrueColor = tc
		s.needFull = true
	}
}
