package editor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestOpen: open_file and open_file_in_split in a real Neovim, with the
// line clamped, a missing file refused unless create, and splits placed.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", 100)
	tests := []struct {
		name      string
		spec      OpenSpec
		wantLine  int
		wantPanes int
		wantNote  string
		wantErr   error
	}{
		{"focused pane at a line", OpenSpec{Path: "a.txt", Line: 50}, 50, 1, "", nil},
		{"past the end is clamped", OpenSpec{Path: "a.txt", Line: 500}, 100, 1, "line clamped to 100", nil},
		{"split right", OpenSpec{Path: "a.txt", Line: 7, Split: Right}, 7, 2, "", nil},
		{"split below", OpenSpec{Path: "a.txt", Split: Below}, 0, 2, "", nil},
		{"missing file", OpenSpec{Path: "nope.txt"}, 0, 1, "", errdefs.ErrNotFound},
		{"missing file, create", OpenSpec{Path: "new.txt", Create: true}, 0, 1, "does not exist: opened an empty buffer", nil},
		{"a directory", OpenSpec{Path: "."}, 0, 1, "", errdefs.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := headless(t)
			tt.spec.Dir = dir
			o, err := e.Open(ctxT(t), tt.spec)
			if tt.wantErr != nil {
				if !errdefs.Is(err, tt.wantErr) {
					t.Fatalf("Open(%+v) = %v, want %v", tt.spec, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, tt.spec.Path)
			if o.Pane.File.Path != want || !o.Pane.Focused || o.Line != tt.wantLine || (tt.wantLine > 0 && o.Pane.Cursor != tt.wantLine) {
				t.Errorf("Open(%+v) = %+v, want %s focused at line %d", tt.spec, o, want, tt.wantLine)
			}
			if tt.wantLine > 0 && (o.Pane.Top > tt.wantLine || o.Pane.Bottom < tt.wantLine) {
				t.Errorf("line %d not on screen: %d-%d", tt.wantLine, o.Pane.Top, o.Pane.Bottom)
			}
			if got := strings.Join(o.Notes, "; "); !strings.Contains(got, tt.wantNote) || (tt.wantNote == "" && got != "") {
				t.Errorf("notes %q, want %q", got, tt.wantNote)
			}
			s, err := e.State(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Panes) != tt.wantPanes {
				t.Fatalf("%d panes %+v, want %d", len(s.Panes), s.Panes, tt.wantPanes)
			}
			if tt.spec.Split == Right && !(s.Panes[1].Col > s.Panes[0].Col && s.Panes[1].Row == s.Panes[0].Row) ||
				tt.spec.Split == Below && !(s.Panes[1].Row > s.Panes[0].Row && s.Panes[1].Col == s.Panes[0].Col) {
				t.Errorf("split %s: panes %+v", tt.spec.Split, s.Panes)
			}
			if tt.spec.Create {
				if _, err := os.Stat(want); !os.IsNotExist(err) {
					t.Errorf("create wrote %s to disk: %v", want, err)
				}
			}
		})
	}
}

// TestReveal: the line is under the cursor, centred, and marked by the one
// sign of group "phantom", which the next reveal moves.
func TestReveal(t *testing.T) {
	e, c := headless(t)
	dir := t.TempDir()
	a := writeFile(t, dir, "a.txt", 200)
	b := writeFile(t, dir, "b.txt", 10)
	signs := func() map[string]int {
		var placed []struct {
			Bufnr int `msgpack:"bufnr"`
			Signs []struct {
				Lnum int `msgpack:"lnum"`
			} `msgpack:"signs"`
		}
		if err := c.Call(ctxT(t), "nvim_call_function", &placed, "sign_getplaced", []any{"", map[string]any{"group": "phantom"}}); err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, p := range placed {
			for _, s := range p.Signs {
				var name string
				c.Call(ctxT(t), "nvim_call_function", &name, "bufname", []any{p.Bufnr})
				out[name] = s.Lnum
			}
		}
		return out
	}
	o, err := e.Reveal(ctxT(t), RevealSpec{Path: "a.txt", Dir: dir, Line: 120, Message: "look"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Pane.Cursor != 120 || o.Pane.Top > 120 || o.Pane.Bottom < 120 {
		t.Fatalf("Reveal a.txt:120 = %+v", o.Pane)
	}
	if mid := (o.Pane.Top + o.Pane.Bottom) / 2; mid < 119 || mid > 121 {
		t.Errorf("line 120 not centred: %d-%d", o.Pane.Top, o.Pane.Bottom)
	}
	if got := signs(); len(got) != 1 || got[a] != 120 {
		t.Fatalf("signs %v, want %s:120", got, a)
	}
	o, err = e.Reveal(ctxT(t), RevealSpec{TabID: "2", Line: 99})
	if err == nil && o.Pane.File.Path != a {
		t.Errorf("reveal by tab 2 = %+v", o)
	}
	if _, err := e.Reveal(ctxT(t), RevealSpec{Path: b, Line: 50}); err != nil {
		t.Fatal(err)
	}
	if got := signs(); len(got) != 1 || got[b] != 10 {
		t.Fatalf("after the next reveal, signs %v, want only %s:10 (clamped)", got, b)
	}
	for _, bad := range []RevealSpec{{Line: 1}, {Path: "a.txt", TabID: "2", Dir: dir, Line: 1}, {TabID: "99", Line: 1}, {TabID: "x", Line: 1}} {
		if _, err := e.Reveal(ctxT(t), bad); err == nil {
			t.Errorf("Reveal(%+v) succeeded", bad)
		}
	}
}

// TestCloseTab: a modified file is refused, then with force kept hidden
// with its changes; an unmodified one is gone.
func TestCloseTab(t *testing.T) {
	e, c := headless(t)
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", 5)
	writeFile(t, dir, "b.txt", 5)
	oa, _ := e.Open(ctxT(t), OpenSpec{Path: "a.txt", Dir: dir})
	ob, err := e.Open(ctxT(t), OpenSpec{Path: "b.txt", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The human edits b.
	if err := c.Call(ctxT(t), "nvim_buf_set_lines", nil, ob.Pane.File.TabID, 0, 1, false, []string{"human's edit"}); err != nil {
		t.Fatal(err)
	}
	bID := strconv.Itoa(ob.Pane.File.TabID)
	if _, _, err := e.CloseTab(ctxT(t), bID, false); !errdefs.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "unsaved changes") {
		t.Fatalf("CloseTab(modified) = %v, want a refusal", err)
	}
	f, kept, err := e.CloseTab(ctxT(t), bID, true)
	if err != nil || !kept || !f.Modified {
		t.Fatalf("CloseTab(modified, force) = %+v %v %v, want kept", f, kept, err)
	}
	var line []string
	if err := c.Call(ctxT(t), "nvim_buf_get_lines", &line, ob.Pane.File.TabID, 0, 1, false); err != nil || line[0] != "human's edit" {
		t.Fatalf("the human's edit after a forced close: %q %v", line, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); strings.Contains(string(b), "human") {
		t.Fatal("close_tab wrote the buffer to disk")
	}
	if _, _, err := e.CloseTab(ctxT(t), strconv.Itoa(oa.Pane.File.TabID), false); err != nil {
		t.Fatal(err)
	}
	s, _ := e.State(ctxT(t))
	for _, tab := range s.Tabs {
		if tab.Path != "" {
			t.Errorf("after closing both, tab %+v is still listed", tab)
		}
	}
	if _, _, err := e.CloseTab(ctxT(t), bID, true); !errdefs.Is(err, errdefs.ErrNotFound) {
		t.Errorf("closing a closed tab = %v, want not found", err)
	}
}

// TestFocusTabInInsertMode: focusing a tab and revealing a line leave a
// human in insert mode in insert mode, and list_panes sees both panes.
func TestFocusTabInInsertMode(t *testing.T) {
	e, c := headless(t)
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", 30)
	writeFile(t, dir, "b.txt", 30)
	oa, _ := e.Open(ctxT(t), OpenSpec{Path: "a.txt", Dir: dir})
	ob, err := e.Open(ctxT(t), OpenSpec{Path: "b.txt", Dir: dir, Split: Below})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctxT(t), "nvim_input", nil, "ityping"); err != nil {
		t.Fatal(err)
	}
	p, err := e.FocusTab(ctxT(t), strconv.Itoa(oa.Pane.File.TabID))
	if err != nil || p.File.TabID != oa.Pane.File.TabID || !p.Focused || p.ID == ob.Pane.ID {
		t.Fatalf("FocusTab(a) = %+v %v, want a's own pane focused", p, err)
	}
	if _, err := e.Reveal(ctxT(t), RevealSpec{TabID: strconv.Itoa(ob.Pane.File.TabID), Line: 20}); err != nil {
		t.Fatal(err)
	}
	s, err := e.State(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != "i" || len(s.Panes) != 2 || len(s.Tabs) < 2 {
		t.Fatalf("state %+v, want insert mode, 2 panes, 2 tabs", s)
	}
	if _, err := e.FocusTab(ctxT(t), "999"); !errdefs.Is(err, errdefs.ErrNotFound) {
		t.Errorf("FocusTab(999) = %v, want not found", err)
	}
}
