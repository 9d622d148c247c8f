package attach

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// cellsOf lays text out as one screen row per line.
func cellsOf(lines ...string) [][]screen.Cell {
	var out [][]screen.Cell
	for _, l := range lines {
		scr := screen.New(screen.Options{Cols: 40, Rows: 1, Scrollback: -1})
		scr.Write([]byte(l))
		out = append(out, scr.Row(0))
	}
	return out
}

func TestSearchHistory(t *testing.T) {
	hist := cellsOf("alpha one", "beta two", "Gamma alpha", "delta", "界alpha")
	// "wrapped-nee" runs on into "dle here": one line of text.
	hist = append(hist, cellsOf("wrapped-nee", "dle here")...)
	hist[5] = hist[5][:11] // a wrapped row is as wide as the screen
	soft := map[int]bool{5: true}
	read := func(top, n int) ([][]screen.Cell, []bool) {
		out, wrapped := make([][]screen.Cell, n), make([]bool, n)
		for i := range out {
			if top+i < len(hist) {
				out[i], wrapped[i] = hist[top+i], soft[top+i]
			}
		}
		return out, wrapped
	}
	tests := []struct {
		name   string
		query  string
		x, y   int
		back   bool
		wx, wy int
		found  bool
	}{
		{"forward from the start", "alpha", 0, 0, false, 6, 2, true},
		{"forward on the same line", "two", 0, 1, false, 5, 1, true},
		{"forward wraps around", "alpha", 2, 4, false, 0, 0, true},
		{"back", "alpha", 6, 2, true, 0, 0, true},
		{"back on the same line", "alpha", 8, 2, true, 6, 2, true},
		{"back wraps around", "beta", 0, 0, true, 0, 1, true},
		{"lower case matches any case", "gamma", 0, 0, false, 0, 2, true},
		{"a capital matches exactly", "GAMMA", 0, 0, false, 0, 0, false},
		{"after a wide character: its column", "alpha", 0, 3, false, 2, 4, true},
		{"the only match is the cursor's", "delta", 0, 3, false, 0, 3, true},
		{"no match", "omega", 0, 0, false, 0, 0, false},
		{"across a soft wrap: found at its start", "needle", 0, 0, false, 8, 5, true},
		{"across a soft wrap, back", "needle", 0, 0, true, 8, 5, true},
		{"not across a hard line end", "deltaalpha", 0, 0, false, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, y, ok := searchHistory(read, len(hist), tt.query, tt.x, tt.y, tt.back)
			if ok != tt.found || ok && (x != tt.wx || y != tt.wy) {
				t.Errorf("search %q from %d,%d back=%t: %d,%d %t; want %d,%d %t", tt.query, tt.x, tt.y, tt.back, x, y, ok, tt.wx, tt.wy, tt.found)
			}
		})
	}
}

func TestSelectText(t *testing.T) {
	// Lines 4 to 6 are one line of text soft-wrapped at 10 columns, the
	// first wrap inside a word, the second after a blank (which the
	// scrollback does not store).
	lines := cellsOf("first line   ", "second", "third line", "界 wide", "a long tex", "t that is ", "wrapped", "end  ")
	lines[4], lines[5] = lines[4][:10], lines[5][:9]
	wrapped := []bool{4: true, 5: true, 7: false}
	tests := []struct {
		name     string
		from, to int // lines
		sx, ex   int
		want     string
	}{
		{"part of one line", 0, 0, 6, 9, "line"},
		{"across lines, trailing blanks dropped", 0, 2, 6, 4, "line\nsecond\nthird"},
		{"whole line", 1, 1, 0, 39, "second"},
		{"a wide character counts once", 3, 3, 0, 3, "界 w"},
		{"a soft-wrapped line is one line", 4, 6, 0, 39, "a long text that is wrapped"},
		{"a hard end after a soft-wrapped line", 3, 7, 0, 39, "界 wide\na long text that is wrapped\nend"},
		{"ending inside a wrapped row", 4, 5, 2, 0, "long text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := selectText(lines[tt.from:tt.to+1], wrapped[min(tt.from, len(wrapped)):min(tt.to+1, len(wrapped))], 10, tt.sx, tt.ex); got != tt.want {
				t.Errorf("selectText = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSelected(t *testing.T) {
	c := copyState{sel: true, ax: 5, ay: 3, cx: 2, cy: 1} // anchor after the cursor
	tests := []struct {
		x, y int
		want bool
	}{
		{1, 1, false}, {2, 1, true}, {79, 1, true}, {0, 2, true}, {5, 3, true}, {6, 3, false}, {0, 0, false}, {0, 4, false},
	}
	for _, tt := range tests {
		if got := c.selected(tt.x, tt.y); got != tt.want {
			t.Errorf("selected(%d,%d) = %t, want %t", tt.x, tt.y, got, tt.want)
		}
	}
}

func TestOSC52(t *testing.T) {
	if got, want := string(OSC52("héllo\n")), "\x1b]52;c;aMOpbGxvCg==\a"; got != want {
		t.Errorf("OSC52 = %q, want %q", got, want)
	}
}

func TestParseMouse(t *testing.T) {
	tests := []struct {
		in     string
		ev     mouseEvent
		n      int
		ok     bool
		motion bool
		button int
	}{
		{"\x1b[<0;1;1M", mouseEvent{code: 0, x: 0, y: 0}, 9, true, false, 0},
		{"\x1b[<0;12;5mrest", mouseEvent{code: 0, x: 11, y: 4, release: true}, 10, true, false, 0},
		{"\x1b[<32;3;4M", mouseEvent{code: 32, x: 2, y: 3}, 10, true, true, 0},
		{"\x1b[<64;10;10M", mouseEvent{code: 64, x: 9, y: 9}, 12, true, false, 64},
		{"\x1b[<20;1;1M", mouseEvent{code: 20, x: 0, y: 0}, 10, true, false, 0}, // shift+ctrl
		{"\x1b[<0;1", mouseEvent{}, 0, false, false, 0},                         // cut by a read
		{"\x1b[<0;0;1M", mouseEvent{}, 9, false, false, 0},                      // column 0 does not exist
		{"\x1b[<0;1M", mouseEvent{}, 7, false, false, 0},                        // too few parameters
		{"\x1b[<0;1;1;1M", mouseEvent{}, 9, false, false, 0},                    // too many
		{"\x1b[<a", mouseEvent{}, 4, false, false, 0},
	}
	for _, tt := range tests {
		ev, n, ok := parseMouse([]byte(tt.in))
		if n != tt.n || ok != tt.ok || ok && (ev != tt.ev || ev.motion() != tt.motion || ev.button() != tt.button) {
			t.Errorf("parseMouse(%q) = %+v, %d, %t; want %+v, %d, %t", tt.in, ev, n, ok, tt.ev, tt.n, tt.ok)
		}
	}
}

func TestEncodeMouse(t *testing.T) {
	press := mouseEvent{code: 0, x: 4, y: 2}
	release := mouseEvent{code: 0, x: 4, y: 2, release: true}
	drag := mouseEvent{code: 32, x: 5, y: 2}
	move := mouseEvent{code: 35, x: 5, y: 2}
	ctrl := mouseEvent{code: 16, x: 4, y: 2}
	far := mouseEvent{code: 0, x: 300, y: 2}
	m := func(mode screen.MouseMode, enc screen.MouseEncoding) screen.Modes {
		return screen.Modes{Mouse: mode, MouseEncoding: enc}
	}
	tests := []struct {
		name string
		ev   mouseEvent
		m    screen.Modes
		want string // "" for dropped
	}{
		{"SGR press", press, m(screen.MouseNormal, screen.MouseEncodingSGR), "\x1b[<0;5;3M"},
		{"SGR release", release, m(screen.MouseNormal, screen.MouseEncodingSGR), "\x1b[<0;5;3m"},
		{"X10 bytes press", press, m(screen.MouseNormal, screen.MouseEncodingDefault), "\x1b[M %#"},
		{"X10 bytes release: button 3", release, m(screen.MouseNormal, screen.MouseEncodingDefault), "\x1b[M#%#"},
		{"URXVT", press, m(screen.MouseNormal, screen.MouseEncodingURXVT), "\x1b[32;5;3M"},
		{"UTF-8 past 95 columns", far, m(screen.MouseNormal, screen.MouseEncodingUTF8), "\x1b[M " + string(rune(333)) + "#"},
		{"bytes cannot say column 301", far, m(screen.MouseNormal, screen.MouseEncodingDefault), ""},
		{"1000 gets no drags", drag, m(screen.MouseNormal, screen.MouseEncodingSGR), ""},
		{"1002 gets drags", drag, m(screen.MouseButton, screen.MouseEncodingSGR), "\x1b[<32;6;3M"},
		{"1002 gets no bare moves", move, m(screen.MouseButton, screen.MouseEncodingSGR), ""},
		{"1003 gets bare moves", move, m(screen.MouseAny, screen.MouseEncodingSGR), "\x1b[<35;6;3M"},
		{"X10 gets no releases", release, m(screen.MouseX10, screen.MouseEncodingSGR), ""},
		{"X10 gets no modifiers", ctrl, m(screen.MouseX10, screen.MouseEncodingSGR), "\x1b[<0;5;3M"},
		{"none asked", press, m(screen.MouseNone, screen.MouseEncodingSGR), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(encodeMouse(tt.ev, tt.m, 400, 100)); got != tt.want {
				t.Errorf("encodeMouse = %q, want %q", got, tt.want)
			}
		})
	}
	if got := encodeMouse(mouseEvent{x: 79, y: 30}, m(screen.MouseNormal, screen.MouseEncodingSGR), 80, 24); got != nil {
		t.Errorf("a report below the tab's screen went to the program: %q", got)
	}
}

func TestStatusLineTabHits(t *testing.T) {
	si := StatusInfo{Window: "main", Focused: "t2", Tabs: tabsNamed(12)}
	tests := []struct {
		cols int
		x    int
		want string // "" for none
	}{
		{200, 1, "t1"},
		{200, 0, "t1"},
		{40, 39, ""}, // the right-hand side
	}
	for _, tt := range tests {
		_, hits := statusLayout(si, tt.cols)
		got, _ := tabAt(hits, tt.x)
		if got != tt.want {
			t.Errorf("%d columns, x %d: tab %q, want %q (hits %v)", tt.cols, tt.x, got, tt.want, hits)
		}
	}
	// Every tab shown is found at the column where its number is drawn.
	for _, cols := range []int{200, 60, 30} {
		cells, hits := statusLayout(si, cols)
		var line []rune
		for _, c := range cells {
			line = append(line, []rune(c.String())...)
		}
		for _, h := range hits {
			n := strings.TrimPrefix(h.id, "t")
			rest := string(line[h.from:])
			col := utf8.RuneCountInString(rest[:strings.Index(rest, " "+n+":")]) + h.from + 1
			if got, _ := tabAt(hits, col); got != h.id {
				t.Errorf("%d columns: %s drawn at %d, the click finds %q in %q", cols, h.id, col, got, string(line))
			}
		}
	}
}

func tabsNamed(n int) []workspace.Terminal {
	var ts []workspace.Terminal
	for i := 1; i <= n; i++ {
		ts = append(ts, workspace.Terminal{ID: fmt.Sprintf("t%d", i), Title: fmt.Sprintf("tab%d", i), Idle: true})
	}
	return ts
}

func TestCopyNotice(t *testing.T) {
	tests := []struct {
		name, text string
		cb         Clipboard
		want       string
	}{
		{"written", "abc", ClipboardWritten, "copied 3 characters; prefix ] pastes"},
		{"client did not say", "abc", ClipboardUnknown, "copied 3 characters; prefix ] pastes"},
		{"not announced, lines", "ab\ncd", ClipboardNotAnnounced,
			"copied 5 characters, 2 lines to Phantom's buffer (prefix ] pastes); this terminal did not announce OSC 52 — set PHANTOM_CLIPBOARD=on to force"},
		{"off", "é", ClipboardOff,
			"copied 1 character to Phantom's buffer (prefix ] pastes); PHANTOM_CLIPBOARD=off keeps it out of the terminal's clipboard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := copyNotice(tt.text, "", tt.cb); got != tt.want {
				t.Errorf("copyNotice(%q, %v) = %q, want %q", tt.text, tt.cb, got, tt.want)
			}
		})
	}
}
