package screen

import (
	"reflect"
	"strings"
	"testing"
)

type tcase struct {
	name       string
	cols, rows int
	sb         int
	in         string
	lines      []string // LastLines(100) if non-nil
	cursor     *Cursor
	replies    []string
	check      func(t *testing.T, s *Screen, r *recorder)
}

func cur(x, y int) *Cursor { return &Cursor{X: x, Y: y, Visible: true} }

func styleAt(s *Screen, x, y int) Style { return s.Row(y)[x].Style }

var cases = []tcase{
	{name: "plain", in: "hello\r\nworld", lines: []string{"hello", "world"}, cursor: cur(5, 1)},
	{name: "lf keeps column", in: "ab\ncd", lines: []string{"ab", "  cd"}, cursor: cur(4, 1)},
	{name: "autowrap joins", cols: 10, in: "0123456789abc",
		lines: []string{"0123456789abc"}, cursor: cur(3, 1),
		check: func(t *testing.T, s *Screen, r *recorder) {
			if !s.RowWrapped(0) || s.RowWrapped(1) {
				t.Error("wrap flags")
			}
		}},
	{name: "pending wrap", cols: 5, in: "abcde", cursor: cur(4, 0), lines: []string{"abcde"}},
	{name: "pending wrap then CR", cols: 5, in: "abcde\rX", lines: []string{"Xbcde"}, cursor: cur(1, 0)},
	{name: "pending wrap then CRLF", cols: 5, in: "abcde\r\nf", lines: []string{"abcde", "f"}},
	{name: "wide", in: "日本x", lines: []string{"日本x"}, cursor: cur(5, 0),
		check: func(t *testing.T, s *Screen, r *recorder) {
			row := s.Row(0)
			if row[0].Rune != '日' || row[0].Width != 2 || row[1].Width != 0 || row[2].Rune != '本' || row[4].Rune != 'x' {
				t.Errorf("cells %+v", row[:5])
			}
		}},
	{name: "emoji wide", in: "😀a", cursor: cur(3, 0), lines: []string{"😀a"}},
	{name: "wide at edge wraps", cols: 5, in: "abcd日", lines: []string{"abcd日"}, cursor: cur(2, 1),
		check: func(t *testing.T, s *Screen, r *recorder) {
			if rowText(s, 0) != "abcd" || rowText(s, 1) != "日" {
				t.Errorf("rows %q %q", rowText(s, 0), rowText(s, 1))
			}
		}},
	{name: "overwrite half of wide", in: "日本\x1b[2GX", lines: []string{" X本"}},
	{name: "combining", in: "e\u0301x", lines: []string{"e\u0301x"}, cursor: cur(2, 0),
		check: func(t *testing.T, s *Screen, r *recorder) {
			if c := s.Row(0)[0]; c.Comb != "\u0301" {
				t.Errorf("comb %+v", c)
			}
		}},
	{name: "combining on wide", in: "日\u0301", lines: []string{"日\u0301"}},
	{name: "combining after pending wrap", cols: 3, in: "abc\u0301", lines: []string{"abc\u0301"}},
	{name: "invalid utf8", in: "a\xffb\xe2\x82", lines: []string{"a\ufffdb"}},
	{name: "interrupted utf8", in: "a\xe2\x82b", lines: []string{"a\ufffd\ufffdb"}},
	{name: "c1 ignored", in: "a\u009bb\u0085c", lines: []string{"abc"}},
	{name: "backspace", in: "abc\bX", lines: []string{"abX"}, cursor: cur(3, 0)},
	{name: "tab", in: "a\tb\tc", lines: []string{"a       b       c"}, cursor: cur(17, 0)},
	{name: "tab at end", cols: 10, in: "\t\t\tX", lines: []string{"         X"}},
	{name: "HTS TBC", in: "\x1b[3g\x1b[5G\x1bH\r\tX\x1b[0g", lines: []string{"    X"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			s.Write([]byte("\r\tY"))
			if got := s.LastLines(1)[0]; got != "    X" && !strings.HasSuffix(got, "Y") {
				t.Errorf("got %q", got)
			}
		}},
	{name: "CHT CBT", in: "\x1b[2IX\x1b[2ZY", lines: []string{"        Y       X"}},
	{name: "CUP", in: "\x1b[3;5HX", lines: []string{"", "", "    X"}, cursor: cur(5, 2)},
	{name: "HVP default", in: "abc\x1b[fX", lines: []string{"Xbc"}},
	{name: "CUP clamps", cols: 10, rows: 5, in: "\x1b[99;99HX", cursor: cur(9, 4)},
	{name: "CUU CUD CUF CUB", in: "\x1b[5;5H\x1b[2AA\x1b[3BB\x1b[4CC\x1b[10DD",
		lines: []string{"", "", "    A", "", "", " D   B    C"}},
	{name: "CHA VPA", in: "\x1b[10G\x1b[3dX", lines: []string{"", "", "         X"}},
	{name: "CNL CPL", in: "ab\x1b[2Ec\x1b[Fd", lines: []string{"ab", "d", "c"}},
	{name: "VPR HPR", in: "\x1b[2e\x1b[3aX", lines: []string{"", "", "   X"}},
	{name: "DECSC DECRC", in: "ab\x1b7\x1b[31m\x1b[5;5Hx\x1b8c", lines: []string{"abc", "", "", "", "    x"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 2, 0); st.Fg != 0 {
				t.Errorf("restored pen %+v", st)
			}
		}},
	{name: "CSI s u", in: "ab\x1b[s\x1b[3;3Hx\x1b[uc", lines: []string{"abc", "", "  x"}},
	{name: "EL0", in: "abcdef\x1b[3G\x1b[K", lines: []string{"ab"}},
	{name: "EL1", in: "abcdef\x1b[3G\x1b[1K", lines: []string{"   def"}},
	{name: "EL2", in: "abcdef\x1b[2K", lines: []string{}},
	{name: "ED0", rows: 3, in: "aaa\r\nbbb\r\nccc\x1b[2;2H\x1b[J", lines: []string{"aaa", "b"}},
	{name: "ED1", rows: 3, in: "aaa\r\nbbb\r\nccc\x1b[2;2H\x1b[1J", lines: []string{"", "  b", "ccc"}},
	{name: "ED2", rows: 3, in: "aaa\r\nbbb\x1b[2J", lines: []string{}, cursor: cur(3, 1)},
	{name: "ED3", rows: 2, in: "1\r\n2\r\n3\r\n4\x1b[3J", lines: []string{"3", "4"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.ScrollbackLen() != 0 {
				t.Error("scrollback not cleared")
			}
		}},
	{name: "ECH", in: "abcdef\x1b[2G\x1b[3X", lines: []string{"a   ef"}, cursor: cur(1, 0)},
	{name: "ICH", cols: 8, in: "abcdefgh\x1b[3G\x1b[2@", lines: []string{"ab  cdef"}},
	{name: "DCH", in: "abcdef\x1b[2G\x1b[2P", lines: []string{"adef"}},
	{name: "DCH wide", in: "a日b\x1b[3G\x1b[P", lines: []string{"a b"}},
	{name: "IL", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2H\x1b[L", lines: []string{"1", "", "2", "3"}},
	{name: "DL", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2H\x1b[2M", lines: []string{"1", "4"}},
	{name: "DL top does not save", rows: 3, in: "1\r\n2\r\n3\x1b[H\x1b[M", lines: []string{"2", "3"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.ScrollbackLen() != 0 {
				t.Error("DL pushed to scrollback")
			}
		}},
	{name: "SU SD", rows: 4, in: "1\r\n2\r\n3\r\n4\x1b[2S", lines: []string{"1", "2", "3", "4"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if rowText(s, 0) != "3" || s.ScrollbackLen() != 2 {
				t.Errorf("row0 %q sb %d", rowText(s, 0), s.ScrollbackLen())
			}
			s.Write([]byte("\x1b[T"))
			if rowText(s, 0) != "" || rowText(s, 1) != "3" {
				t.Errorf("after SD %q %q", rowText(s, 0), rowText(s, 1))
			}
		}},
	{name: "scroll region LF", rows: 5, in: "a\r\nb\r\nc\r\nd\r\ne\x1b[2;4r\x1b[4H\nX",
		lines: []string{"a", "c", "d", "X", "e"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.ScrollbackLen() != 0 {
				t.Error("region scroll saved lines")
			}
		}},
	{name: "RI at top of region", rows: 5, in: "a\r\nb\r\nc\r\nd\r\ne\x1b[2;4r\x1b[2H\x1bMX",
		lines: []string{"a", "X", "b", "c", "e"}},
	{name: "IND NEL", in: "ab\x1bDc\x1bEd", lines: []string{"ab", "  c", "d"}},
	{name: "scrollback", rows: 3, in: "1\r\n2\r\n3\r\n4\r\n5", lines: []string{"1", "2", "3", "4", "5"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.ScrollbackLen() != 2 || rowText(s, 0) != "3" {
				t.Errorf("sb %d row0 %q", s.ScrollbackLen(), rowText(s, 0))
			}
		}},
	{name: "scrollback max", rows: 2, sb: 3, in: "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7", lines: []string{"3", "4", "5", "6", "7"}},
	{name: "wrapped line into scrollback", cols: 4, rows: 2, in: "abcdefghij\r\nx\r\ny",
		lines: []string{"abcdefghij", "x", "y"}},
	{name: "wide wrap into scrollback", cols: 5, rows: 2, in: "abcd日本語\r\n\r\n\r\n", lines: []string{"abcd日本語", ""}},
	{name: "trailing blank rows dropped", rows: 5, in: "a\r\n\r\nb\r\n\r\n", lines: []string{"a", "", "b"}},
	{name: "alt 1049", rows: 3, in: "main\x1b[?1049h\x1b[31malt\x1b[?1049lX", lines: []string{"mainX"}, cursor: cur(5, 0)},
	{name: "alt shows alt", rows: 3, in: "main\r\n\x1b[?1049h\x1b[2;1Halt", lines: []string{"", "alt"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if !s.AltScreen() {
				t.Error("not alt")
			}
		}},
	{name: "alt no scrollback", rows: 2, in: "\x1b[?1049h1\r\n2\r\n3\r\n4", lines: []string{"3", "4"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.ScrollbackLen() != 0 {
				t.Error("alt screen saved lines")
			}
		}},
	{name: "alt 1047 clears on exit", in: "m\x1b[?1047hA\x1b[?1047l\x1b[?47h", lines: []string{},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if !s.AltScreen() || rowText(s, 0) != "" {
				t.Errorf("alt %v %q", s.AltScreen(), rowText(s, 0))
			}
			s.Write([]byte("\x1b[?47l"))
			if rowText(s, 0) != "m" {
				t.Errorf("main %q", rowText(s, 0))
			}
		}},
	{name: "SGR basic", in: "\x1b[1;3;4;5;7;8;9;2;31;42ma\x1b[0mb",
		check: func(t *testing.T, s *Screen, r *recorder) {
			want := Style{Fg: IndexedColor(1), Bg: IndexedColor(2), Attrs: AttrBold | AttrItalic | AttrUnderline |
				AttrBlink | AttrInverse | AttrHidden | AttrStrike | AttrDim}
			if st := styleAt(s, 0, 0); st != want {
				t.Errorf("got %+v want %+v", st, want)
			}
			if st := styleAt(s, 1, 0); st != (Style{}) {
				t.Errorf("reset %+v", st)
			}
		}},
	{name: "SGR bright 256 rgb", in: "\x1b[91;104ma\x1b[38;5;200;48;2;1;2;3mb\x1b[39;49mc",
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 0, 0); st.Fg != IndexedColor(9) || st.Bg != IndexedColor(12) {
				t.Errorf("a %+v", st)
			}
			if st := styleAt(s, 1, 0); st.Fg != IndexedColor(200) || st.Bg != RGBColor(1, 2, 3) {
				t.Errorf("b %+v", st)
			}
			if st := styleAt(s, 2, 0); st != (Style{}) {
				t.Errorf("c %+v", st)
			}
		}},
	{name: "SGR colon", in: "\x1b[38:2::10:20:30;48:5:7;4:3ma\x1b[38:2:1:2:3;4:0;1mb\x1b[58:5:3;22;21mc",
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 0, 0); st.Fg != RGBColor(10, 20, 30) || st.Bg != IndexedColor(7) || st.Attrs != AttrCurlyUnderline {
				t.Errorf("a %+v", st)
			}
			if st := styleAt(s, 1, 0); st.Fg != RGBColor(1, 2, 3) || st.Attrs != AttrBold {
				t.Errorf("b %+v", st)
			}
			if st := styleAt(s, 2, 0); st.Attrs != AttrDoubleUnderline {
				t.Errorf("c %+v", st)
			}
		}},
	{name: "SGR attr off", in: "\x1b[1;2;3;4;5;7;8;9m\x1b[22;23;24;25;27;28;29mx",
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 0, 0); st.Attrs != 0 {
				t.Errorf("%+v", st)
			}
		}},
	{name: "erase uses bg", in: "\x1b[44m\x1b[2K",
		check: func(t *testing.T, s *Screen, r *recorder) {
			if st := styleAt(s, 79, 0); st.Bg != IndexedColor(4) {
				t.Errorf("%+v", st)
			}
		}},
	{name: "no autowrap", cols: 5, in: "\x1b[?7labcdefg", lines: []string{"abcdg"}, cursor: cur(4, 0)},
	{name: "origin mode", rows: 6, in: "\x1b[2;4r\x1b[?6h\x1b[HX\x1b[6n\x1b[9;1HY",
		lines: []string{"", "X", "", "Y"}, replies: []string{"\x1b[1;2R"}},
	{name: "DSR", in: "ab\r\ncd\x1b[5n\x1b[6n\x1b[?6n", replies: []string{"\x1b[0n", "\x1b[2;3R", "\x1b[?2;3R"}},
	{name: "DA1 DA2", in: "\x1b[c\x1b[0c\x1b[>c", replies: []string{"\x1b[?62;22c", "\x1b[?62;22c", "\x1b[>1;10;0c"}},
	{name: "DECRQM", in: "\x1b[?2004h\x1b[?2004$p\x1b[?25$p\x1b[?9999$p\x1b[4$p",
		replies: []string{"\x1b[?2004;1$y", "\x1b[?25;1$y", "\x1b[?9999;0$y", "\x1b[4;2$y"}},
	{name: "OSC colours", in: "\x1b]10;?\x07\x1b]11;?\x1b\\",
		replies: []string{"\x1b]10;" + replyFg + "\a", "\x1b]11;" + replyBg + "\x1b\\"}},
	{name: "XTVERSION size", rows: 24, in: "\x1b[>q\x1b[18t", replies: []string{"\x1bP>|Phantom\x1b\\", "\x1b[8;24;80t"}},
	{name: "IRM", in: "abc\r\x1b[4hX\x1b[4lY", lines: []string{"XYbc"}},
	{name: "cursor hidden", in: "\x1b[?25l", cursor: &Cursor{}},
	{name: "modes", in: "\x1b[?1h\x1b=\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?1004h\x1b[5 q\x1b[20h",
		check: func(t *testing.T, s *Screen, r *recorder) {
			m := s.Modes()
			if !m.AppCursor || !m.AppKeypad || !m.BracketedPaste || m.Mouse != MouseButton ||
				m.MouseEncoding != MouseEncodingSGR || !m.FocusEvents || m.CursorStyle != 5 || !m.NewLine {
				t.Errorf("%+v", m)
			}
			s.Write([]byte("\x1b[?1002l\x1b[?1l\x1b>"))
			m = s.Modes()
			if m.Mouse != MouseNone || m.AppCursor || m.AppKeypad {
				t.Errorf("%+v", m)
			}
		}},
	{name: "LNM", in: "\x1b[20hab\ncd", lines: []string{"ab", "cd"}},
	{name: "RIS", in: "\x1b[31mab\x1b[?1049h\x1b[?2004h\x1bcX", lines: []string{"X"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.AltScreen() || s.Modes().BracketedPaste || styleAt(s, 0, 0) != (Style{}) {
				t.Error("not reset")
			}
		}},
	{name: "DECSTR", in: "\x1b[?25l\x1b[4h\x1b[1m\x1b[!pab", lines: []string{"ab"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if !s.Modes().CursorVisible || s.Modes().Insert || styleAt(s, 0, 0).Attrs != 0 {
				t.Error("not soft reset")
			}
		}},
	{name: "titles", in: "\x1b]0;one\x07\x1b]2;two\x1b\\\x1b]1;icon\x07x",
		lines: []string{"x"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.Title() != "two" || len(r.events) != 2 || r.events[0].Text != "one" || r.events[0].Kind != EventTitle {
				t.Errorf("%q %+v", s.Title(), r.events)
			}
		}},
	{name: "OSC 7", in: "\x1b]7;file://host/home/u%20x/d\x07",
		check: func(t *testing.T, s *Screen, r *recorder) {
			if s.Cwd() != "/home/u x/d" || len(r.events) != 1 || r.events[0].Kind != EventCwd {
				t.Errorf("%q %+v", s.Cwd(), r.events)
			}
		}},
	{name: "OSC 133", in: "\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x07out\r\n\x1b]133;D;1\x07\x1b]133;D\x07\x1b]133;D;0;aid=1\x1b\\",
		lines: []string{"$ ls", "out"},
		check: func(t *testing.T, s *Screen, r *recorder) {
			want := []Event{{Kind: EventPromptStart}, {Kind: EventCommandStart}, {Kind: EventCommandExecuted},
				{Kind: EventCommandFinished, Text: "1", ExitCode: 1, HasExit: true}, {Kind: EventCommandFinished},
				{Kind: EventCommandFinished, Text: "0;aid=1", HasExit: true}}
			if !reflect.DeepEqual(r.events, want) {
				t.Errorf("%+v", r.events)
			}
		}},
	{name: "bell", in: "a\ab",
		lines: []string{"ab"}, check: func(t *testing.T, s *Screen, r *recorder) {
			if len(r.events) != 1 || r.events[0].Kind != EventBell {
				t.Errorf("%+v", r.events)
			}
		}},
	{name: "ignored strings", in: "a\x1bP1$r0m\x1b\\b\x1b_apc\x1b\\c\x1b^pm\x1b\\d\x1bXsos\x1b\\e\x1b]52;c;aGVsbG8=\x07f\x1b]8;;http://x\x07g\x1b]8;;\x07h",
		lines: []string{"abcdefgh"}},
	{name: "huge OSC discarded", in: "\x1b]2;" + strings.Repeat("x", 10000) + "\x07ok",
		lines: []string{"ok"}, check: func(t *testing.T, s *Screen, r *recorder) {
			if s.Title() != "" || len(r.events) != 0 || cap(s.p.str) > maxStr {
				t.Error("huge OSC kept")
			}
		}},
	{name: "CAN aborts CSI", in: "\x1b[3\x18A", lines: []string{"A"}},
	{name: "C0 inside CSI", in: "ab\x1b[\r2CX", lines: []string{"abX"}},
	{name: "ESC restarts", in: "\x1b[12\x1b[CX", lines: []string{" X"}},
	{name: "unknown CSI", in: "a\x1b[?1;2;3zb\x1b[1$zc\x1b[<1;2Md", lines: []string{"abcd"}},
	{name: "DEC graphics", in: "\x1b(0lqk\x1b(Bq\x0e\x0f", lines: []string{"┌─┐q"}},
	{name: "SO SI", in: "\x1b)0a\x0eq\x0fq", lines: []string{"a─q"}},
	{name: "REP", in: "ab\x1b[3b", lines: []string{"abbbb"}},
	{name: "DECALN", cols: 3, rows: 2, in: "\x1b#8", lines: []string{"EEE", "EEE"}, cursor: cur(0, 0)},
	{name: "DEL ignored", in: "a\x7fb", lines: []string{"ab"}},
}

func runCase(t *testing.T, tc tcase, chunks [][]byte) (*Screen, *recorder) {
	cols, rows := tc.cols, tc.rows
	if cols == 0 {
		cols = 80
	}
	if rows == 0 {
		rows = 24
	}
	s, r := newRec(cols, rows, tc.sb)
	for _, c := range chunks {
		if n, err := s.Write(c); n != len(c) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	return s, r
}

func TestCases(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			s, r := runCase(t, tc, [][]byte{in})
			checkInvariants(t, s)
			if tc.lines != nil {
				got := s.LastLines(100)
				if len(got) == 0 && len(tc.lines) == 0 {
					got = tc.lines
				}
				if !reflect.DeepEqual(got, tc.lines) {
					t.Errorf("lines = %q, want %q", got, tc.lines)
				}
			}
			if tc.cursor != nil && s.Cursor() != *tc.cursor {
				t.Errorf("cursor = %+v, want %+v", s.Cursor(), *tc.cursor)
			}
			if tc.replies != nil && !reflect.DeepEqual(r.replies, tc.replies) {
				t.Errorf("replies = %q, want %q", r.replies, tc.replies)
			}
			want := snapshot(s, r)
			if tc.check != nil {
				tc.check(t, s, r)
			}
			// Every split point, and byte by byte, must give the same state.
			for k := 1; k < len(in); k++ {
				s2, r2 := runCase(t, tc, [][]byte{in[:k], in[k:]})
				if got := snapshot(s2, r2); got != want {
					t.Fatalf("split at %d differs:\n%s\nwant:\n%s", k, got, want)
				}
			}
			var bytewise [][]byte
			for k := range in {
				bytewise = append(bytewise, in[k:k+1])
			}
			s3, r3 := runCase(t, tc, bytewise)
			if got := snapshot(s3, r3); got != want {
				t.Fatalf("byte-wise differs:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
