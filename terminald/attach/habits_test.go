package attach

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// habitLines are the lines the word and selection tests move over; the
// wanted places are what tmux 3.3a's vi copy mode gave on them.
var habitLines = []string{"foo.bar baz_qux  end", "second line here", "third-x y"}

func habitText() *wordText {
	hist := cellsOf(habitLines...)
	return &wordText{class: charClass, total: len(hist), y: -1, read: func(y int) []screen.Cell { return hist[y] }}
}

// TestWordMotions checks w, e, b and W, E, B against tmux's vi copy
// mode.
func TestWordMotions(t *testing.T) {
	tests := []struct {
		keys   string
		x, y   int // the start
		wx, wy int
	}{
		{"w", 0, 0, 3, 0},
		{"ww", 0, 0, 4, 0},
		{"www", 0, 0, 8, 0},
		{"wwww", 0, 0, 17, 0},
		{"wwwww", 0, 0, 0, 1},
		{"wwwwww", 0, 0, 7, 1},
		{"e", 0, 0, 2, 0},
		{"ee", 0, 0, 3, 0},
		{"eee", 0, 0, 6, 0},
		{"eeee", 0, 0, 14, 0},
		{"eeeee", 0, 0, 19, 0},
		{"eeeeee", 0, 0, 5, 1},
		{"b", 0, 1, 17, 0},
		{"bb", 0, 1, 8, 0},
		{"b", 19, 0, 17, 0},
		{"bbb", 19, 0, 4, 0},
		{"W", 0, 0, 8, 0},
		{"WW", 0, 0, 17, 0},
		{"WWW", 0, 0, 0, 1},
		{"WWWW", 0, 0, 7, 1},
		{"E", 0, 0, 6, 0},
		{"EE", 0, 0, 14, 0},
		{"EEE", 0, 0, 19, 0},
		{"EEEE", 0, 0, 5, 1},
		{"B", 0, 1, 17, 0},
		{"BB", 0, 1, 8, 0},
		{"BB", 19, 0, 8, 0},
		{"W", 0, 2, 8, 2},
		{"b", 0, 0, 0, 0},            // the start of the history stays
		{"wwwwwwwwwwww", 0, 0, 8, 2}, // the last word: w stays at the end
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s from %d,%d", tt.keys, tt.x, tt.y), func(t *testing.T) {
			wt := habitText()
			p := wt.pos(tt.x, tt.y)
			for _, k := range tt.keys {
				wt.class = charClass
				if k >= 'A' && k <= 'Z' {
					wt.class, k = bigClass, k+'a'-'A'
				}
				switch k {
				case 'w':
					p = wt.nextWord(p)
				case 'e':
					p = wt.wordEnd(p)
				case 'b':
					p = wt.wordStart(p)
				}
			}
			if x := wt.column(p); x != tt.wx || p.y != tt.wy {
				t.Errorf("%s from %d,%d: at %d,%d, want %d,%d", tt.keys, tt.x, tt.y, x, p.y, tt.wx, tt.wy)
			}
		})
	}
}

// TestSelectionShapes checks what V and Ctrl-V select and copy, as tmux
// does: whole lines with their newlines; a rectangle, row by row.
func TestSelectionShapes(t *testing.T) {
	tests := []struct {
		name   string
		shape  selShape
		ax, ay int
		cx, cy int
		in     [][2]int // cells in the selection
		out    [][2]int // cells out of it
	}{
		{"lines", selLines, 5, 0, 2, 1, [][2]int{{0, 0}, {30, 0}, {0, 1}, {30, 1}}, [][2]int{{0, 2}}},
		{"rectangle", selRect, 4, 0, 6, 2, [][2]int{{4, 0}, {6, 1}, {5, 2}}, [][2]int{{3, 1}, {7, 1}, {0, 0}}},
		{"rectangle, ends swapped", selRect, 6, 2, 4, 0, [][2]int{{4, 0}, {6, 1}}, [][2]int{{7, 2}}},
		{"stream", selStream, 4, 0, 6, 2, [][2]int{{30, 0}, {0, 1}, {6, 2}}, [][2]int{{3, 0}, {7, 2}}},
	}
	for _, tt := range tests {
		c := copyState{sel: true, shape: tt.shape, ax: tt.ax, ay: tt.ay, cx: tt.cx, cy: tt.cy}
		for _, p := range tt.in {
			if !c.selected(p[0], p[1]) {
				t.Errorf("%s: %v not selected", tt.name, p)
			}
		}
		for _, p := range tt.out {
			if c.selected(p[0], p[1]) {
				t.Errorf("%s: %v selected", tt.name, p)
			}
		}
	}
	lines := cellsOf(habitLines...)
	rects := []struct {
		sx, ex int
		want   string
	}{
		{4, 6, "bar\nnd \nd-x"},              // tmux: w w Space C-v j j l l
		{8, 79, "baz_qux  end\nine here\ny"}, // past the text: its blanks cut
		{17, 17, "e\n\n"},
	}
	for _, r := range rects {
		if got := rectText(lines, r.sx, r.ex); got != r.want {
			t.Errorf("rectText(%d..%d) = %q, want %q", r.sx, r.ex, got, r.want)
		}
	}
}

// TestStartShape checks V and Ctrl-V with and without a selection.
func TestStartShape(t *testing.T) {
	tests := []struct {
		name  string
		sel   bool
		shape selShape
		press selShape
		want  selShape
	}{
		{"V starts lines", false, selStream, selLines, selLines},
		{"C-v starts a rectangle", false, selStream, selRect, selRect},
		{"C-v makes a stream a rectangle", true, selStream, selRect, selRect},
		{"C-v again: a stream", true, selRect, selRect, selStream},
		{"V on a rectangle: lines", true, selRect, selLines, selLines},
	}
	for _, tt := range tests {
		c := copyState{sel: tt.sel, shape: tt.shape, ax: 1, ay: 1, cx: 5, cy: 3}
		c.startShape(tt.press)
		if !c.sel || c.shape != tt.want {
			t.Errorf("%s: sel %v shape %v, want %v", tt.name, c.sel, c.shape, tt.want)
		}
		if !tt.sel && (c.ax != 5 || c.ay != 3) {
			t.Errorf("%s: anchor %d,%d, want the cursor", tt.name, c.ax, c.ay)
		}
	}
}

// TestBuffers checks the paste buffers: newest first, bounded, deleted
// by name.
func TestBuffers(t *testing.T) {
	b := NewBuffers()
	if _, ok := b.Newest(); ok {
		t.Fatal("a new store has a buffer")
	}
	for i := range MaxBuffers + 5 {
		b.Push(fmt.Sprintf("text %d", i))
	}
	list := b.List()
	if len(list) != MaxBuffers {
		t.Fatalf("%d buffers, want %d", len(list), MaxBuffers)
	}
	tests := []struct {
		i          int
		name, text string
	}{
		{0, "buffer24", "text 24"},
		{1, "buffer23", "text 23"},
		{MaxBuffers - 1, "buffer5", "text 5"},
	}
	for _, tt := range tests {
		if list[tt.i] != (Buffer{tt.name, tt.text}) {
			t.Errorf("buffer %d = %+v, want %s %q", tt.i, list[tt.i], tt.name, tt.text)
		}
	}
	if !b.Delete("buffer24") || b.Delete("buffer24") || b.Delete("buffer0") {
		t.Error("Delete: want true once for a kept buffer, false after and for a dropped one")
	}
	if n, _ := b.Newest(); n.Name != "buffer23" {
		t.Errorf("newest after delete = %s", n.Name)
	}
	if got := bufferPreview(Buffer{"buffer3", "a\nb\x1b"}); got != "buffer3: 4 characters: a↵b?" && !strings.HasPrefix(got, "buffer3: 4 characters: a↵b") {
		t.Errorf("preview %q", got)
	}
}

// habitClient is a client of a window with tabs in directories it made,
// on a clock the test moves, with a long repeat time unless repeat says.
func habitClient(t *testing.T, tabs int, cfg config.Config) (*fakeClient, *workspace.Workspace, *fakeClock) {
	t.Helper()
	ws := newWorkspace(t)
	for range tabs {
		if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	clock := &fakeClock{t: time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)}
	o := Options{Workspace: ws, Focus: newFocuses(clock.now), Live: NewLive(NewSettings(cfg)), Buffers: NewBuffers()}
	c := startClientWith(t, o, Hello{Cols: 81, Rows: 24})
	c.o = o
	c.waitText(fmt.Sprintf("%d:", tabs))
	return c, ws, clock
}

// TestCommandPrompt checks prefix : — a command with an argument, Tab
// completion, the history, and an unknown command's message.
func TestCommandPrompt(t *testing.T) {
	c, _, _ := habitClient(t, 1, config.Config{})
	c.send("\x1c:rename-t\t")
	c.waitFor("the completed name", func(string) bool { return strings.TrimSpace(c.row(23)) == ":rename-tab" })
	c.send("build\r")
	c.waitFor("the new name", func(string) bool { return strings.Contains(c.row(23), "1:build") })
	c.send("\x1c:\x1b[A")
	c.waitFor("the history's line", func(string) bool { return strings.TrimSpace(c.row(23)) == ":rename-tab build" })
	c.send("\x1b[B\x15resiz\t")
	c.waitFor("the common start", func(string) bool { return strings.TrimSpace(c.row(23)) == ":resize-" })
	c.send("\t")
	c.waitFor("the first match", func(string) bool { return strings.TrimSpace(c.row(23)) == ":resize-up" })
	c.send("\x15renam-tab x\r")
	c.waitFor("the unknown command", func(string) bool {
		return strings.Contains(c.row(23), `unknown command "renam-tab" (did you mean "rename-tab"?)`)
	})
	c.send("\x1c:select-tab 7\r")
	c.waitFor("no entry 7", func(string) bool { return strings.Contains(c.row(23), "no entry 7") })
	c.send("\x1c:send-keys 'echo sent-$((2*21))' Enter\r")
	c.waitText("sent-42")
}

// TestCommandPromptNewTab checks new-tab DIR: an absolute or relative
// directory (from the shown tab's), and one that is not there.
func TestCommandPromptNewTab(t *testing.T) {
	c, ws, _ := habitClient(t, 1, config.Config{})
	base := ws.List()[0].Directory
	if err := os.Mkdir(filepath.Join(base, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	tests := []struct {
		arg, dir, msg string
	}{
		{other, other, ""},
		{"nowhere", "", "new-tab nowhere: no such directory"},
	}
	for _, tt := range tests {
		c.send("\x1c1\x1c:new-tab " + tt.arg + "\r")
		if tt.msg != "" {
			c.waitFor(tt.msg, func(string) bool { return strings.Contains(c.row(23), tt.msg) })
			continue
		}
		eventually(t, "a tab in "+tt.dir, func() bool {
			return slices.ContainsFunc(ws.List(), func(tm workspace.Terminal) bool { return tm.Directory == tt.dir })
		})
	}
	c.send("\x1c1\x1c:new-tab sub\r")
	eventually(t, "a tab in sub", func() bool {
		return slices.ContainsFunc(ws.List(), func(tm workspace.Terminal) bool { return tm.Directory == filepath.Join(base, "sub") })
	})
}

// TestBoundCommandLine checks a key bound to a command line with an
// argument.
func TestBoundCommandLine(t *testing.T) {
	c, _, _ := habitClient(t, 1, config.Config{Keys: map[string]string{"M": "rename-tab from key"}})
	c.send("\x1cM")
	c.waitFor("the new name", func(string) bool { return strings.Contains(c.row(23), "1:from key") })
}

// TestLastTab checks prefix l: back to the tab shown before, and again.
func TestLastTab(t *testing.T) {
	c, _, _ := habitClient(t, 3, config.Config{})
	shown := func(n string) {
		t.Helper()
		c.waitFor("tab "+n+" shown", func(string) bool { return shownNumber(c.row(23)) == n })
	}
	c.send("\x1cl")
	c.waitFor("no last tab", func(string) bool { return strings.Contains(c.row(23), "no last tab") })
	c.send("\x1c1")
	shown("1")
	c.send("\x1c3")
	shown("3")
	c.send("\x1cl")
	shown("1")
	c.send("\x1cl")
	shown("3")
}

// TestRepeatResize checks that after prefix C-Left more C-Lefts move the
// border again without the prefix within the repeat time, and go to the
// tab after it.
func TestRepeatResize(t *testing.T) {
	c, _, clock := habitClient(t, 1, config.Config{})
	c.send("\x1c%")
	c.waitFor("the border at 40", func(string) bool { return strings.IndexRune(c.row(3), '│') == 40 })
	border := func() int { return len([]rune(c.row(3)[:max(strings.IndexRune(c.row(3), '│'), 0)])) }
	c.send("\x1c\x1b[1;5D\x1b[1;5D\x1b[1;5D")
	c.waitFor("the border moved three times", func(string) bool { return border() == 34 })
	c.send("\x1b[1;5D")
	c.waitFor("and a fourth", func(string) bool { return border() == 32 })
	clock.add(time.Second)
	c.send("\x1b[1;5D") // past the repeat time: to the tab
	c.send("\x1c\x1b[1;5C")
	c.waitFor("prefix C-Right", func(string) bool { return border() == 34 })
	c.send("\x1b[D") // not repeatable: ends the repeat, goes to the tab
	c.send("\x1b[1;5C")
	c.send("\x1c\x1b[1;5C")
	c.waitFor("one more prefix C-Right only", func(string) bool { return border() == 36 })

	off, _, _ := habitClient(t, 1, config.Config{RepeatTime: new(int)})
	off.send("\x1c%")
	off.waitFor("the border", func(string) bool { return strings.IndexRune(off.row(3), '│') == 40 })
	off.send("\x1c\x1b[1;5D\x1b[1;5D")
	off.send("\x1c\x1b[1;5D")
	off.waitFor("two moves, repeat off", func(string) bool { return strings.IndexRune(off.row(3), '│') == 36 })
}

// TestCopyPageUpAndBuffers checks prefix PgUp, what w, b, e, V and
// Ctrl-V copy (each copy a buffer), and prefix = pasting an older one.
func TestCopyPageUpAndBuffers(t *testing.T) {
	c, _, _ := habitClient(t, 1, config.Config{})
	c.send("clear; seq 1 100\r")
	c.waitFor("100", func(string) bool { return c.row(21) == "100" })
	c.send("\x1c\x1b[5~")
	c.waitFor("a page up", func(string) bool { return strings.Contains(c.row(23), "[scroll") && c.row(0) == "57" })
	c.send("q")
	c.send("clear; printf 'foo.bar baz_qux  end\\nsecond line here\\nthird-x y\\n'\r")
	c.waitFor("the lines", func(string) bool { return c.row(2) == "third-x y" })
	copies := []struct {
		keys string // after prefix [ and kkk0: the cursor on "foo"
		want string
	}{
		{"wwve", "bar"},
		{"$bve", "end"},
		{"Vj", "foo.bar baz_qux  end\nsecond line here\n"},
		{"ww\x16jjll", "bar\nnd \nd-x"},
		{"wwwbvwe", "bar baz_qux"},
	}
	for i, cp := range copies {
		c.send("\x1c[kkk0" + cp.keys + "y")
		eventually(t, "copy "+cp.keys, func() bool {
			b, _ := c.o.Buffers.Newest()
			return b.Name == fmt.Sprintf("buffer%d", i)
		})
		if b, _ := c.o.Buffers.Newest(); b.Text != cp.want {
			t.Errorf("%q copied %q, want %q", cp.keys, b.Text, cp.want)
		}
	}
	c.send("echo X")
	c.send("\x1c=")
	c.waitFor("the buffer list", func(s string) bool { return strings.Contains(s, "buffer4: 11 characters: bar baz_qux") })
	c.send("jjjj\r\r")
	c.waitFor("buffer0 pasted", func(s string) bool { return strings.Contains(s, "\nXbar\n") })
	c.send("\x1c=d")
	c.waitFor("buffer4 deleted", func(s string) bool { return !strings.Contains(s, "buffer4") && strings.Contains(s, "buffer3") })
}

// TestKeyListHabits checks the key list's rows for the habits: commands
// sharing a help text share its row wherever they sit in the table, and
// a key bound to a command line shows the line.
func TestKeyListHabits(t *testing.T) {
	list := keyList(config.Config{Keys: map[string]string{"M": "rename-tab build"}}.Bindings())
	rows := map[string]string{}
	for _, r := range list {
		rows[r[0]] = r[1]
	}
	tests := []struct{ keys, help string }{
		{"prefix [ PPage", "copy mode: scroll, search"},
		{"prefix q", "leave copy mode (or q alone)"},
		{"prefix ] =", "paste newest / choose a copy"},
		{"prefix :", "prompt: any command by name"},
		{"prefix l ; L", "last tab / pane / window"},
		{"prefix , $", "rename the tab / window"},
		{"prefix { }", "swap pane with prev / next"},
		{"prefix M", "rename-tab build"},
	}
	for _, tt := range tests {
		if got := rows[tt.keys]; got != tt.help {
			t.Errorf("key list row %q: %q, want %q", tt.keys, got, tt.help)
		}
	}
}
