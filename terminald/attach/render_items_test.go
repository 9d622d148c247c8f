package attach

import (
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// TestStateMarks checks a tab's marks on the status line: a program that
// ended well says so apart from one that failed.
func TestStateMarks(t *testing.T) {
	for _, c := range []struct {
		name string
		tab  workspace.Terminal
		want string
	}{
		{"idle", workspace.Terminal{Idle: true}, ""},
		{"busy", workspace.Terminal{}, " " + markBusy},
		{"ended well", workspace.Terminal{Exited: true}, " " + markExitOK},
		{"ended failing", workspace.Terminal{Exited: true, ExitCode: 3}, " " + markExited + "3"},
		{"killed by a signal", workspace.Terminal{Exited: true, ExitCode: 137}, " " + markExited + "137"},
		{"editor, agent working", workspace.Terminal{Idle: true, Editor: true, AgentState: workspace.AgentWorking}, " " + markEditor + " " + markAgent},
		{"ports", workspace.Terminal{Idle: true, DevServerPorts: []uint16{8080, 9090}}, " :8080+"},
	} {
		if got := stateMarks(c.tab); got != c.want {
			t.Errorf("%s: stateMarks = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestStatusZoomMark checks the zoom flag in a split entry's pane count.
func TestStatusZoomMark(t *testing.T) {
	tabs := []workspace.Terminal{{ID: "t1", Title: "one", Idle: true}, {ID: "t2", Title: "two", Idle: true}}
	for _, c := range []struct {
		name   string
		zoomed bool
		want   string
		not    string
	}{
		{"zoomed", true, "2:two[2" + markZoomed + "]* ", ""},
		{"not zoomed", false, "2:two[2]* ", markZoomed + "]"},
	} {
		panes := []string{"", "2"}
		if c.zoomed {
			panes[1] += markZoomed
		}
		line := cellsText(StatusLine(StatusInfo{Tabs: tabs, Panes: panes, Focused: "t2"}, 60))
		if !strings.Contains(line, c.want) || c.not != "" && strings.Contains(line, c.not) {
			t.Errorf("%s: status line %q, want %q in it", c.name, line, c.want)
		}
	}
}

// TestKeyListDescriptions checks lines of the key list: q leaves copy
// mode (it does not enter it), and the legend names every mark.
func TestKeyListDescriptions(t *testing.T) {
	list := keyList(config.Config{}.Bindings())
	for _, c := range []struct{ key, want, not string }{
		{"prefix [ PPage", "copy mode", "leave"},
		{"prefix q", "leave copy mode", "scroll"},
	} {
		found := false
		for _, l := range list {
			if l[0] == c.key {
				found = true
				if !strings.Contains(l[1], c.want) || strings.Contains(l[1], c.not) {
					t.Errorf("%s: %q, want %q and not %q", c.key, l[1], c.want, c.not)
				}
			}
		}
		if !found {
			t.Errorf("no line for %s in %q", c.key, list)
		}
	}
	seen := map[string]bool{}
	for _, m := range markLegend {
		if seen[m.mark] || m.means == "" {
			t.Errorf("legend entry %q repeated or empty", m.mark)
		}
		seen[m.mark] = true
	}
	for _, mark := range []string{markBusy, markExitOK, markExited + "3", markEditor, markAgent, markAgentIdl, markAgentAsk, markOpen, "[2" + markZoomed + "]"} {
		if !seen[mark] {
			t.Errorf("mark %q has no line in markLegend", mark)
		}
	}
}

// TestWindowLabel checks how the detach message names the window.
func TestWindowLabel(t *testing.T) {
	for _, c := range []struct{ name, id, want string }{
		{"build", "w1", "build (w1)"},
		{"", "w2", "w2"},
		{"\x1b[31m", "w3", "[31m (w3)"},
		{"\x07", "w4", "w4"},
	} {
		if got := windowLabel(c.id, c.name); got != c.want {
			t.Errorf("windowLabel(%q, %q) = %q, want %q", c.name, c.id, got, c.want)
		}
	}
}

// TestSearchClearsNotFound checks that a search that finds its text
// takes away what an earlier failed search said: the frame that moves the
// cursor to the match no longer says "not found".
func TestSearchClearsNotFound(t *testing.T) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	c := startClient(t, ws, Hello{Cols: 80, Rows: 12})
	c.waitText("1:")
	c.send("clear; printf 'alpha\\nbeta\\n'\r")
	c.waitFor("the output", func(string) bool { return c.row(0) == "alpha" && c.row(1) == "beta" })
	// frame is the status line and the cursor, read from one frame.
	frame := func() (string, int, int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		cur := c.scr.Cursor()
		return cellsText(c.scr.Row(11)), cur.X, cur.Y
	}
	c.send("\x1c[")
	c.waitFor("copy mode", func(string) bool { st, _, _ := frame(); return strings.Contains(st, "[scroll") })
	for _, step := range []struct {
		name   string
		search string
		x, y   int // where a search that finds puts the cursor
	}{
		{"a search that finds beta", "beta", 0, 1},
		{"a search that finds alpha", "alpha", 0, 0},
	} {
		c.send("?zzqx\r")
		c.waitFor("not found", func(string) bool { st, _, _ := frame(); return strings.Contains(st, "not found: zzqx") })
		c.send("?" + step.search + "\r")
		c.waitFor(step.name, func(string) bool { _, x, y := frame(); return x == step.x && y == step.y })
		if st, _, _ := frame(); strings.Contains(st, "not found") || !strings.Contains(st, "[scroll") {
			t.Errorf("%s: the status line still says %q", step.name, st)
		}
	}
}

// TestHelpBoxLegend checks that prefix ? shows every key and the marks'
// legend, and the legend still on a 24-row terminal.
func TestHelpBoxLegend(t *testing.T) {
	ws := newWorkspace(t)
	if _, err := ws.Create(workspace.CreateSpec{Directory: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rows int
		want []string
	}{
		{40, []string{"n p      next / previous entry", "leave copy mode", "any key closes this list"}},
		{24, []string{"any key closes this list"}},
	} {
		cl := startClient(t, ws, Hello{Cols: 80, Rows: c.rows})
		cl.waitText("1:")
		cl.send("\x1c?")
		cl.waitText("status line")
		text := cl.text()
		for _, m := range markLegend {
			if !strings.Contains(text, m.mark+" "+m.means) {
				t.Errorf("%d rows: the key list lacks the legend of %q (%s):\n%s", c.rows, m.mark, m.means, text)
			}
		}
		for _, want := range c.want {
			if !strings.Contains(text, want) {
				t.Errorf("%d rows: the key list lacks %q:\n%s", c.rows, want, text)
			}
		}
		cl.send("\x1cd")
	}
}

// TestTrueColorDecision checks when a client gets 24-bit colour.
func TestTrueColorDecision(t *testing.T) {
	for _, c := range []struct {
		name  string
		mode  string
		color clientColor
		want  bool
	}{
		{"auto, nothing said", config.TrueColorAuto, clientColor{term: "xterm-256color"}, false},
		{"default is auto", "", clientColor{term: "xterm-256color", colorterm: "truecolor"}, true},
		{"auto, COLORTERM=truecolor", config.TrueColorAuto, clientColor{colorterm: "truecolor"}, true},
		{"auto, COLORTERM=24bit", config.TrueColorAuto, clientColor{colorterm: "24bit"}, true},
		{"auto, COLORTERM=yes", config.TrueColorAuto, clientColor{colorterm: "yes"}, false},
		{"auto, a direct-colour TERM", config.TrueColorAuto, clientColor{term: "xterm-direct"}, true},
		{"auto, XTGETTCAP RGB (over ssh)", config.TrueColorAuto, clientColor{term: "xterm-256color", announced: true}, true},
		{"on, nothing said", config.TrueColorOn, clientColor{term: "xterm-256color"}, true},
		{"off, all said", config.TrueColorOff, clientColor{term: "xterm-direct", colorterm: "truecolor", announced: true}, false},
	} {
		if got := trueColor(c.mode, c.color); got != c.want {
			t.Errorf("%s: trueColor = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRendererUnderlineColor checks that underline colours reach the
// client as SGR 58 (colon form), rounded for a 256-colour client, and
// not at all for a client that does not take them.
func TestRendererUnderlineColor(t *testing.T) {
	for _, c := range []struct {
		name   string
		r      Renderer
		in     string
		want   string // in the output
		not    string // not in it
		ul     screen.Color
		styled screen.Attr
	}{
		{"RGB, truecolor", Renderer{TrueColor: true, UnderlineColor: true}, "\x1b[4:3;58:2::255:0:0mX",
			"\x1b[58:2::255:0:0m", "", screen.RGBColor(255, 0, 0), screen.AttrCurlyUnderline},
		{"RGB, 256 colours", Renderer{UnderlineColor: true}, "\x1b[4;58:2::48:48:48mX",
			"\x1b[58:5:236m", "58:2", screen.IndexedColor(236), screen.AttrUnderline},
		{"indexed", Renderer{UnderlineColor: true}, "\x1b[21;58;5;196mX",
			"\x1b[58:5:196m", "", screen.IndexedColor(196), screen.AttrDoubleUnderline},
		{"no underline, no colour sent", Renderer{UnderlineColor: true}, "\x1b[58;5;196mX",
			"X", "58:", 0, 0},
		{"a client without it", Renderer{TrueColor: true}, "\x1b[4;58;5;196mX",
			"X", "58", 0, screen.AttrUnderline},
		{"dotted", Renderer{UnderlineColor: true}, "\x1b[4:4;58;5;196mX",
			";4:4m\x1b[58:5:196m", ";21", screen.IndexedColor(196), screen.AttrDottedUnderline},
		{"dashed, bold", Renderer{}, "\x1b[1;4:5mX",
			"\x1b[0;1;4:5m", ";4;", 0, screen.AttrBold | screen.AttrDashedUnderline},
	} {
		src := screen.New(screen.Options{Cols: 4, Rows: 1, Scrollback: -1})
		src.Write([]byte(c.in))
		out := string(c.r.Row(nil, 0, 4, src.Row(0)))
		if !strings.Contains(out, c.want) || c.not != "" && strings.Contains(out, c.not) {
			t.Errorf("%s: output %q, want %q and not %q", c.name, out, c.want, c.not)
		}
		dst := screen.New(screen.Options{Cols: 4, Rows: 1, Scrollback: -1})
		dst.Write([]byte(out))
		if got := dst.Row(0)[0].Style; got.Underline != c.ul || got.Attrs != c.styled {
			t.Errorf("%s: the client shows underline %#x attrs %#x, want %#x %#x", c.name, got.Underline, got.Attrs, c.ul, c.styled)
		}
	}
}

// TestTakesUnderlineColor checks which terminals get SGR 58.
func TestTakesUnderlineColor(t *testing.T) {
	for _, c := range []struct {
		term string
		want bool
	}{
		{"xterm-256color", true}, {"tmux-256color", true}, {"screen-256color", true}, {"xterm-kitty", true},
		{"foot", true}, {"alacritty", true}, {"xterm-direct", true},
		{"linux", false}, {"vt100", false}, {"vt220", false}, {"dumb", false}, {"", false}, {"cons25", false},
	} {
		if got := takesUnderlineColor(c.term); got != c.want {
			t.Errorf("takesUnderlineColor(%q) = %v, want %v", c.term, got, c.want)
		}
	}
}
