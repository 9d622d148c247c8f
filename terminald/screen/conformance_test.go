package screen

import (
	"reflect"
	"testing"
)

// The conformance suite: one or more cases for every control the engine
// implements, written from xterm's ctlseqs ("XTerm Control Sequences") and
// xterm's behaviour. Default screen 10x5. Each case names the control; its
// xterm field says what xterm does. Cases run whole, split at every byte
// and byte by byte (runVTCases). The README section "Screen engine: what
// is implemented" lists what is and is not covered.

// lrFill is four distinct rows of a 10x4 screen for margin tests.
const lrFill = "0123456789\r\nabcdefghij\r\nABCDEFGHIJ\r\nklmnopqrst"

// lrOn sets DECLRMM and margins at columns 3..6 (1-based).
const lrOn = "\x1b[?69h\x1b[3;6s"

func events(want ...Event) func(t *testing.T, s *Screen, r *recorder) {
	return func(t *testing.T, s *Screen, r *recorder) {
		t.Helper()
		if !reflect.DeepEqual(r.events, want) {
			t.Errorf("events = %+v, want %+v", r.events, want)
		}
	}
}

func modes(check func(m Modes) bool) func(t *testing.T, s *Screen, r *recorder) {
	return func(t *testing.T, s *Screen, r *recorder) {
		t.Helper()
		if !check(s.Modes()) {
			t.Errorf("modes %+v", s.Modes())
		}
	}
}

var conformanceCases = []vtcase{
	// C0 controls.
	{name: "BEL", xterm: "rings the bell, prints nothing", in: "a\ab", screen: []string{"ab"},
		check: events(Event{Kind: EventBell})},
	{name: "BS", xterm: "CursorBack(1)", in: "abc\bX", screen: []string{"abX"}, cursor: cur(3, 0)},
	{name: "BS at column 0", xterm: "stops at the left edge", in: "\bX", screen: []string{"X"}},
	{name: "BS with pending wrap", xterm: "CursorBack from the last column, wrap reset", cols: 5, in: "abcde\bX", screen: []string{"abcXe"}},
	{name: "HT", xterm: "next tab stop, every 8 columns", cols: 20, in: "a\tb\tc", screen: []string{"a       b       c"}},
	{name: "LF", xterm: "IND: down one row, same column", in: "ab\ncd", screen: []string{"ab", "  cd"}},
	{name: "VT FF", xterm: "VT and FF act as LF", in: "a\vb\fc", screen: []string{"a", " b", "  c"}},
	{name: "LF at bottom scrolls to scrollback", xterm: "xtermScroll saves the top row", rows: 2, in: "a\r\nb\r\nc",
		screen: []string{"b", "c"}, sbLines: []string{"a"}, lines: []string{"a", "b", "c"}},
	{name: "CR", xterm: "CarriageReturn: column 0", in: "abc\rX", screen: []string{"Xbc"}, cursor: cur(1, 0)},
	{name: "SO SI", xterm: "SO invokes G1 into GL, SI G0", in: "\x1b)0\x0eq\x0fq", screen: []string{"─q"}},
	{name: "CAN aborts a sequence", xterm: "CAN cancels the sequence; nothing is printed for it", in: "\x1b[3\x18X", screen: []string{"X"}},
	{name: "SUB aborts a sequence", xterm: "SUB cancels the sequence", in: "\x1b[3\x1aX", screen: []string{"X"}},
	{name: "NUL and DEL ignored", xterm: "NUL and DEL are ignored", in: "a\x00b\x7fc", screen: []string{"abc"}},
	{name: "C0 inside CSI executes", xterm: "a C0 control inside a sequence is executed, the sequence continues", in: "ab\x1b[\r2CX", screen: []string{"abX"}},
	{name: "C1 from UTF-8 ignored", xterm: "8-bit controls decoded from UTF-8 are not acted on", in: "a\u009b2Jb", screen: []string{"a2Jb"}},

	// Escape sequences.
	{name: "DECSC DECRC", xterm: "save/restore position, rendition, origin mode and charsets",
		in: "ab\x1b7\x1b[31m\x1b(0\x1b[3;3Hq\x1b8q", screen: []string{"abq", "", "  ─"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 2, 0); st.Fg != 0 {
				t.Errorf("restored pen %+v", st)
			}
		}},
	{name: "DECRC without DECSC", xterm: "homes the cursor and resets the rendition", in: "\x1b[31m\x1b[3;3H\x1b8X", screen: []string{"X"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 0, 0); st.Fg != 0 {
				t.Errorf("pen %+v", st)
			}
		}},
	{name: "IND", xterm: "ESC D: down, scrolling at the bottom margin", rows: 2, in: "a\x1bDb\x1bD",
		screen: []string{" b"}, sbLines: []string{"a"}},
	{name: "NEL", xterm: "ESC E: index then carriage return", in: "a\x1bEb", screen: []string{"a", "b"}},
	{name: "HTS", xterm: "ESC H sets a tab stop at the cursor", in: "\x1b[3g\x1b[4G\x1bH\r\tX", screen: []string{"   X"}},
	{name: "RI", xterm: "ESC M: up, scrolling down at the top margin", in: "a\x1b[H\x1bMb", screen: []string{"b", "a"}},
	{name: "RIS", xterm: "ESC c: full reset; the scrollback is kept", rows: 2, in: "a\r\nb\r\nc\x1b[31m\x1b[?7l\x1bcX",
		screen: []string{"X"}, sbLines: []string{"a"}, cursor: cur(1, 0),
		check: modes(func(m Modes) bool { return m.Autowrap })},
	{name: "DECKPAM DECKPNM", xterm: "ESC = and ESC > set the keypad mode", in: "\x1b=",
		check: modes(func(m Modes) bool { return m.AppKeypad })},
	{name: "DECKPNM", xterm: "ESC > resets application keypad", in: "\x1b=\x1b>",
		check: modes(func(m Modes) bool { return !m.AppKeypad })},
	{name: "DECID", xterm: "ESC Z answers like DA1", in: "\x1bZ", replies: []string{"\x1b[?62;22c"}},
	{name: "DECALN", xterm: "ESC # 8 fills the screen with E, homes, resets margins", rows: 2, cols: 3, in: "\x1b[2;2r\x1b#8",
		screen: []string{"EEE", "EEE"}, cursor: cur(0, 0)},
	{name: "SCS DEC graphics", xterm: "ESC ( 0 selects line drawing into G0, ESC ( B ASCII", in: "\x1b(0lqk\x1b(Bq", screen: []string{"┌─┐q"}},

	// CSI: cursor motion.
	{name: "CUU", xterm: "CursorUp", in: "\x1b[3;2H\x1b[AX", screen: []string{"", " X"}},
	{name: "CUU stops at top margin", xterm: "inside the region it stops at the top margin", in: "\x1b[2;4r\x1b[3H\x1b[9AX", screen: []string{"", "X"}},
	{name: "CUU above the region", xterm: "above the region it stops at row 1", in: "\x1b[3;4r\x1b[2H\x1b[9AX", screen: []string{"X"}},
	{name: "CUD", xterm: "CursorDown", in: "\x1b[2BX", screen: []string{"", "", "X"}},
	{name: "CUD below the region", xterm: "below the region it stops at the last row", in: "\x1b[1;2r\x1b[3H\x1b[9BX", screen: []string{"", "", "", "", "X"}},
	{name: "CUF", xterm: "CursorForward stops at the last column", in: "\x1b[3CX\x1b[99CY", screen: []string{"   X     Y"}},
	{name: "CUB", xterm: "CursorBack stops at column 1", in: "abcd\x1b[2DX\x1b[9DY", screen: []string{"YbXd"}},
	{name: "CNL", xterm: "CursorDown then carriage return", in: "ab\x1b[2EX", screen: []string{"ab", "", "X"}},
	{name: "CPL", xterm: "CursorUp then carriage return", in: "\x1b[3;4H\x1b[2FX", screen: []string{"X"}},
	{name: "CHA", xterm: "CSI G: absolute column", in: "\x1b[5GX", screen: []string{"    X"}},
	{name: "HPA", xterm: "CSI `: absolute column", in: "\x1b[3`X", screen: []string{"  X"}},
	{name: "HPR", xterm: "CSI a: column relative, clamped to the screen", in: "a\x1b[2aX", screen: []string{"a  X"}},
	{name: "CUP", xterm: "CSI row;col H, 1-based", in: "\x1b[3;5HX", screen: []string{"", "", "    X"}, cursor: cur(5, 2)},
	{name: "CUP defaults", xterm: "missing parameters are 1", in: "abc\x1b[HX", screen: []string{"Xbc"}},
	{name: "CUP clamps", xterm: "clamped to the screen", in: "\x1b[99;99HX", screen: []string{"", "", "", "", "         X"}},
	{name: "HVP", xterm: "CSI f is CUP", in: "\x1b[2;2fX", screen: []string{"", " X"}},
	{name: "VPA", xterm: "CSI d: absolute row, same column", in: "ab\x1b[3dX", screen: []string{"ab", "", "  X"}},
	{name: "VPR", xterm: "CSI e: row relative, clamped to the screen", in: "a\x1b[2eX", screen: []string{"a", "", " X"}},
	{name: "CHT", xterm: "CSI I: forward n tab stops", cols: 20, in: "\x1b[2IX", screen: []string{"                X"}},
	{name: "CBT", xterm: "CSI Z: back n tab stops", cols: 20, in: "\x1b[20G\x1b[2ZX", screen: []string{"        X"}},
	{name: "DECOM", xterm: "?6: CUP relative to the region, clamped to it; home on set", rows: 5, in: "\x1b[2;3r\x1b[?6hA\x1b[9;1HB",
		screen: []string{"", "A", "B"}},
	{name: "DECOM reset", xterm: "?6 l homes to the screen origin", in: "\x1b[2;3r\x1b[?6h\x1b[?6lX", screen: []string{"X"}},

	// Tab stops.
	{name: "TBC 0", xterm: "CSI g clears the stop at the cursor", cols: 20, in: "\x1b[9G\x1b[g\r\tX", screen: []string{"                X"}},
	{name: "TBC 3", xterm: "CSI 3 g clears all stops: HT goes to the last column", in: "\x1b[3g\tX", screen: []string{"         X"}},

	// Erasing.
	{name: "ED 0", xterm: "erase below, from the cursor", rows: 3, in: "aaa\r\nbbb\r\nccc\x1b[2;2H\x1b[J", screen: []string{"aaa", "b"}},
	{name: "ED 1", xterm: "erase above, to the cursor inclusive", rows: 3, in: "aaa\r\nbbb\r\nccc\x1b[2;2H\x1b[1J", screen: []string{"", "  b", "ccc"}},
	{name: "ED 2", xterm: "erase all; the cursor does not move", rows: 3, in: "aaa\r\nbbb\x1b[2J", screen: []string{}, cursor: cur(3, 1)},
	{name: "ED 3", xterm: "erase saved lines", rows: 2, in: "1\r\n2\r\n3\x1b[3J", screen: []string{"2", "3"}, sbLines: nil},
	{name: "ED uses the background colour", xterm: "erased cells take the current background (BCE)", cols: 3, rows: 1, in: "\x1b[44m\x1b[2J",
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 2, 0); st.Bg != IndexedColor(4) {
				t.Errorf("bg %+v", st)
			}
		}},
	{name: "EL 0", xterm: "erase to the right, cursor included", in: "abcdef\x1b[3G\x1b[K", screen: []string{"ab"}},
	{name: "EL 1", xterm: "erase to the left, cursor included", in: "abcdef\x1b[3G\x1b[1K", screen: []string{"   def"}},
	{name: "EL 2", xterm: "erase the line", in: "abcdef\x1b[2K", screen: []string{}},
	{name: "DECSED", xterm: "CSI ? J erases like ED (no protected cells here)", rows: 2, in: "aa\r\nbb\x1b[1;2H\x1b[?J", screen: []string{"a"}},
	{name: "DECSEL", xterm: "CSI ? K erases like EL", in: "abcdef\x1b[3G\x1b[?1K", screen: []string{"   def"}},
	{name: "ECH", xterm: "CSI X erases n characters from the cursor, no shift", in: "abcdef\x1b[2G\x1b[3X", screen: []string{"a   ef"}, cursor: cur(1, 0)},
	{name: "ECH past the end", xterm: "clamped to the line", in: "abcdef\x1b[5G\x1b[99X", screen: []string{"abcd"}},
	{name: "ECH on a wide character", xterm: "erasing half of a wide character blanks both halves", in: "a日b\x1b[3G\x1b[X", screen: []string{"a  b"}},

	// Editing.
	{name: "ICH", xterm: "CSI @ inserts blanks, cells pushed off the line are lost", cols: 8, in: "abcdefgh\x1b[3G\x1b[2@", screen: []string{"ab  cdef"}},
	{name: "DCH", xterm: "CSI P deletes, blanks enter at the right", in: "abcdef\x1b[2G\x1b[2P", screen: []string{"adef"}},
	{name: "DCH wide", xterm: "deleting half of a wide character blanks it", in: "a日b\x1b[3G\x1b[P", screen: []string{"a b"}},
	{name: "IL", xterm: "CSI L inserts lines at the cursor row, cursor to column 1", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2;3H\x1b[LX",
		screen: []string{"1", "X", "2", "3"}},
	{name: "IL outside the region", xterm: "ignored outside the scroll region", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[1;2r\x1b[4H\x1b[L", screen: []string{"1", "2", "3", "4"}},
	{name: "DL", xterm: "CSI M deletes lines, blank lines enter at the bottom margin", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2H\x1b[2M", screen: []string{"1", "4"}},
	{name: "DL in a region", xterm: "only the region moves", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[1;3r\x1b[1H\x1b[M", screen: []string{"2", "3", "", "4"}},
	{name: "DL at the top does not save", xterm: "deleted lines never go to the saved lines", rows: 3, in: "1\r\n2\r\n3\x1b[H\x1b[M", screen: []string{"2", "3"}, sbLines: nil},
	{name: "SU", xterm: "CSI S scrolls up, saving lines from a full-screen region", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2S",
		screen: []string{"3", "4"}, sbLines: []string{"1", "2"}},
	{name: "SD", xterm: "CSI T scrolls down", rows: 3, in: "1\r\n2\r\n3\x1b[T", screen: []string{"", "1", "2"}},
	{name: "SD with mouse parameters ignored", xterm: "CSI Ps;Ps;Ps;Ps;Ps T is highlight mouse tracking, not SD", rows: 3, in: "1\x1b[1;2;3;4;5T", screen: []string{"1"}},
	{name: "IRM", xterm: "CSI 4 h: printed characters shift the line right", in: "abc\r\x1b[4hX\x1b[4lY", screen: []string{"XYbc"}},
	{name: "LNM", xterm: "CSI 20 h: LF also returns the carriage", in: "\x1b[20hab\ncd\x1b[20l\nef", screen: []string{"ab", "cd", "  ef"}},
	{name: "REP", xterm: "CSI b repeats the preceding graphic character", in: "ab\x1b[3b", screen: []string{"abbbb"}},
	{name: "REP wraps", xterm: "repeated characters wrap like printed ones", cols: 4, in: "a\x1b[6b", screen: []string{"aaaa", "aaa"}, lines: []string{"aaaaaaa"}},
	{name: "SL", xterm: "CSI Ps SP @ scrolls the region's columns left", cols: 5, rows: 3, in: "abcde\r\nfghij\r\nklmno\x1b[1;2r\x1b[2 @",
		screen: []string{"cde", "hij", "klmno"}},
	{name: "SR", xterm: "CSI Ps SP A scrolls the region's columns right", cols: 5, rows: 2, in: "abcde\r\nfghij\x1b[2 A",
		screen: []string{"  abc", "  fgh"}},
	{name: "DECIC", xterm: "CSI Ps ' } inserts columns at the cursor in every region row", cols: 5, rows: 2, in: "abcde\r\nfghij\x1b[1;2H\x1b[2'}",
		screen: []string{"a  bc", "f  gh"}, cursor: cur(1, 0)},
	{name: "DECDC", xterm: "CSI Ps ' ~ deletes columns at the cursor in every region row", cols: 5, rows: 2, in: "abcde\r\nfghij\x1b[1;2H\x1b[2'~",
		screen: []string{"ade", "fij"}},
	{name: "DECIC outside the region", xterm: "nothing happens when the cursor is outside the region", cols: 5, rows: 3, in: "abcde\x1b[2;3r\x1b[1;2H\x1b['}",
		screen: []string{"abcde"}},

	// Scroll region.
	{name: "DECSTBM", xterm: "CSI t;b r sets the region and homes the cursor", rows: 5, in: "a\r\nb\r\nc\r\nd\r\ne\x1b[2;4r\x1b[4H\nX",
		screen: []string{"a", "c", "d", "X", "e"}, sbLines: nil},
	{name: "DECSTBM invalid", xterm: "top >= bottom is ignored", in: "\x1b[3;3r\x1b[5H\nX", sbLines: []string{""}, screen: []string{"", "", "", "", "X"}},
	{name: "DECSTBM at row 1 saves", xterm: "a region at the top row feeds the saved lines", rows: 4, in: "\x1b[1;2ra\r\nb\r\nc", screen: []string{"b", "c"}, sbLines: []string{"a"}},

	// Modes.
	{name: "DECAWM off", xterm: "?7 l: the last column is overwritten", in: "\x1b[?7labcdefghijkl", screen: []string{"abcdefghil"}, cursor: cur(9, 0)},
	{name: "DECAWM on", xterm: "?7 h: text wraps to the next row, soft-wrapped", in: "abcdefghijkl", screen: []string{"abcdefghij", "kl"}, wraps: "0", lines: []string{"abcdefghijkl"}},
	{name: "DECCKM", xterm: "?1 application cursor keys", in: "\x1b[?1h", check: modes(func(m Modes) bool { return m.AppCursor })},
	{name: "DECSCNM", xterm: "?5 reverse video", in: "\x1b[?5h", check: modes(func(m Modes) bool { return m.ReverseVideo })},
	{name: "DECTCEM", xterm: "?25 l hides the cursor", in: "\x1b[?25l", cursor: &Cursor{}},
	{name: "cursor blink", xterm: "?12", in: "\x1b[?12h", check: modes(func(m Modes) bool { return m.CursorBlink })},
	{name: "DECSCUSR", xterm: "CSI Ps SP q cursor style", in: "\x1b[4 q", check: modes(func(m Modes) bool { return m.CursorStyle == 4 })},
	{name: "mouse X10", xterm: "?9", in: "\x1b[?9h", check: modes(func(m Modes) bool { return m.Mouse == MouseX10 })},
	{name: "mouse normal", xterm: "?1000", in: "\x1b[?1000h", check: modes(func(m Modes) bool { return m.Mouse == MouseNormal })},
	{name: "mouse button", xterm: "?1002", in: "\x1b[?1002h", check: modes(func(m Modes) bool { return m.Mouse == MouseButton })},
	{name: "mouse any", xterm: "?1003; resetting another mode keeps it", in: "\x1b[?1003h\x1b[?1000l", check: modes(func(m Modes) bool { return m.Mouse == MouseAny })},
	{name: "mouse off", xterm: "resetting the active mode turns reporting off", in: "\x1b[?1002h\x1b[?1002l", check: modes(func(m Modes) bool { return m.Mouse == MouseNone })},
	{name: "mouse UTF-8", xterm: "?1005", in: "\x1b[?1005h", check: modes(func(m Modes) bool { return m.MouseEncoding == MouseEncodingUTF8 })},
	{name: "mouse SGR", xterm: "?1006", in: "\x1b[?1006h", check: modes(func(m Modes) bool { return m.MouseEncoding == MouseEncodingSGR })},
	{name: "mouse URXVT", xterm: "?1015", in: "\x1b[?1015h", check: modes(func(m Modes) bool { return m.MouseEncoding == MouseEncodingURXVT })},
	{name: "mouse SGR pixels", xterm: "?1016", in: "\x1b[?1016h", check: modes(func(m Modes) bool { return m.MouseEncoding == MouseEncodingSGRPixels })},
	{name: "focus events", xterm: "?1004", in: "\x1b[?1004h", check: modes(func(m Modes) bool { return m.FocusEvents })},
	{name: "alternate scroll", xterm: "?1007", in: "\x1b[?1007h", check: modes(func(m Modes) bool { return m.AltScroll })},
	{name: "bracketed paste", xterm: "?2004", in: "\x1b[?2004h", check: modes(func(m Modes) bool { return m.BracketedPaste })},
	{name: "synchronized output", xterm: "?2026", in: "\x1b[?2026h", check: modes(func(m Modes) bool { return m.SyncOutput })},
	{name: "several modes at once", xterm: "DECSET takes a list", in: "\x1b[?1;2004;25l\x1b[?1;2004h",
		check: modes(func(m Modes) bool { return m.AppCursor && m.BracketedPaste && !m.CursorVisible })},

	// Alternate screen.
	{name: "?47", xterm: "switch to the alternate screen without clearing it", rows: 2, in: "main\x1b[?47halt\x1b[?47l",
		screen: []string{"main"}, lines: []string{"main"}},
	{name: "?47 keeps alt content", xterm: "the alternate screen is not cleared on entry", rows: 2, in: "\x1b[?47ha\x1b[?47l\x1b[?47h\x1b[2Hb",
		screen: []string{"a", "b"}, check: func(t *testing.T, s *Screen, r *recorder) {
			if !s.AltScreen() {
				t.Error("not on the alternate screen")
			}
		}},
	{name: "?1047", xterm: "alternate screen, cleared when leaving it", rows: 2, in: "m\x1b[?1047ha\x1b[?1047l\x1b[?1047h",
		screen: []string{}},
	{name: "?1048", xterm: "save/restore cursor", in: "ab\x1b[?1048h\x1b[3;3H\x1b[?1048lX", screen: []string{"abX"}},
	{name: "?1049", xterm: "save cursor, switch and clear; leaving restores the main screen and cursor", rows: 3,
		in: "main\x1b[?1049h\x1b[31malt\r\nmore\x1b[?1049lX", screen: []string{"mainX"}, lines: []string{"mainX"}, cursor: cur(5, 0)},
	{name: "?1049 read-back shows the alternate screen", xterm: "what is shown is what is read", rows: 3,
		in: "main\r\n\x1b[?1049h\x1b[2;1Halt", lines: []string{"", "alt"}},

	// Reports.
	{name: "DA1", xterm: "CSI c: VT220-class with ANSI colour", in: "\x1b[c\x1b[0c", replies: []string{"\x1b[?62;22c", "\x1b[?62;22c"}},
	{name: "DA2", xterm: "CSI > c", in: "\x1b[>c", replies: []string{"\x1b[>1;10;0c"}},
	{name: "XTVERSION", xterm: "CSI > q: DCS > | name ST", in: "\x1b[>q", replies: []string{"\x1bP>|Phantom\x1b\\"}},
	{name: "DSR 5", xterm: "CSI 5 n: OK", in: "\x1b[5n", replies: []string{"\x1b[0n"}},
	{name: "DSR 6", xterm: "CSI 6 n: cursor position", in: "\x1b[3;4H\x1b[6n", replies: []string{"\x1b[3;4R"}},
	{name: "DSR 6 origin", xterm: "reported relative to the region in origin mode", in: "\x1b[2;4r\x1b[?6h\x1b[2;1H\x1b[6n", replies: []string{"\x1b[2;1R"}},
	{name: "DECXCPR", xterm: "CSI ? 6 n", in: "\x1b[2;2H\x1b[?6n", replies: []string{"\x1b[?2;2R"}},
	{name: "DECRQM ANSI", xterm: "CSI Ps $ p: 1 set, 2 reset", in: "\x1b[4h\x1b[4$p\x1b[20$p", replies: []string{"\x1b[4;1$y", "\x1b[20;2$y"}},
	{name: "DECRQM private", xterm: "CSI ? Ps $ p; 0 for unknown modes", in: "\x1b[?7$p\x1b[?1$p\x1b[?9999$p\x1b[?69$p\x1b[?45$p",
		replies: []string{"\x1b[?7;1$y", "\x1b[?1;2$y", "\x1b[?9999;0$y", "\x1b[?69;2$y", "\x1b[?45;2$y"}},
	{name: "window size report", xterm: "CSI 18 t: size in characters", in: "\x1b[18t", replies: []string{"\x1b[8;5;10t"}},

	// Soft reset.
	{name: "DECSTR", xterm: "CSI ! p resets modes, margins, rendition and saved cursor; text stays", rows: 3,
		in: "ab\x1b[2;3r\x1b[4h\x1b[?6h\x1b[31m\x1b[?25l\x1b[!pX", screen: []string{"ab", "X"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 0, 1); st.Fg != 0 || !s.Modes().CursorVisible || s.Modes().Insert || s.Modes().Origin {
				t.Errorf("%+v %+v", st, s.Modes())
			}
		}},

	// SGR (the sgr tests cover every attribute).
	{name: "SGR colours", xterm: "CSI m with 16, 256 and RGB colours", in: "\x1b[31;44ma\x1b[38;5;200mb\x1b[38;2;1;2;3mc\x1b[0md",
		screen: []string{"abcd"}, check: func(t *testing.T, s *Screen, r *recorder) {
			if styleAt(s, 0, 0) != (Style{Fg: IndexedColor(1), Bg: IndexedColor(4)}) ||
				styleAt(s, 1, 0).Fg != IndexedColor(200) || styleAt(s, 2, 0).Fg != RGBColor(1, 2, 3) || styleAt(s, 3, 0) != (Style{}) {
				t.Error(s.Row(0)[:4])
			}
		}},

	// OSC and strings.
	{name: "OSC 0", xterm: "sets icon name and title", in: "\x1b]0;hello\a", title: "hello", check: events(Event{Kind: EventTitle, Text: "hello"})},
	{name: "OSC 2 with ST", xterm: "ST ends the string too", in: "\x1b]2;a b\x1b\\x", title: "a b", screen: []string{"x"}},
	{name: "OSC 7", xterm: "working directory as a file URL", in: "\x1b]7;file://host/tmp/a%20b\a",
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.Cwd() != "/tmp/a b" {
				t.Errorf("cwd %q", s.Cwd())
			}
		}},
	{name: "OSC 10 11 queries", xterm: "report the default colours with the request's terminator", in: "\x1b]10;?\a\x1b]11;?\x1b\\",
		replies: []string{"\x1b]10;" + replyFg + "\a", "\x1b]11;" + replyBg + "\x1b\\"}},
	{name: "OSC 133", xterm: "semantic prompt marks", in: "\x1b]133;A\a\x1b]133;B\a\x1b]133;C\a\x1b]133;D;3\a",
		check: events(Event{Kind: EventPromptStart}, Event{Kind: EventCommandStart}, Event{Kind: EventCommandExecuted},
			Event{Kind: EventCommandFinished, Text: "3", ExitCode: 3, HasExit: true})},
	{name: "unknown OSC ignored", xterm: "unknown commands are ignored", in: "a\x1b]52;c;aGk=\ab", screen: []string{"ab"}},
	{name: "DCS ignored", xterm: "DCS payload is not printed", in: "a\x1bPq#0;2;0;0;0#0~~\x1b\\b", screen: []string{"ab"}},
	{name: "APC PM SOS ignored", xterm: "string payloads are not printed", in: "a\x1b_x\x1b\\b\x1b^y\x1b\\c\x1bXz\x1b\\d", screen: []string{"abcd"}},

	// Title stack.
	{name: "XTPUSHTITLE XTPOPTITLE", xterm: "CSI 22;0 t pushes, CSI 23;0 t pops and sets the title", in: "\x1b]2;one\a\x1b[22;0t\x1b]2;two\a\x1b[23;0t",
		title: "one", check: events(Event{Kind: EventTitle, Text: "one"}, Event{Kind: EventTitle, Text: "two"}, Event{Kind: EventTitle, Text: "one"})},
	{name: "title stack default parameter", xterm: "CSI 22 t and CSI 23 t mean icon and title", in: "\x1b]2;a\a\x1b[22t\x1b]2;b\a\x1b[23t", title: "a"},
	{name: "title stack title only", xterm: "CSI 22;2 t and CSI 23;2 t", in: "\x1b]2;a\a\x1b[22;2t\x1b]2;b\a\x1b[23;2t", title: "a"},
	{name: "title stack icon only", xterm: "Ps 1 concerns the icon name, which is not kept", in: "\x1b]2;a\a\x1b[22;1t\x1b]2;b\a\x1b[23;0t", title: "b"},
	{name: "title stack empty pop", xterm: "popping an empty stack does nothing", in: "\x1b]2;x\a\x1b[23;0t", title: "x"},
	{name: "title stack nested", xterm: "last in, first out", in: "\x1b]2;1\a\x1b[22t\x1b]2;2\a\x1b[22t\x1b]2;3\a\x1b[23t\x1b[23t", title: "1"},

	// Reverse wraparound.
	{name: "reverse wrap CUB", xterm: "?45 with ?7: CursorBack continues at the end of the row above", cols: 5, rows: 3,
		in: "\x1b[?45habcde\r\nfg\x1b[3DX", screen: []string{"abcdX", "fg"}},
	{name: "reverse wrap BS over pending wrap", xterm: "a pending wrap counts as one step back", cols: 5, in: "\x1b[?45habcde\bX", screen: []string{"abcdX"}},
	{name: "reverse wrap from the top left", xterm: "wraps from the first row to the last", cols: 5, rows: 3, in: "\x1b[?45h\bX",
		screen: []string{"", "", "    X"}},
	{name: "reverse wrap needs autowrap", xterm: "without ?7 BS stops at column 1", cols: 5, rows: 3, in: "\x1b[?45h\x1b[?7l\x1b[2;1H\bX",
		screen: []string{"", "X"}},
	{name: "no reverse wrap by default", xterm: "?45 is reset initially", cols: 5, rows: 3, in: "\x1b[2;1H\bX", screen: []string{"", "X"}},

	// DECCOLM.
	{name: "DECCOLM allowed", xterm: "?40 allows ?3: the screen is cleared and the cursor homed (the width stays the clients')", rows: 3,
		in: "abc\r\ndef\x1b[2;3r\x1b[?40h\x1b[?3h\x1b[?3$pX", screen: []string{"X"}, replies: []string{"\x1b[?3;1$y"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if c, _ := s.Size(); c != 10 || s.top != 0 || s.bot != 2 {
				t.Errorf("cols %d region %d..%d", c, s.top, s.bot)
			}
		}},
	{name: "DECCOLM not allowed", xterm: "without ?40, ?3 is ignored", in: "abc\x1b[?3hX", screen: []string{"abcX"}},

	// DECLRMM and DECSLRM.
	{name: "DECSLRM without DECLRMM is SCOSC", xterm: "CSI s saves the cursor unless ?69 is set", in: "ab\x1b[3;6s\x1b[5GX\x1b[uY", screen: []string{"abY X"}},
	{name: "DECSLRM homes the cursor", xterm: "setting margins homes the cursor", rows: 4, in: lrFill + lrOn + "X",
		screen: []string{"X123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM print wraps at the right margin", xterm: "text wraps from the right margin to the left margin", rows: 4,
		in: lrFill + lrOn + "\x1b[1;3HWXYZUV", screen: []string{"01WXYZ6789", "abUVefghij", "ABCDEFGHIJ", "klmnopqrst"}, wraps: "-"},
	{name: "DECLRMM LF scrolls the margins only", xterm: "xtermScroll moves the rectangle and saves nothing", rows: 4,
		in: lrFill + lrOn + "\x1b[4;3H\n", screen: []string{"01cdef6789", "abCDEFghij", "ABmnopGHIJ", "kl    qrst"}, sbLines: nil},
	{name: "DECLRMM LF outside the margins", xterm: "outside the margins IND at the bottom does not scroll", rows: 4,
		in: lrFill + lrOn + "\x1b[4;9H\nX", screen: []string{"0123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrXt"}},
	{name: "DECLRMM RI scrolls the margins only", xterm: "RevScroll moves the rectangle", rows: 4,
		in: lrFill + lrOn + "\x1b[1;3H\x1bM", screen: []string{"01    6789", "ab2345ghij", "ABcdefGHIJ", "klCDEFqrst"}},
	{name: "DECLRMM CR to the left margin", xterm: "CarriageReturn goes to the left margin from inside", rows: 4,
		in: lrFill + lrOn + "\x1b[2;5H\rX", screen: []string{"0123456789", "abXdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM CR left of the margin", xterm: "from left of the margin CR goes to column 1", rows: 4,
		in: lrFill + lrOn + "\x1b[2;2H\rX", screen: []string{"0123456789", "Xbcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM IL", xterm: "IL moves the rectangle below the cursor; cursor to the left margin", rows: 4,
		in: lrFill + lrOn + "\x1b[2;4H\x1b[LX", screen: []string{"0123456789", "abX   ghij", "ABcdefGHIJ", "klCDEFqrst"}},
	{name: "DECLRMM DL", xterm: "DL moves the rectangle up", rows: 4,
		in: lrFill + lrOn + "\x1b[2;3H\x1b[M", screen: []string{"0123456789", "abCDEFghij", "ABmnopGHIJ", "kl    qrst"}},
	{name: "DECLRMM IL outside the margins", xterm: "IL and DL do nothing outside the margins", rows: 4,
		in: lrFill + lrOn + "\x1b[2;8H\x1b[L\x1b[M", screen: []string{"0123456789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM ICH", xterm: "ICH shifts up to the right margin", rows: 4,
		in: lrFill + lrOn + "\x1b[1;3H\x1b[2@", screen: []string{"01  236789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM DCH", xterm: "DCH shifts from the right margin", rows: 4,
		in: lrFill + lrOn + "\x1b[1;3H\x1b[2P", screen: []string{"0145  6789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM IRM", xterm: "insert mode shifts up to the right margin", rows: 4,
		in: lrFill + lrOn + "\x1b[4h\x1b[1;3HX", screen: []string{"01X2346789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM SU", xterm: "SU moves the rectangle", rows: 4,
		in: lrFill + lrOn + "\x1b[2S", screen: []string{"01CDEF6789", "abmnopghij", "AB    GHIJ", "kl    qrst"}, sbLines: nil},
	{name: "DECLRMM SD", xterm: "SD moves the rectangle", rows: 4,
		in: lrFill + lrOn + "\x1b[T", screen: []string{"01    6789", "ab2345ghij", "ABcdefGHIJ", "klCDEFqrst"}},
	{name: "DECLRMM SL", xterm: "SL works between the margins", rows: 4,
		in: lrFill + lrOn + "\x1b[2 @", screen: []string{"0145  6789", "abef  ghij", "ABEF  GHIJ", "klop  qrst"}},
	{name: "DECLRMM DECIC", xterm: "DECIC works between the cursor and the right margin", rows: 4,
		in: lrFill + lrOn + "\x1b[1;4H\x1b['}", screen: []string{"012 346789", "abc deghij", "ABC DEGHIJ", "klm noqrst"}},
	{name: "DECLRMM CUF CUB", xterm: "CUF stops at the right margin, CUB at the left one", rows: 4,
		in: lrFill + lrOn + "\x1b[1;3H\x1b[9CX\x1b[9DY", screen: []string{"01Y34X6789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM HT", xterm: "HT stops at the right margin", rows: 4,
		in: lrFill + lrOn + "\x1b[1;3H\tX", screen: []string{"01234X6789", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM origin mode", xterm: "with DECOM, CUP is relative to the left margin and clamped to the right one", rows: 4,
		in: lrFill + lrOn + "\x1b[?6h\x1b[1;1HX\x1b[2;9HY", screen: []string{"01X3456789", "abcdeYghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM reset restores full width", xterm: "?69 l resets the margins", rows: 4,
		in: lrFill + lrOn + "\x1b[?69l\x1b[1;3HWXYZUV", screen: []string{"01WXYZUV89", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM wide character at the margin", xterm: "a wide character that does not fit before the margin wraps to the left margin", rows: 4,
		in: lrFill + lrOn + "\x1b[1;6H日", screen: []string{"01234 6789", "ab日efghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM printing right of the margin", xterm: "right of the right margin the line ends at the screen edge; the wrap goes to the left margin", rows: 4,
		in: lrFill + lrOn + "\x1b[1;8HXYZW", screen: []string{"0123456XYZ", "abWdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM LNM", xterm: "the carriage return of LF in LNM mode goes to the left margin", rows: 4,
		in: lrFill + lrOn + "\x1b[20h\x1b[2;5H\nX", screen: []string{"0123456789", "abcdefghij", "ABXDEFGHIJ", "klmnopqrst"}},
	{name: "DECLRMM DECSTR resets margins", xterm: "a soft reset restores full-width margins", rows: 4,
		in: lrFill + lrOn + "\x1b[!p\x1b[1;3HWXYZUV", screen: []string{"01WXYZUV89", "abcdefghij", "ABCDEFGHIJ", "klmnopqrst"}},
}

func TestConformance(t *testing.T) { runVTCases(t, conformanceCases) }
