package attach

import (
	"fmt"
	"slices"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// render builds one frame: the tab area's changed rows (diffed against
// what this client was last sent), the status line, the input modes and
// the cursor, wrapped in synchronized-output marks so the client never
// shows half a frame.
func (s *session) render() []byte {
	b := append(s.out[:0], "\x1b[?2026h"...)
	area := s.rows - 1
	if s.needFull {
		s.r.Reset()
		b = s.r.ResetPen(b)
		b = append(b, "\x1b[H\x1b[2J"...)
		s.last = make([][]screen.Cell, area)
		s.under = make([][]screen.Cell, area)
		s.lastS = nil
		if s.view != nil {
			s.view.Invalidate()
		}
	}
	if len(s.last) != area {
		s.last = make([][]screen.Cell, area)
	}
	if len(s.under) != area {
		s.under = make([][]screen.Cell, area)
	}

	cursorX, cursorY, cursorOn := 0, 0, false
	switch {
	case s.view == nil:
	case s.mode == modeScroll:
		lines, _ := s.view.History(s.scrollTop, area)
		for y, l := range lines {
			b = s.drawRow(b, y, l)
		}
	default:
		s.view.Snapshot(&s.snap)
		if s.snap.Cols != s.shownCols || s.snap.Rows != s.shownRows {
			// The tab changed size (this or another client): start over.
			s.shownCols, s.shownRows = s.snap.Cols, s.snap.Rows
			if !s.needFull {
				s.needFull = true
				return s.render()
			}
		}
		for y, l := range s.snap.Lines {
			if y < area && l != nil {
				s.under[y] = l
				if s.mode != modeSheet {
					b = s.drawRow(b, y, l)
				}
			}
		}
		if s.mode == modeSheet {
			// The box over the tab; keys go to the box, not the program,
			// so the program's input modes are off meanwhile.
			box := s.box()
			for y := range area {
				b = s.drawRow(b, y, box.overlay(y, s.under[y]))
			}
			b = s.r.ResetModes(b)
			break
		}
		b = s.r.Modes(b, s.snap.Modes)
		c := s.snap.Cursor
		cursorX, cursorY = c.X, c.Y
		cursorOn = c.Visible && c.X < s.cols && c.Y < area
	}
	s.needFull = false

	st := s.statusLine()
	if !slices.Equal(st, s.lastS) {
		b = s.r.Row(b, area, s.cols, st)
		s.lastS = st
	}
	if s.mode == modeRename {
		cursorX, cursorY, cursorOn = min(textWidth(s.promptText())+1, s.cols-1), area, true
	}
	b = s.r.ResetPen(b)
	b = s.r.Cursor(b, cursorX, cursorY, cursorOn)
	b = append(b, "\x1b[?2026l"...)
	s.out = b
	return b
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

// statusLine is the status line for the current state.
func (s *session) statusLine() []screen.Cell {
	si := StatusInfo{
		Window: s.winName, Tabs: s.tabs, Groups: s.groups, Focused: s.tabID,
		TrueColor: s.r.TrueColor, Right: s.message,
	}
	_, si.Sheets = s.currentSheet()
	switch s.mode {
	case modeRename:
		si.Prompt = s.promptText()
	case modeScroll:
		if si.Right == "" && s.view != nil {
			_, total := s.view.History(0, 0)
			si.Right = fmt.Sprintf("[scroll %d/%d] PgUp/PgDn k/j, q to leave", s.scrollTop+1, total)
		}
	}
	return StatusLine(si, s.cols)
}

// promptText is the rename prompt as shown.
func (s *session) promptText() string {
	return "rename tab " + s.tabID + ": " + sanitize(string(s.prompt))
}
