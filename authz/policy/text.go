package policy

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text an agent chose reaches the human's terminal on the sheet. It must
// show what will happen: nothing in it may drive the terminal, reorder
// what is shown (bidi overrides) or hide (zero-width and blank-looking
// characters, or a run of spaces that pushes the rest of a command out of
// sight). So every such character is shown as an escape, and long runs of
// spaces are counted outside the quotes, where the agent cannot forge them:
// "make test" + 3000 spaces + "; echo PWNED".

// minSpaceRun is the shortest run of spaces shown as a count.
const minSpaceRun = 8

// quote quotes agent-chosen text for the human, whole: every character
// that could act on the terminal or hide is escaped, and long runs of
// spaces are counted.
func quote(s string) string {
	var parts []string
	for {
		i, n := spaceRun(s)
		if i < 0 {
			break
		}
		if i > 0 {
			parts = append(parts, `"`+escape(s[:i], true)+`"`)
		}
		parts = append(parts, strconv.Itoa(n)+" spaces")
		s = s[i+n:]
	}
	if s != "" || len(parts) == 0 {
		parts = append(parts, `"`+escape(s, true)+`"`)
	}
	return strings.Join(parts, " + ")
}

// printable escapes what quote escapes, without quotes (for ids, titles
// and paths shown in a sentence).
func printable(s string) string { return escape(s, false) }

// spaceRun finds the first run of at least minSpaceRun spaces in s: its
// start and length, or -1.
func spaceRun(s string) (start, n int) {
	start = strings.Index(s, strings.Repeat(" ", minSpaceRun))
	if start < 0 {
		return -1, 0
	}
	n = minSpaceRun
	for start+n < len(s) && s[start+n] == ' ' {
		n++
	}
	return start, n
}

// escape writes s with every hidden or acting character as a Go escape;
// inQuotes also escapes the quote and the backslash.
func escape(s string, inQuotes bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case inQuotes && (r == '"' || r == '\\'):
			b.WriteString(`\` + string(r))
		case shown(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// shown reports whether r is shown as itself: a graphic character that
// does not look blank (the space aside). Controls, bidi and other format
// characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C),
// zero-width characters and line separators are not graphic.
func shown(r rune) bool {
	switch {
	case r == ' ':
		return true
	case !unicode.IsGraphic(r), unicode.Is(unicode.Zs, r):
		return false
	}
	switch r {
	case 0x115f, 0x1160, 0x2800, 0x3164, 0xffa0: // Hangul fillers, braille blank
		return false
	}
	return true
}

// describeTab names a tab for the human: tab t3 (title), or tab t3 when
// it has no title; see tabTitle.
func describeTab(t TabInfo) string {
	if t.Title == "" {
		return "tab " + printable(t.ID)
	}
	return "tab " + printable(t.ID) + " (" + tabTitle(t) + ")"
}

// tabForAgent names a tab in what the agent is told (a refusal): by its
// id alone, as its title may be what its programs wrote (OSC 0/2, such as
// a command line the human typed), which an agent that may not read the
// tab must not learn from being refused.
func tabForAgent(t TabInfo) string { return "tab " + printable(t.ID) }

// tabTitle is a tab's title for the human, marked when an agent gave the
// tab its name: "prod", named by an agent.
func tabTitle(t TabInfo) string {
	if t.NameSetByAgent {
		return quote(t.Title) + ", named by an agent"
	}
	return printable(t.Title)
}
