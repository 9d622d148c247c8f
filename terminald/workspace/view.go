package workspace

import (
	"sync"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// This file is what the human's view (package terminald/attach) needs from
// a tab: a non-blocking "output changed" signal, the rows changed since a
// client last looked (several clients may watch one tab, so damage is kept
// as a per-row generation counter and each view remembers what it saw), the
// scrollback, and the tab size as the smallest of its viewers' sizes.

// tabViews is a tab's list of viewers and its per-row damage generations.
type tabViews struct {
	mu    sync.Mutex // guards views; never held while taking t.mu except in applySize
	views map[*View]struct{}

	// Guarded by tab.mu.
	gen    uint64   // last generation handed out
	rowGen []uint64 // per visible row: generation of its last change
}

// signal tells every viewer the tab's screen changed. It never blocks: a
// viewer that has not taken the previous signal is already due to look.
func (tv *tabViews) signal() {
	tv.mu.Lock()
	for v := range tv.views {
		select {
		case v.dirty <- struct{}{}:
		default:
		}
	}
	tv.mu.Unlock()
}

// View is one client's view of one tab. Its methods other than Dirty are
// not safe for concurrent use: one client goroutine owns a View.
type View struct {
	t     *tab
	dirty chan struct{}

	cols, rows int // the size this viewer wants; guarded by t.views.mu

	seen     []uint64 // per row: the generation this view last returned
	seenCols int
}

// Snapshot is a tab's screen as a view last looked at it.
type Snapshot struct {
	// Cols and Rows are the tab's screen size.
	Cols, Rows int
	// Lines has Rows entries: the cells of each row changed since the
	// view's previous Snapshot, nil for a row that did not change.
	Lines [][]screen.Cell
	// Cursor is the cursor position and visibility.
	Cursor screen.Cursor
	// Modes are the terminal modes the program set.
	Modes screen.Modes
	// AltScreen reports whether the program uses the alternate screen.
	AltScreen bool
}

// Config returns the settings the workspace runs with now.
func (w *Workspace) Config() config.Config { return *w.config.Load() }

// SetConfig replaces the settings (a reload of config.json): tabs opened
// from now on use the new shell, scrollback, agents and sandbox paths;
// open tabs keep what they started with.
func (w *Workspace) SetConfig(c config.Config) { w.config.Store(&c) }

// OpenView starts viewing tab id with a client area of cols x rows. The
// tab is resized to the smallest area among its viewers. Close the view
// when done.
func (w *Workspace) OpenView(id string, cols, rows int) (*View, error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	v := &View{t: e.tab, dirty: make(chan struct{}, 1), cols: cols, rows: rows}
	tv := &e.views
	tv.mu.Lock()
	if tv.views == nil {
		tv.views = map[*View]struct{}{}
	}
	tv.views[v] = struct{}{}
	err = tv.applySizeLocked(e.tab)
	tv.mu.Unlock()
	return v, err
}

// TabID returns the id of the viewed tab.
func (v *View) TabID() string { return v.t.id }

// Dirty receives a value after the tab's screen changed.
func (v *View) Dirty() <-chan struct{} { return v.dirty }

// Resize sets the client area this view wants and resizes the tab to the
// smallest area among its viewers.
func (v *View) Resize(cols, rows int) error {
	tv := &v.t.views
	tv.mu.Lock()
	defer tv.mu.Unlock()
	v.cols, v.rows = cols, rows
	return tv.applySizeLocked(v.t)
}

// Close stops viewing. The tab keeps its size unless other viewers remain,
// in which case it takes the smallest of theirs.
func (v *View) Close() {
	tv := &v.t.views
	tv.mu.Lock()
	defer tv.mu.Unlock()
	if _, ok := tv.views[v]; !ok {
		return
	}
	delete(tv.views, v)
	if len(tv.views) > 0 {
		_ = tv.applySizeLocked(v.t)
	}
}

// applySizeLocked resizes t to the smallest viewer area; tv.mu is held.
func (tv *tabViews) applySizeLocked(t *tab) error {
	cols, rows := 0, 0
	for v := range tv.views {
		if cols == 0 || v.cols < cols {
			cols = v.cols
		}
		if rows == 0 || v.rows < rows {
			rows = v.rows
		}
	}
	cols, rows = min(max(cols, 2), 1000), min(max(rows, 1), 1000)
	t.mu.Lock()
	cur, curRows := t.scr.Size()
	closed := t.closed || t.exited
	t.mu.Unlock()
	if closed || (cur == cols && curRows == rows) {
		return nil
	}
	return t.resize(cols, rows)
}

// Invalidate makes the next Snapshot return every row.
func (v *View) Invalidate() { v.seen = nil }

// Snapshot fills s with the tab's screen: every row on the first call and
// after Invalidate or a resize, otherwise only the rows changed since the
// previous call. s.Lines is reused.
func (v *View) Snapshot(s *Snapshot) {
	t := v.t
	t.mu.Lock()
	defer t.mu.Unlock()
	scr := t.scr
	tv := &t.views
	cols, rows := scr.Size()
	if len(tv.rowGen) != rows {
		tv.gen++
		tv.rowGen = make([]uint64, rows)
		for y := range tv.rowGen {
			tv.rowGen[y] = tv.gen
		}
	}
	if d := scr.Dirty(); len(d) > 0 {
		tv.gen++
		for _, y := range d {
			tv.rowGen[y] = tv.gen
		}
		scr.ClearDirty()
	}
	if len(v.seen) != rows || v.seenCols != cols {
		v.seen, v.seenCols = make([]uint64, rows), cols
	}
	s.Cols, s.Rows = cols, rows
	s.Cursor, s.Modes, s.AltScreen = scr.Cursor(), scr.Modes(), scr.AltScreen()
	if cap(s.Lines) < rows {
		s.Lines = make([][]screen.Cell, rows)
	}
	s.Lines = s.Lines[:rows]
	for y := range rows {
		s.Lines[y] = nil
		if tv.rowGen[y] > v.seen[y] {
			s.Lines[y] = scr.Row(y)
			v.seen[y] = tv.rowGen[y]
		}
	}
}

// History returns n lines of the tab's history starting at line top, where
// lines 0..ScrollbackLen-1 are the scrollback (oldest first) and the
// visible rows follow; lines past the end are nil. It also returns the
// number of history lines.
func (v *View) History(top, n int) (lines [][]screen.Cell, total int) {
	lines, _, total = v.HistoryWrapped(top, n)
	return lines, total
}
