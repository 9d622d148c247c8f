package attach

import (
	"fmt"
	"slices"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// render builds one frame: the tab area's changed rows (diffed against
// what this client was last sent), composed of the visible panes and the
// borders between them, the status line, the input modes and the cursor,
// wrapped in synchronized-output marks so the client never shows half a
// frame.
func (s *session) render() []byte {
	b := append(s.out[:0], "\x1b[?2026h"...)
	area := s.rows - 1
	if s.needFull {
		s.r.Reset()
		b = s.r.ResetPen(b)
		b = append(b, "\x1b[H\x1b[2J"...)
		s.last = make([][]screen.Cell, area)
		s.lastS = nil
		for _, l := range s.root.leaves(nil) {
			l.pane.view.Invalidate()
		}
	}
	if len(s.last) != area {
		s.last = make([][]screen.Cell, area)
	}
	visible := s.visiblePanes()
	dirty := make([]bool, area)
	for _, p := range visible {
		if p == s.fp && s.mode == modeCopy {
			for y := p.r.y; y < min(p.r.y+p.r.h, area); y++ {
				dirty[y] = true
			}
			continue
		}
		p.view.Snapshot(&p.snap)
		if p.snap.Cols != p.shownCols || p.snap.Rows != p.shownRows {
			// The tab changed size (this or another client): start over.
			p.shownCols, p.shownRows = p.snap.Cols, p.snap.Rows
			if !s.needFull {
				s.needFull = true
				return s.render()
			}
		}
		if len(p.lines) != p.snap.Rows {
			p.lines = make([][]screen.Cell, p.snap.Rows)
		}
		for y, l := range p.snap.Lines {
			if l != nil {
				p.lines[y] = l
				if y < p.r.h && p.r.y+y < area {
					dirty[p.r.y+y] = true
				}
			}
		}
	}
	full := s.needFull
	s.needFull = false
	boxed := s.mode == modeSheet || s.mode == modeHelp || s.mode == modeChoose || s.mode == modeGrants || s.mode == modeBuffers
	var box *sheetBox
	if boxed {
		box = s.overlayBox()
	}
	var copyLines [][]screen.Cell
	if s.mode == modeCopy && s.fp != nil {
		copyLines, _ = s.fp.view.History(s.copy.top, s.fp.r.h)
	}
	for y := range area {
		if !full && !dirty[y] && !boxed {
			continue
		}
		row := s.composeRow(y, visible, copyLines)
		if boxed {
			row = box.overlay(y, row)
		}
		b = s.drawRow(b, y, row)
	}

	cursorX, cursorY, cursorOn := 0, 0, false
	switch {
	case s.fp == nil:
	case boxed:
		// Keys go to the box, not the program, so the program's input
		// modes are off meanwhile.
		b = s.r.ResetModes(b)
	case s.mode == modeCopy:
		c := &s.copy
		r := s.fp.r
		cursorX, cursorY = r.x+c.cx, r.y+c.cy-c.top
		cursorOn = c.cy >= c.top && c.cy < c.top+r.h && c.cx < r.w
	default:
		b = s.r.Modes(b, s.fp.snap.Modes)
		c, r := s.fp.snap.Cursor, s.fp.r
		cursorX, cursorY = r.x+c.X, r.y+c.Y
		cursorOn = c.Visible && c.X < r.w && c.Y < r.h
	}

	if s.statusStale || s.lastS == nil || s.mode == modeCopy {
		// (Copy mode's status counts the history lines, which output adds.)
		s.statusStale = false
		if st := s.statusLine(); !slices.Equal(st, s.lastS) {
			b = s.r.Row(b, area, s.cols, st)
			s.lastS = st
		}
	}
	if s.mode == modePrompt {
		cursorX, cursorY, cursorOn = min(textWidth(s.promptText())+1, s.cols-1), area, true
	}
	b = s.r.ResetPen(b)
	b = s.r.Cursor(b, cursorX, cursorY, cursorOn)
	b = append(b, "\x1b[?2026l"...)
	s.out = b
	return b
}

// Border styles: the focused pane's edges stand out.
var (
	borderStyle  = screen.Style{Fg: screen.IndexedColor(244)}
	borderActive = screen.Style{Fg: screen.IndexedColor(2), Attrs: screen.AttrBold}
)

// composeRow is row y of the area: each visible pane's part of it (the
// tab's row, or its history line in copy mode, padded to the tab's width
// and then filled to the pane's), borders between them.
func (s *session) composeRow(y int, visible []*pane, copyLines [][]screen.Cell) []screen.Cell {
	if len(visible) == 1 && visible[0].r == (rect{0, 0, s.cols, s.rows - 1}) {
		// One pane over the whole area: the row as it is, when the tab
		// is as large as the client (the common case allocates nothing).
		p := visible[0]
		return s.fillRow(s.paneRow(p, y, copyLines), y < p.r.y+min(p.snap.Rows, p.r.h) || copyLines != nil, p)
	}
	row := make([]screen.Cell, s.cols)
	for x := range row {
		row[x] = screen.Cell{Rune: ' ', Width: 1}
	}
	if !s.zoomed {
		for _, br := range borders(s.root, nil) {
			if y < br.y || y >= br.y+br.h {
				continue
			}
			for x := br.x; x < br.x+br.w && x < s.cols; x++ {
				r := '│'
				if br.h == 1 && br.w > 1 {
					r = '─'
				}
				st := borderStyle
				if s.fp != nil && touches(s.fp.r, x, y) {
					st = borderActive
				}
				row[x] = screen.Cell{Rune: r, Width: 1, Style: st}
			}
		}
	}
	for _, p := range visible {
		if y < p.r.y || y >= p.r.y+p.r.h {
			continue
		}
		cells := s.paneRow(p, y, copyLines)
		tabW := min(p.r.w, max(p.snap.Cols, 0))
		tab := copyLines != nil && p == s.fp || y-p.r.y < p.snap.Rows
		for x := range p.r.w {
			var c screen.Cell
			switch {
			case x < len(cells) && x < tabW && tab:
				c = cells[x]
				if c.Width == 2 && x+1 >= p.r.w {
					c = screen.Cell{Rune: ' ', Width: 1, Style: c.Style}
				}
			case x < tabW && tab:
				c = screen.Cell{Rune: ' ', Width: 1}
			default:
				c = fillCell
			}
			if p.r.x+x < s.cols {
				row[p.r.x+x] = c
			}
		}
	}
	return row
}

// touches reports whether border cell x, y lies along r's edge.
func touches(r rect, x, y int) bool {
	return (x == r.x-1 || x == r.x+r.w) && y >= r.y-1 && y <= r.y+r.h ||
		(y == r.y-1 || y == r.y+r.h) && x >= r.x-1 && x <= r.x+r.w
}

// paneRow is the row of pane p at area row y: the tab's, or in copy mode
// the focused pane's history line with the selection shown.
func (s *session) paneRow(p *pane, y int, copyLines [][]screen.Cell) []screen.Cell {
	i := y - p.r.y
	if p == s.fp && copyLines != nil {
		if i < len(copyLines) {
			return s.copyRow(copyLines[i], s.copy.top+i)
		}
		return nil
	}
	if i < len(p.lines) {
		return p.lines[i]
	}
	return nil
}

// drawRow draws row y of the tab area unless the client already shows it.
func (s *session) drawRow(b []byte, y int, cells []screen.Cell) []byte {
	if y >= len(s.last) {
		return b
	}
	if s.last[y] != nil && slices.Equal(s.last[y], cells) {
		return b
	}
	s.last[y] = cells
	if s.last[y] == nil {
		s.last[y] = []screen.Cell{}
	}
	return s.r.Row(b, y, s.cols, cells)
}

// fillCell marks the area a tab does not use (it is smaller: another
// client of the tab is): a dim dot, unlike anything a blank tab shows.
var fillCell = screen.Cell{Rune: '·', Width: 1, Style: screen.Style{Fg: screen.IndexedColor(240)}}

// fillRow pads a row of the area to the client's width: a tab row with
// blanks to the tab's width, then with fillCell. A row that is not the
// tab's (tab false) is all fill.
func (s *session) fillRow(cells []screen.Cell, tab bool, p *pane) []screen.Cell {
	if !tab {
		cells = nil
	}
	from := len(cells)
	if tab {
		from = max(from, min(p.snap.Cols, s.cols))
	}
	if from >= s.cols {
		return cells
	}
	if len(cells) == 0 {
		if len(s.fill) != s.cols {
			s.fill = make([]screen.Cell, s.cols)
			for x := range s.fill {
				s.fill[x] = fillCell
			}
		}
		return s.fill
	}
	row := make([]screen.Cell, s.cols)
	copy(row, cells)
	for x := len(cells); x < from; x++ {
		row[x] = screen.Cell{Rune: ' ', Width: 1}
	}
	for x := from; x < s.cols; x++ {
		row[x] = fillCell
	}
	return row
}

// statusLine is the status line for the current state.
func (s *session) statusLine() []screen.Cell {
	si := StatusInfo{
		Window: s.winName, Groups: s.groups, Focused: s.tabID,
		TrueColor: s.r.TrueColor, Right: s.message, Bells: s.bellMarks(),
	}
	si.Tabs, si.Panes = s.entryTabs()
	_, si.Sheets = s.currentSheet()
	si.Notice = s.noticeText()
	si.GrantsRefused = s.alert() != ""
	switch s.mode {
	case modePrompt:
		si.Prompt = s.promptText()
	case modeConfirm:
		si.Prompt = fmt.Sprintf("close tab %s? y/n", s.tabLabel(s.confirmID))
		if s.confirmWin != "" {
			si.Prompt = s.closeWindowPrompt()
		}
	case modeCopy:
		if si.Right == "" && s.fp != nil {
			c := &s.copy
			si.Right = fmt.Sprintf("[scroll %d/%d] v select, y copy, / ? search, q leave", c.cy+1, s.historyTotal())
		}
	}
	if t, ok := s.focusedTab(); ok && t.Exited && si.Right == "" && s.mode == modeNormal {
		si.Right = fmt.Sprintf("%s ended: %s; any key closes it", s.tabLabel(t.ID), exitText(t.ExitCode))
	}
	s.styleStatus(&si) // config.json's status line (settings.go)
	var cells []screen.Cell
	cells, s.hits = statusLayout(si, s.cols)
	return cells
}

// exitText says how a tab's program ended.
func exitText(code int) string {
	switch {
	case code == 0:
		return "exit 0"
	case code > 128 && code < 128+65:
		return fmt.Sprintf("exit %d (signal %d)", code, code-128)
	case code < 0:
		return "killed"
	}
	return fmt.Sprintf("exit %d", code)
}

// tabLabel names a tab as the status line numbers its entry: "2:name
// (t5)", "1.2:name (t6)" for the second pane of entry 1.
func (s *session) tabLabel(id string) string {
	for _, t := range s.tabs {
		if t.ID == id {
			name := sanitize(t.Title)
			if name == "" {
				name = t.ID
			}
			return fmt.Sprintf("%s:%s (%s)", entryPlace(s.entries, id), name, t.ID)
		}
	}
	return id
}
