package screen

import "testing"

// Edge cases of issue 12 that corrupted read-back text, each following a
// named xterm behaviour. Every case runs whole, split at every byte and
// byte by byte (runVTCases).
var edgeCases = []vtcase{
	// Scrollback under progress bars.
	{name: "region 1;N saves lines scrolled off the top", xterm: "xtermScroll saves to the scrollback whenever the top margin is row 1 and no left/right margins are set",
		rows: 5, in: "\x1b[1;3r\x1b[5Hstatus\x1b[Ha\r\nb\r\nc\r\nd\r\ne",
		screen: []string{"c", "d", "e", "", "status"}, sbLines: []string{"a", "b"},
		lines: []string{"a", "b", "c", "d", "e", "", "status"}, cursor: cur(1, 2)},
	{name: "region 1;N keeps soft wraps of saved lines", xterm: "the scrollback keeps the wrapped flag of a saved row",
		cols: 5, rows: 4, in: "\x1b[1;2r\x1b[4Hbar\x1b[Habcdefghijklm",
		screen: []string{"fghij", "klm", "", "bar"}, sbLines: []string{"abcde"},
		lines: []string{"abcdefghijklm", "", "bar"}, wraps: "0"},
	{name: "SU in region 1;N saves", xterm: "SU scrolls through xtermScroll, which saves when the top margin is row 1",
		rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[1;3r\x1b[2S",
		screen: []string{"3", "", "", "4"}, sbLines: []string{"1", "2"}},
	{name: "region 2;N does not save", xterm: "only a region at the top row feeds the scrollback",
		rows: 4, in: "\x1b[2;3r\x1b[2Ha\r\nb\r\nc",
		screen: []string{"", "b", "c"}, sbLines: nil},
	{name: "alternate screen never saves", xterm: "the alternate screen has no saved lines",
		rows: 3, in: "\x1b[?1049h\x1b[1;2ra\r\nb\r\nc\r\nd",
		screen: []string{"c", "d"}, sbLines: nil},

	// HT while a wrap is pending.
	{name: "HT at last column keeps pending wrap", xterm: "TabToNextStop only moves the column; do_wrap stays set, so X wraps instead of overwriting Z",
		cols: 10, in: "aaaaaaaaaZ\tX",
		screen: []string{"aaaaaaaaaZ", "X"}, lines: []string{"aaaaaaaaaZX"}, wraps: "0", cursor: cur(1, 1)},
	{name: "CHT at last column keeps pending wrap", xterm: "CHT repeats TabToNextStop",
		cols: 10, in: "aaaaaaaaaZ\x1b[3IX",
		screen: []string{"aaaaaaaaaZ", "X"}, lines: []string{"aaaaaaaaaZX"}},
	{name: "HT at last column without pending wrap stays", xterm: "no tab stop after the cursor: it stays on the last column",
		cols: 10, in: "\x1b[1;10H\tX", screen: []string{"         X"}, cursor: cur(9, 0)},

	// Soft wraps that must not survive rows being moved or cleared.
	{name: "DL cuts the wrap into the deleted row", xterm: "the line above a deleted row no longer continues into what moves up",
		cols: 5, rows: 4, in: "abcdefgh\r\nxyz\x1b[2H\x1b[M",
		screen: []string{"abcde", "xyz"}, lines: []string{"abcde", "xyz"}, wraps: "-"},
	{name: "DL cuts the wrap of the last moved row", xterm: "a row wrapped out of the region is followed by blank rows after DL",
		cols: 5, rows: 4, in: "\r\n\r\nabcdefgh\x1b[1;3r\x1b[M\x1b[3HX",
		screen: []string{"", "abcde", "X", "fgh"}, lines: []string{"", "abcde", "X", "fgh"}, wraps: "-"},
	{name: "IL cuts the wrap into the inserted row", xterm: "an inserted blank row ends the line above it",
		cols: 5, rows: 4, in: "abcdefgh\r\nxyz\x1b[2H\x1b[LX",
		screen: []string{"abcde", "X", "fgh", "xyz"}, lines: []string{"abcde", "X", "fgh", "xyz"}, wraps: "-"},
	{name: "IL cuts the wrap pushed out of the region", xterm: "the row pushed to the bottom margin lost what followed it",
		cols: 5, rows: 4, in: "x\r\nabcdefgh\x1b[1;3r\x1b[L\x1b[4HY",
		screen: []string{"", "x", "abcde", "Y"}, lines: []string{"", "x", "abcde", "Y"}, wraps: "-"},
	{name: "SU cuts the wrap of the last moved row", xterm: "after SU the rows uncovered at the bottom margin are blank",
		cols: 5, rows: 4, in: "abcdefgh\x1b[1;2r\x1b[S\x1b[2HX",
		screen: []string{"fgh", "X"}, sbLines: []string{"abcde"}, lines: []string{"abcdefgh", "X"}, wraps: "-"},
	{name: "scrolling a region below a wrapped row cuts the wrap", xterm: "the row above the region does not continue into the row scrolled in",
		cols: 5, rows: 4, in: "abcdefgh\x1b[2;4r\x1b[4H\n\x1b[2HX",
		screen: []string{"abcde", "X"}, lines: []string{"abcde", "X"}, wraps: "-"},
	{name: "RI at the top margin cuts the wrap", xterm: "RevScroll inserts a blank row after the row above the region",
		cols: 5, rows: 4, in: "abcdefgh\x1b[2;4r\x1b[2H\x1bMX",
		screen: []string{"abcde", "X", "fgh"}, lines: []string{"abcde", "X", "fgh"}, wraps: "-"},
	{name: "EL 0 clears the row's own wrap", xterm: "ClearRight: with the right part cleared, the line cannot be wrapping",
		cols: 5, in: "abcdefgh\x1b[1;3H\x1b[K",
		screen: []string{"ab", "fgh"}, lines: []string{"ab", "fgh"}, wraps: "-"},
	{name: "ED 0 clears the row's own wrap", xterm: "ED 0 is ClearRight on the cursor row and clears the rows below",
		cols: 5, in: "abcdefgh\x1b[1;3H\x1b[J", screen: []string{"ab"}, lines: []string{"ab"}, wraps: "-"},
	{name: "EL 2 clears the row's own wrap", xterm: "ClearLine resets the row",
		cols: 5, in: "abcdefgh\x1b[1;3H\x1b[2K", screen: []string{"", "fgh"}, lines: []string{"", "fgh"}, wraps: "-"},
	{name: "EL 0 at column 0 keeps the wrap of the row above", xterm: "erasing a row does not change the flag of the row above (readline rewrites a wrapped command line this way)",
		cols: 5, in: "abcdefgh\x1b[2;1H\x1b[KX", lines: []string{"abcdeX"}, wraps: "0"},

	// Cursor restore and pending wrap.
	{name: "DECRC does not restore a pending wrap", xterm: "CursorRestore goes through CursorSet, which resets the wrap state",
		cols: 5, in: "abcde\x1b7\x1b8X", screen: []string{"abcdX"}, lines: []string{"abcdX"}, cursor: cur(4, 0)},
	{name: "CSI u does not restore a pending wrap", xterm: "SCORC is CursorRestore",
		cols: 5, in: "abcde\x1b[s\x1b[uX", screen: []string{"abcdX"}},
	{name: "?1048 l does not restore a pending wrap", xterm: "1048 is CursorRestore",
		cols: 5, in: "abcde\x1b[?1048h\x1b[?1048lX", screen: []string{"abcdX"}},
	{name: "?1049 l does not restore a pending wrap", xterm: "leaving the alternate screen restores the cursor with CursorRestore",
		cols: 5, in: "abcde\x1b[?1049h\x1b[?1049lX", screen: []string{"abcdX"}},

	// REP.
	{name: "REP repeats the preceding character", xterm: "CSI Ps b: repeat the preceding graphic character Ps times",
		in: "a\x1b[3b", screen: []string{"aaaa"}},
	{name: "REP after LF does nothing", xterm: "ECMA-48: the preceding character must be a graphic character, and LF is not",
		in: "a\r\n\x1b[3bX", screen: []string{"a", "X"}},
	{name: "REP after CR does nothing", xterm: "ECMA-48: CR is not a graphic character",
		in: "ab\r\x1b[3b", screen: []string{"ab"}, cursor: cur(0, 0)},
	{name: "REP after a cursor move does nothing", xterm: "ECMA-48: CUF is not a graphic character",
		in: "a\x1b[C\x1b[3b", screen: []string{"a"}, cursor: cur(2, 0)},
	{name: "REP after BS does nothing", xterm: "ECMA-48: BS is not a graphic character",
		in: "ab\b\x1b[3b", screen: []string{"ab"}},
	{name: "REP after ESC sequence does nothing", xterm: "ECMA-48: an escape sequence is not a graphic character",
		in: "a\x1b7\x1b[2b", screen: []string{"a"}},
	{name: "REP after SGR repeats", xterm: "a rendition change is not text: the character is repeated in the new rendition (ncurses emits char, SGR, REP)",
		in: "a\x1b[1m\x1b[2b\x1b[m", screen: []string{"aaa"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if styleAt(s, 1, 0).Attrs != AttrBold {
				t.Errorf("repeated cell style %+v", styleAt(s, 1, 0))
			}
		}},
	{name: "REP twice", xterm: "the repeated character is still the preceding one",
		in: "a\x1b[2b\x1b[b", screen: []string{"aaaa"}},
	{name: "REP of a wide character", xterm: "REP prints through the normal path",
		in: "日\x1b[2b", screen: []string{"日日日"}, cursor: cur(6, 0)},
	{name: "REP after text then LF in one run", xterm: "ECMA-48 again, through the bulk ASCII path",
		cols: 20, in: "hello world\r\nnext\n\x1b[5b", screen: []string{"hello world", "next"}},

	{name: "REP after CJK then LF in one run", xterm: "ECMA-48, through the bulk UTF-8 path",
		cols: 20, in: "日本\r\n\x1b[2b", screen: []string{"日本"}},
	{name: "REP of CJK after a line break", xterm: "the character printed after the line break is repeated",
		cols: 20, in: "a\r\n日\x1b[b", screen: []string{"a", "日日"}},

	// VPR and HPR.
	{name: "VPR goes to the screen edge, not the region", xterm: "CASE_VPR is CursorSet(row + n): clamped to the screen outside origin mode",
		rows: 6, in: "\x1b[2;4r\x1b[3H\x1b[9eX", screen: []string{"", "", "", "", "", "X"}, cursor: cur(1, 5)},
	{name: "CUD stops at the bottom margin", xterm: "CursorDown stops at the bottom margin when the cursor is inside the region",
		rows: 6, in: "\x1b[2;4r\x1b[3H\x1b[9BX", screen: []string{"", "", "", "X"}},
	{name: "VPR in origin mode stops at the region", xterm: "with DECOM, CursorSet clamps to the margins",
		rows: 6, in: "\x1b[2;4r\x1b[?6h\x1b[9eX", screen: []string{"", "", "", "X"}},
	{name: "HPR goes to the last column", xterm: "CASE_HPR is CursorSet(col + n)",
		in: "\x1b[20aX", screen: []string{"         X"}},

	// Erase while a wrap is pending.
	{name: "EL 0 clears a pending wrap", xterm: "erasing resets the wrap state: X lands on the erased last column",
		cols: 5, in: "abcde\x1b[KX", screen: []string{"abcdX"}, lines: []string{"abcdX"}, wraps: "-"},
	{name: "EL 1 clears a pending wrap", xterm: "erasing resets the wrap state",
		cols: 5, in: "abcde\x1b[1KX", screen: []string{"    X"}, wraps: "-"},
	{name: "EL 2 clears a pending wrap", xterm: "erasing resets the wrap state",
		cols: 5, in: "abcde\x1b[2KX", screen: []string{"    X"}, wraps: "-"},
	{name: "ED 0 clears a pending wrap", xterm: "erasing resets the wrap state",
		cols: 5, in: "abcde\x1b[JX", screen: []string{"abcdX"}, wraps: "-"},
	{name: "ED 2 clears a pending wrap", xterm: "erasing resets the wrap state",
		cols: 5, in: "abcde\x1b[2JX", screen: []string{"    X"}, wraps: "-"},
	{name: "ECH clears a pending wrap", xterm: "erasing resets the wrap state",
		cols: 5, in: "abcde\x1b[XX", screen: []string{"abcdX"}},
	{name: "DECSEL clears a pending wrap", xterm: "selective erase resets the wrap state too",
		cols: 5, in: "abcde\x1b[?KX", screen: []string{"abcdX"}},

	// Wide character at the right margin without autowrap.
	{name: "wide char at last column without autowrap is dropped", xterm: "with DECAWM reset a double-width character that does not fit is not printed and the cursor does not move",
		cols: 5, in: "\x1b[?7labcd日e", screen: []string{"abcde"}, cursor: cur(4, 0)},
	{name: "wide char filling the last two columns without autowrap", xterm: "a double-width character that fits is printed; the next one does not fit",
		cols: 5, in: "\x1b[?7labc日日", screen: []string{"abc日"}, cursor: cur(4, 0)},
	{name: "wide char at last column with autowrap wraps", xterm: "with DECAWM the character goes to the next row",
		cols: 5, in: "abcd日", screen: []string{"abcd", "日"}, lines: []string{"abcd日"}},
}

func TestEdgeCases(t *testing.T) { runVTCases(t, edgeCases) }
