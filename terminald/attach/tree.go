package attach

import (
	"fmt"
	"os"
	"strings"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// The tree of prefix w, as tmux's choose-tree: every window, and under
// each its status line's entries — each pane's tab, numbered as the CLI
// takes it (2, or 1.2 for the second pane of entry 1) — with their
// directory and running program;
// the client's window is open, the others closed until → (or l) opens
// them. Enter goes to the highlighted window or tab (switching windows
// when it is another's), x asks to close it, % and " show a tab of this
// window in a split beside or below the focused pane, Esc or q leave.

// treeState is the tree's state while it is open; s.chosen is the
// highlighted row.
type treeState struct {
	open map[string]bool // the windows shown open, by id
}

// treeRow is one row of the tree: a window, or one of its tabs.
type treeRow struct {
	win   workspace.Window
	tab   *workspace.Terminal // nil for the window's own row
	place string              // the tab's place among the window's entries: "2", "1.2"
}

// treeRows are the tree's rows as the workspace is now.
func (s *session) treeRows() []treeRow {
	byID := map[string]workspace.Terminal{}
	for _, t := range s.ws.List() {
		byID[t.ID] = t
	}
	var rows []treeRow
	for _, w := range s.ws.Windows() {
		rows = append(rows, treeRow{win: w})
		if !s.tree.open[w.ID] {
			continue
		}
		es, _ := s.ws.Entries(w.ID)
		for _, e := range es {
			for _, id := range e.Tabs() {
				if t, ok := byID[id]; ok {
					rows = append(rows, treeRow{win: w, tab: &t, place: entryPlace(es, id)})
				}
			}
		}
	}
	return rows
}

// openTree opens the tree on the shown tab, the client's window open.
func (s *session) openTree() {
	s.leaveCopy()
	s.tree.open = map[string]bool{s.winID: true}
	s.mode, s.needFull = modeChoose, true
	s.chosen = 0
	for i, r := range s.treeRows() {
		if r.tab != nil && r.tab.ID == s.tabID || r.tab == nil && r.win.ID == s.winID && s.chosen == 0 {
			s.chosen = i
		}
	}
}

// chooseBox draws the tree, the highlighted row in inverse video.
func (s *session) chooseBox() *sheetBox {
	inner := max(min(s.cols-4, 72), 1)
	rows := s.treeRows()
	s.chosen = min(max(s.chosen, 0), len(rows)-1)
	// The list scrolls to keep the highlighted row in view; two rows for
	// the border, one for the keys.
	room := max(s.rows-1-3, 1)
	first := max(min(s.chosen-room/2, len(rows)-room), 0)
	labelW := 0
	for _, r := range rows {
		if r.tab != nil {
			labelW = max(labelW, plainWidth(entryLabel(*r.tab, r.place)))
		}
	}
	labelW = min(labelW, 34)
	var body [][]screen.Cell
	for i := first; i < len(rows) && i < first+room; i++ {
		st := stylePlain
		if i == s.chosen {
			st = styleChosen
		}
		body = wrap(body, []span{{s.treeLine(rows[i], labelW), st}}, inner, len(body)+1)
	}
	body = wrap(body, []span{{"↑↓", styleBold}, {" move ", stylePlain}, {"→←", styleBold}, {" open ", stylePlain},
		{"Enter", styleBold}, {" go ", stylePlain}, {"x", styleBold}, {" close ", stylePlain},
		{"% \"", styleBold}, {" split ", stylePlain}, {"Esc", styleBold}, {" leave", stylePlain}}, inner, len(body)+1)
	return s.placeBox(body, " windows ")
}

// treeLine is one row's text: a window's name, id and tab count (* marks
// the client's window), or a tab's place and title, directory and
// running program.
func (s *session) treeLine(r treeRow, labelW int) string {
	if r.tab == nil {
		sign := "▸ "
		if s.tree.open[r.win.ID] {
			sign = "▾ "
		}
		tabs := fmt.Sprintf("%d tabs", len(r.win.TabIDs))
		if len(r.win.TabIDs) == 1 {
			tabs = "1 tab"
		}
		line := sign + windowLabel(r.win.ID, r.win.Name) + "  " + tabs
		if r.win.ID == s.winID {
			line += "  *"
		}
		return line
	}
	label := entryLabel(*r.tab, r.place)
	if w := plainWidth(label); w < labelW {
		label += strings.Repeat(" ", labelW-w)
	}
	return "    " + label + "  " + cutLeft(homeDir(sanitize(r.tab.Directory)), 30) + "  " + sanitize(r.tab.ForegroundName)
}

// entryLabel is a tab by its place among the entries, with its marks
// and its id (what agents and the CLI call it).
func entryLabel(t workspace.Terminal, place string) string {
	title := sanitize(t.Title)
	if title == "" {
		title = t.ID
	}
	if r := []rune(title); len(r) > maxTitle {
		title = string(r[:maxTitle-1]) + "…"
	}
	return place + ":" + title + stateMarks(t) + " (" + t.ID + ")"
}

// homeDir writes dir under the home directory as ~/….
func homeDir(dir string) string {
	home := os.Getenv("HOME")
	switch {
	case home == "" || home == "/":
	case dir == home:
		return "~"
	case strings.HasPrefix(dir, home+"/"):
		return "~" + dir[len(home):]
	}
	return dir
}

// plainWidth is how many cells s, text without escape sequences, takes
// (textWidth, which reads them, costs a screen a call).
func plainWidth(s string) int {
	n := 0
	for _, r := range s {
		n += cellWidth(r)
	}
	return n
}

// cutLeft keeps the last n characters of s, … before them: a path's end
// says the most.
func cutLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// chooseKeys moves through the tree and returns the bytes left over when
// a key closes it.
func (s *session) chooseKeys(b []byte) []byte {
	for len(b) > 0 && s.mode == modeChoose {
		rows := s.treeRows()
		s.chosen = min(max(s.chosen, 0), len(rows)-1)
		var r treeRow
		if s.chosen >= 0 {
			r = rows[s.chosen]
		}
		n := 1
		key := string(b[:1])
		if b[0] == 0x1b && len(b) > 1 {
			n = escLen(b)
			key = string(b[:n])
		}
		switch key {
		case "q", "\x03", "\x1b":
			s.mode, s.needFull = modeNormal, true
		case "\x1b[A", "\x1bOA", "k":
			s.chosen = max(s.chosen-1, 0)
		case "\x1b[B", "\x1bOB", "j":
			s.chosen = min(s.chosen+1, len(rows)-1)
		case "\x1b[C", "\x1bOC", "l", "+":
			if r.tab == nil && r.win.ID != "" {
				if s.tree.open[r.win.ID] && len(r.win.TabIDs) > 0 {
					s.chosen++
				}
				s.tree.open[r.win.ID] = true
			}
		case "\x1b[D", "\x1bOD", "h", "-":
			if r.win.ID != "" {
				s.tree.open[r.win.ID] = false
				s.chosen = s.windowRow(r.win.ID)
			}
		case "\r", "\n":
			s.mode, s.needFull = modeNormal, true
			switch {
			case r.win.ID == "":
			case r.tab == nil:
				s.switchWindow(r.win.ID, "")
			default:
				s.switchWindow(r.win.ID, r.tab.ID)
			}
		case "x":
			s.mode, s.needFull = modeNormal, true
			switch {
			case r.win.ID == "":
			case r.tab == nil:
				s.askCloseWindow(r.win.ID)
			default:
				s.mode, s.confirmID, s.confirmWin = modeConfirm, r.tab.ID, ""
			}
		case "%", `"`:
			switch {
			case r.tab == nil:
			case r.win.ID != s.winID:
				s.setMessage(fmt.Sprintf("%% and \" split this window; %s is in window %s (Enter goes there)", r.tab.ID, windowLabel(r.win.ID, r.win.Name)))
			default:
				// Show the highlighted tab in a split beside (below) this one.
				s.mode, s.needFull = modeNormal, true
				s.splitWith(r.tab.ID, key == `"`)
			}
		case string(rune(s.o.Prefix)):
			s.mode, s.needFull = modeNormal, true
			s.prefixed = true
		}
		b = b[n:]
	}
	return b
}

// windowRow is the index of window id's own row in the tree.
func (s *session) windowRow(id string) int {
	for i, r := range s.treeRows() {
		if r.tab == nil && r.win.ID == id {
			return i
		}
	}
	return 0
}
