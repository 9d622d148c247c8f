package attach

import (
	"slices"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// TestEveryCommandRuns checks that the command table (config.Commands)
// and what attach does for each name are the same set.
func TestEveryCommandRuns(t *testing.T) {
	names := config.CommandNames()
	for _, n := range names {
		if commandFuncs[n] == nil {
			t.Errorf("command %q has no action in attach", n)
		}
	}
	for n := range commandFuncs {
		if !slices.Contains(names, n) {
			t.Errorf("attach runs %q, which config.Commands does not list", n)
		}
	}
}

// TestKeyListFollowsBindings checks that prefix ? lists the bindings in
// effect: added keys, replaced ones, unbound ones gone.
func TestKeyListFollowsBindings(t *testing.T) {
	c := config.Config{Keys: map[string]string{"|": "split-right", "x": "none", "C-t": "new-tab"}}
	list := keyList(c.Bindings())
	rows := map[string]string{}
	for _, r := range list {
		rows[r[1]] = r[0]
	}
	tests := []struct{ help, keys string }{
		{"split: new tab right / below", `prefix % | "`},
		{"new tab in this directory", "prefix C-t c"},
		{"entry by number", "prefix 1-9"},
		{"pane that way / next pane", "prefix arrows o"},
		{"close the tab (asks y/n)", ""},
	}
	for _, tt := range tests {
		if got := rows[tt.help]; got != tt.keys {
			t.Errorf("key list row %q: keys %q, want %q", tt.help, got, tt.keys)
		}
	}
}

// TestCommandUsesBindings checks dispatch by the table: a configured key
// runs its command, an unbound default key only says so.
func TestCommandUsesBindings(t *testing.T) {
	cfg := config.Config{Keys: map[string]string{"K": "list-keys", "?": "none"}}
	s := &session{o: Options{Prefix: DefaultPrefix, Live: NewLive(NewSettings(cfg))}, cols: 80, rows: 24}
	if err := s.command("?"); err != nil || s.mode != modeNormal || !strings.Contains(s.message, "no prefix key ?") {
		t.Errorf("unbound ?: mode %v, message %q, err %v", s.mode, s.message, err)
	}
	if err := s.command("K"); err != nil || s.mode != modeHelp {
		t.Errorf("K: mode %v, err %v; want the key list", s.mode, err)
	}
}

// TestStatusLineStyle checks config.json's status line: colours of the
// bar and of the shown tab, and the left and right texts.
func TestStatusLineStyle(t *testing.T) {
	cfg := config.Config{Status: config.Status{Left: "[#{host}] ", Right: "#{window_id}:#{tab}",
		Style: config.StatusStyle{BG: "#303030", FG: "#d0d0d0", ActiveBG: "red"}}}
	st := NewSettings(cfg)
	si := StatusInfo{
		Window: "main", Focused: "t2", TrueColor: true, Style: st,
		Tabs:      []workspace.Terminal{{ID: "t1", Title: "bash"}, {ID: "t2", Title: "vim"}},
		Left:      "[box] ",
		RightText: "w1:vim",
	}
	cells := StatusLine(si, 60)
	var b strings.Builder
	for _, c := range cells {
		b.WriteString(c.String())
	}
	got := b.String()
	if !strings.HasPrefix(got, "[box] ") || !strings.Contains(got, "w1:vim") {
		t.Errorf("status line %q: want the left and right texts", got)
	}
	bar := screen.RGBColor(0x30, 0x30, 0x30)
	if cells[0].Style.Bg != bar || cells[len(cells)-1].Style.Bg != bar {
		t.Errorf("bar background = %v … %v, want %v", cells[0].Style.Bg, cells[len(cells)-1].Style.Bg, bar)
	}
	i := strings.Index(got, "2:vim")
	if i < 0 || cells[i].Style.Bg != screen.IndexedColor(1) {
		t.Errorf("shown tab at %d: background %v, want red", i, cells[max(i, 0)].Style.Bg)
	}
}

// TestStatusLineLongLeft checks that a left-hand text wider than the
// client is cut, never breaks the line's width.
func TestStatusLineLongLeft(t *testing.T) {
	for _, cols := range []int{5, 20, 80} {
		si := StatusInfo{Window: "main", Focused: "t1", Left: strings.Repeat("L", 100),
			Tabs: []workspace.Terminal{{ID: "t1", Title: "bash"}}}
		if got := len(StatusLine(si, cols)); got != cols {
			t.Errorf("%d columns: the status line has %d cells", cols, got)
		}
	}
}

// TestStatusLineActiveOnly checks colours for the shown tab alone: the
// bar stays in inverse video, the shown tab gets its colours unswapped.
func TestStatusLineActiveOnly(t *testing.T) {
	st := NewSettings(config.Config{Status: config.Status{Style: config.StatusStyle{ActiveBG: "red", ActiveFG: "white"}}})
	si := StatusInfo{Window: "main", Focused: "t1", Style: st, Tabs: []workspace.Terminal{{ID: "t1", Title: "bash"}}}
	cells := StatusLine(si, 40)
	if cells[39].Style.Attrs&screen.AttrInverse == 0 {
		t.Errorf("bar style %+v, want inverse video", cells[39].Style)
	}
	c := cells[2] // "1:bash"
	if c.Style.Bg != screen.IndexedColor(1) || c.Style.Fg != screen.IndexedColor(7) || c.Style.Attrs&screen.AttrInverse != 0 {
		t.Errorf("shown tab style %+v, want white on red, not inverse", c.Style)
	}
}
