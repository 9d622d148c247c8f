package keys

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Spell writes keys (what Parse made) as one line of printable
// characters that tells exactly what would be typed: each control
// character as its Unicode picture (Enter is ␍, Ctrl-C ␃, Escape ␛).
// Keys that hold such a picture as text, or anything else that is not
// plain text, or that start with a quote, are Go-quoted instead
// ("ls\r"), so that no spelling stands for two different keys.
func Spell(keys []byte) string {
	// A plain spelling never starts with a quote, so no plain spelling is
	// also a quoted one.
	if !utf8.Valid(keys) || bytes.HasPrefix(keys, []byte{'"'}) {
		return strconv.Quote(string(keys))
	}
	var b strings.Builder
	for _, r := range string(keys) {
		switch {
		case r < 0x20:
			b.WriteRune(0x2400 + r)
		case r == 0x7f:
			b.WriteRune('\u2421')
		case r >= 0x2400 && r <= 0x243f, !unicode.IsPrint(r) && r != ' ':
			return strconv.Quote(string(keys))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
