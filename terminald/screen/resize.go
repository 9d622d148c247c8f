package screen

// Resize changes the screen size. When the width changes, the main buffer
// (scrollback and screen) is reflowed: soft-wrapped lines are re-wrapped
// to the new width and the cursor stays on its character (reflow_resize.go).
// The alternate screen is not reflowed: its rows are truncated or padded.
// When only the height changes, blank rows below the cursor go first when
// it shrinks, then rows at the top move to the scrollback; rows are added
// at the bottom when it grows.
func (s *Screen) Resize(cols, rows int) {
	cols, rows = clampSize(cols, rows)
	if cols == s.cols && rows == s.rows {
		return
	}
	reflow := cols != s.cols
	if s.altActive {
		s.resizeGrid(s.alt, cols, rows, &s.y, false)
		sv := &s.main.saved
		if reflow {
			s.reflowMain(cols, rows, &sv.x, &sv.y, &sv.wrapNext, nil)
		} else {
			s.resizeGrid(s.main, cols, rows, &sv.y, true)
		}
		s.wrapNext = false
	} else {
		s.alt = nil
		if reflow {
			s.reflowMain(cols, rows, &s.x, &s.y, &s.wrapNext, &s.main.saved)
		} else {
			s.resizeGrid(s.main, cols, rows, &s.y, true)
		}
	}
	s.cols, s.rows = cols, rows
	if len(s.tabs) < cols {
		for i := len(s.tabs); i < cols; i++ {
			s.tabs = append(s.tabs, i%8 == 0)
		}
	} else {
		s.tabs = s.tabs[:cols]
	}
	s.clean = make([]bool, rows)
	s.markAllDirty()
	s.top, s.bot = 0, rows-1
	s.wrapNext = s.wrapNext && s.m.Autowrap
	s.x = min(s.x, cols-1)
	s.y = min(max(s.y, 0), rows-1)
}

// resizeGrid resizes one buffer; cy is the cursor row to keep in view.
func (s *Screen) resizeGrid(g *grid, cols, rows int, cy *int, toScrollback bool) {
	if d := len(g.lines) - rows; d > 0 {
		// Drop blank rows below the cursor first.
		for d > 0 && len(g.lines)-1 > *cy && lineEmpty(g.lines[len(g.lines)-1]) {
			g.lines = g.lines[:len(g.lines)-1]
			d--
		}
		if d > 0 {
			for _, l := range g.lines[:d] {
				if toScrollback {
					s.sb.push(l)
				}
			}
			g.lines = append(g.lines[:0], g.lines[d:]...)
			*cy = max(*cy-d, 0)
		}
		clear(g.lines[len(g.lines):cap(g.lines)])
	}
	for len(g.lines) < rows {
		g.lines = append(g.lines, &line{c: make([]cell, 0, cols), compact: true})
	}
	for _, l := range g.lines {
		if l.compact && (l.ccol > cols || l.cpad) {
			s.mat(l) // truncate, or place the wrap pad, in cell form
		}
		old := len(l.c)
		l.used = min(l.used, cols)
		switch {
		case cols > cap(l.c):
			c := make([]cell, cols)
			copy(c, l.c)
			l.c = c
		default:
			l.c = l.c[:cols]
		}
		if cols > old {
			fillBlank(l.c[old:], blankCell)
		} else if l.c[cols-1].w == 2 {
			l.c[cols-1] = blankCell
		}
	}
}
