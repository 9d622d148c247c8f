package config

import (
	"fmt"
	"slices"
	"strings"
)

// The values of "truecolor": whether attach sends 24-bit colour.
const (
	// TrueColorAuto sends it when the client's terminal says it takes
	// it: COLORTERM=truecolor or 24bit, or an XTGETTCAP answer for RGB
	// or Tc (ssh does not pass COLORTERM on; many terminals answer).
	TrueColorAuto = "auto"
	// TrueColorOn always sends it.
	TrueColorOn = "on"
	// TrueColorOff never does: 24-bit colours are sent as the nearest of
	// the 256-colour palette.
	TrueColorOff = "off"
)

// trueColorValues are what "truecolor" may be.
var trueColorValues = []string{TrueColorAuto, TrueColorOn, TrueColorOff}

// checkTrueColor validates "truecolor"; "" is the default, auto.
func checkTrueColor(v string) error {
	if v == "" || slices.Contains(trueColorValues, v) {
		return nil
	}
	return fmt.Errorf(`truecolor must be "%s", got %q`, strings.Join(trueColorValues, `", "`), v)
}
