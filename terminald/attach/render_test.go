package attach

import (
	"slices"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// source is a screen with every kind of cell the renderer must carry.
func source(t *testing.T) *screen.Screen {
	t.Helper()
	s := screen.New(screen.Options{Cols: 40, Rows: 8, Scrollback: -1})
	s.Write([]byte("plain \x1b[1mbold\x1b[0m \x1b[3;4mit-ul\x1b[0m \x1b[7minv\x1b[0m \x1b[9;53mstrike\x1b[0m\r\n"))
	s.Write([]byte("\x1b[31mred\x1b[92mgreen\x1b[44mbluebg\x1b[0m \x1b[38;5;208morange\x1b[48;5;240mgrey\x1b[0m\r\n"))
	s.Write([]byte("\x1b[38;2;10;200;30mrgb\x1b[48;2;250;250;250mwhite\x1b[0m \x1b[2;5;8mdbh\x1b[0m \x1b[21mdu\x1b[4:3mcu\x1b[0m\r\n"))
	s.Write([]byte("wide: 漢字 and 🙂 e\u0301 end\r\n"))
	s.Write([]byte("\x1b[41m   \x1b[0m trailing bg\x1b[42m\x1b[K\x1b[0m \x1b[4:4;58:5:9mdot\x1b[4:5;58:2::1:2:3mdash\x1b[0m\r\n"))
	s.Write([]byte("\x1b[6;38H漢字")) // a wide character in the last columns
	return s
}

// roundTrip renders every row of src with r into a fresh screen.
func roundTrip(src *screen.Screen, r *Renderer) *screen.Screen {
	cols, rows := src.Size()
	dst := screen.New(screen.Options{Cols: cols, Rows: rows, Scrollback: -1})
	var b []byte
	for y := range rows {
		b = r.Row(b, y, cols, src.Row(y))
	}
	dst.Write(b)
	return dst
}

func TestRendererRoundTripTrueColor(t *testing.T) {
	src := source(t)
	dst := roundTrip(src, &Renderer{TrueColor: true, UnderlineColor: true})
	_, rows := src.Size()
	for y := range rows {
		if want, got := src.Row(y), dst.Row(y); !slices.Equal(want, got) {
			t.Errorf("row %d:\nwant %v\n got %v", y, want, got)
		}
	}
}

func TestRendererDowngradesFor256(t *testing.T) {
	src := source(t)
	dst := roundTrip(src, &Renderer{})
	down := func(c screen.Color) screen.Color {
		if r, g, b, ok := c.RGB(); ok {
			return screen.IndexedColor(screen.Nearest256(r, g, b))
		}
		return c
	}
	_, rows := src.Size()
	for y := range rows {
		want := src.Row(y)
		for i := range want {
			want[i].Style.Fg, want[i].Style.Bg = down(want[i].Style.Fg), down(want[i].Style.Bg)
			want[i].Style.Underline = 0 // the zero Renderer sends no underline colour
		}
		if got := dst.Row(y); !slices.Equal(want, got) {
			t.Errorf("row %d:\nwant %v\n got %v", y, want, got)
		}
	}
	// No 24-bit sequence reaches a 256-colour client.
	var b []byte
	r := &Renderer{}
	for y := range rows {
		b = r.Row(b, y, 40, src.Row(y))
	}
	if strings.Contains(string(b), "38;2;") || strings.Contains(string(b), "48;2;") {
		t.Errorf("256-colour output contains truecolor: %q", b)
	}
}

func TestRendererModes(t *testing.T) {
	var r Renderer
	b := r.Modes(nil, screen.Modes{BracketedPaste: true, AppCursor: true, Mouse: screen.MouseButton, MouseEncoding: screen.MouseEncodingSGR})
	for _, want := range []string{"\x1b[?2004h", "\x1b[?1h", "\x1b[?1002h", "\x1b[?1006h"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("modes %q lack %q", b, want)
		}
	}
	if b := r.Modes(nil, screen.Modes{BracketedPaste: true, AppCursor: true, Mouse: screen.MouseButton, MouseEncoding: screen.MouseEncodingSGR}); len(b) != 0 {
		t.Errorf("unchanged modes sent again: %q", b)
	}
	b = r.ResetModes(nil)
	for _, want := range []string{"\x1b[?2004l", "\x1b[?1l", "\x1b[?1002l", "\x1b[?1006l"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("reset %q lacks %q", b, want)
		}
	}
}

func TestParsePrefix(t *testing.T) {
	for in, want := range map[string]byte{"": 0x1c, "C-\\": 0x1c, "C-a": 1, "C-b": 2, "^B": 2, "C-]": 0x1d} {
		if got, err := ParsePrefix(in); err != nil || got != want {
			t.Errorf("ParsePrefix(%q) = %#x, %v; want %#x", in, got, err, want)
		}
	}
	for _, bad := range []string{"C-1", "Ctrl-a", "ab"} {
		if _, err := ParsePrefix(bad); err == nil {
			t.Errorf("ParsePrefix(%q) accepted", bad)
		}
	}
}

func TestStatusLine(t *testing.T) {
	si := StatusInfo{
		Window: "main",
		Tabs: []workspace.Terminal{
			{ID: "t1", Title: "bash", Idle: true},
			{ID: "t2", Title: "server", GroupID: "g1", DevServerPorts: []uint16{3000, 3001}},
			{ID: "t3", Title: "claude", GroupID: "g1", Icon: "🤖", AgentState: workspace.AgentWorking, Idle: true},
			{ID: "t4", Title: "gone", Exited: true, ExitCode: 2},
			{ID: "t5", Title: "editor", Editor: true},
			{ID: "t6", Title: "codex", Idle: true, AgentState: workspace.AgentIdle, UnsandboxedAgent: true},
		},
		Groups:  map[string]workspace.Group{"g1": {ID: "g1", Name: "api", Color: "purple"}},
		Focused: "t2",
	}
	text := func(cells []screen.Cell) string {
		var b strings.Builder
		for _, c := range cells {
			b.WriteString(c.String())
		}
		return b.String()
	}
	cells := StatusLine(si, 100)
	got := text(cells)
	for _, want := range []string{"1:bash ", "api", "2:server* " + markBusy + " :3000+", "3:🤖 claude " + markAgent, "4:gone " + markExited + "2", "5:editor " + markBusy + " " + markEditor, "6:codex " + markAgentIdl + " " + markOpen, "main"} {
		if !strings.Contains(got, want) {
			t.Errorf("status line %q lacks %q", got, want)
		}
	}
	if len(cells) != 100 {
		t.Errorf("status line is %d cells, want 100", len(cells))
	}
	// The group's colour: the nearest 256-colour index of purple, RGB with truecolor.
	has := func(cells []screen.Cell, c screen.Color) bool {
		return slices.ContainsFunc(cells, func(cl screen.Cell) bool { return cl.Style.Bg == c })
	}
	if n := screen.Nearest256(0xa3, 0x71, 0xf7); !has(cells, screen.IndexedColor(n)) {
		t.Errorf("status line has no cell on the group's colour %d", n)
	}
	si.TrueColor = true
	if !has(StatusLine(si, 100), screen.RGBColor(0xa3, 0x71, 0xf7)) {
		t.Errorf("truecolor status line has no cell on the group's #a371f7")
	}
	// A narrow client still shows the focused tab; sheets are announced.
	si.Sheets = 2
	si.Focused = "t4"
	got = text(StatusLine(si, 40))
	if !strings.Contains(got, "4:gone*") || !strings.Contains(got, "2 sheets") {
		t.Errorf("narrow status line %q: want the focused tab and the sheet marker", got)
	}
	// A title cannot smuggle escape sequences.
	si.Tabs[0].Title = "evil\x1b]52;c;aGk=\x07"
	if got := text(StatusLine(si, 100)); strings.ContainsRune(got, 0x1b) {
		t.Errorf("status line carries an escape: %q", got)
	}
}
