package attach

import (
	"fmt"
	"slices"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// pane is one tab shown in the layout (layout.go).
type pane struct {
	tabID string
	view  *workspace.View
	snap  workspace.Snapshot
	lines [][]screen.Cell // the tab's rows as last snapshotted
	leaf  *node           // where the pane sits in the layout
	r     rect            // where the pane is drawn (the whole area when zoomed)
	viewW int             // the size last asked of the view
	viewH int
	// shownCols and shownRows are the tab size last rendered.
	shownCols, shownRows int
	// stop ends the forwarder of the view's output signal to the
	// session, done says it ended; both nil while none runs.
	stop, done chan struct{}
	closed     bool
}

// openPane starts viewing tab id at the size of r. Its output wakes the
// session (s.dirty) until the pane is closed.
func (s *session) openPane(id string, r rect) (*pane, error) {
	v, err := s.ws.OpenView(id, max(r.w, 1), max(r.h, 1))
	if err != nil {
		return nil, err
	}
	p := &pane{tabID: id, view: v, r: r, viewW: max(r.w, 1), viewH: max(r.h, 1)}
	p.forward(s.dirty)
	return p, nil
}

// forward passes the view's output signal on to dirty until unforward.
func (p *pane) forward(dirty chan<- struct{}) {
	if p.stop != nil {
		return
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func(stop, done chan struct{}) {
		defer close(done)
		for {
			select {
			case <-p.view.Dirty():
				select {
				case dirty <- struct{}{}:
				default:
				}
			case <-stop:
				return
			}
		}
	}(p.stop, p.done)
}

// unforward stops the forwarder and waits for it: afterwards only the
// session takes the view's signal.
func (p *pane) unforward() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.stop, p.done = nil, nil
}

// close stops viewing the pane's tab (the tab runs on).
func (p *pane) close() {
	p.unforward()
	p.closed = true
	p.view.Close()
}

// directDirty is the focused pane's output signal, which the session
// loop takes itself, so that a keystroke's echo wakes it without a
// goroutine hop on the way; the other panes' signals come through their
// forwarders.
func (s *session) directDirty() <-chan struct{} {
	if s.fp != s.direct {
		if s.direct != nil && !s.direct.closed {
			s.direct.forward(s.dirty)
		}
		if s.fp != nil {
			s.fp.unforward()
		}
		s.direct = s.fp
	}
	if s.fp == nil {
		return nil
	}
	return s.fp.view.Dirty()
}

// emptySnap stands for the snapshot of a pane that is not there.
var emptySnap workspace.Snapshot

// curView is the focused pane's view; nil when no tab is shown.
func (s *session) curView() *workspace.View {
	if s.fp == nil {
		return nil
	}
	return s.fp.view
}

// curSnap is the focused pane's last snapshot.
func (s *session) curSnap() *workspace.Snapshot {
	if s.fp == nil {
		emptySnap = workspace.Snapshot{}
		return &emptySnap
	}
	return &s.fp.snap
}

// paneRect is where the focused pane is drawn.
func (s *session) paneRect() rect {
	if s.fp == nil {
		return rect{0, 0, s.cols, s.rows - 1}
	}
	return s.fp.r
}

// visiblePanes are the panes drawn: the focused one alone when zoomed.
func (s *session) visiblePanes() []*pane {
	if s.fp != nil && s.zoomed {
		return []*pane{s.fp}
	}
	var ps []*pane
	for _, l := range s.root.leaves(nil) {
		ps = append(ps, l.pane)
	}
	return ps
}

// relayout places the panes in the area and gives each tab its pane's
// size; everything is redrawn. The window's other clients get the layout.
func (s *session) relayout() {
	s.needFull = true
	if s.root == nil {
		return
	}
	defer s.publishLayout()
	s.relayoutRects()
	for _, l := range s.root.leaves(nil) {
		p := l.pane
		w, h := max(p.r.w, 1), max(p.r.h, 1)
		if w == p.viewW && h == p.viewH {
			continue
		}
		p.viewW, p.viewH = w, h
		if err := p.view.Resize(w, h); err != nil {
			s.setMessage(fmt.Sprintf("resize tab %s: %v", p.tabID, err))
		}
	}
}

// relayoutRects places the panes in the area.
func (s *session) relayoutRects() {
	area := rect{0, 0, s.cols, s.rows - 1}
	s.root.place(area)
	for _, l := range s.root.leaves(nil) {
		l.pane.r = l.r
	}
	if s.zoomed && s.fp != nil {
		s.fp.r = area
	}
}

// setFocus makes p the focused pane (the window's focus follows through
// focus; a caller that follows the window's focus passes no tab).
func (s *session) setFocus(p *pane) {
	if p == s.fp {
		return
	}
	s.leaveCopy()
	s.notePane(s.fp, p) // extras.go
	s.fp, s.tabID = p, p.tabID
	if s.zoomed {
		s.relayout()
	}
	s.needFull = true
}

// focusPane moves the focus to pane p and the window's focus to its tab.
func (s *session) focusPane(p *pane) {
	if p == nil || p == s.fp {
		return
	}
	s.setFocus(p)
	s.focus(p.tabID)
}

// dropClosedPanes takes the panes whose tab is gone out of the layout and
// reports whether it took any.
func (s *session) dropClosedPanes() bool {
	dropped := false
	for _, l := range s.root.leaves(nil) {
		id := l.pane.tabID
		if slices.ContainsFunc(s.tabs, func(t workspace.Terminal) bool { return t.ID == id }) {
			continue
		}
		s.removePane(l)
		dropped = true
	}
	return dropped
}

// removePane takes leaf l's pane out of the layout; its neighbour takes
// the room and, if it was focused, the focus.
func (s *session) removePane(l *node) {
	var next *node
	if par := l.parent; par != nil {
		sib := par.a
		if sib == l {
			sib = par.b
		}
		next = sib.leaves(nil)[0]
	}
	s.root = remove(s.root, l)
	l.pane.close()
	if s.fp == l.pane {
		s.fp, s.tabID = nil, ""
		if next != nil {
			s.fp, s.tabID = next.pane, next.pane.tabID
		}
		s.leaveCopy()
	}
	if len(s.root.leaves(nil)) < 2 {
		s.zoomed = false
	}
	s.relayout()
}

// splitWith splits the focused pane and shows tab id in the new half
// (stacked: below, else right); "" opens a new tab there, in the focused
// tab's directory and group.
func (s *session) splitWith(id string, stacked bool) {
	if s.fp == nil {
		return
	}
	for _, l := range s.root.leaves(nil) {
		if l.pane.tabID == id {
			s.focusPane(l.pane)
			return
		}
	}
	r := s.fp.leaf.r
	if s.zoomed {
		s.zoomed = false
		s.relayout()
		r = s.fp.leaf.r
	}
	half := rect{r.x + r.w/2 + 1, r.y, r.w - r.w/2 - 1, r.h}
	if stacked {
		half = rect{r.x, r.y + r.h/2 + 1, r.w, r.h - r.h/2 - 1}
	}
	if half.w < 2 || half.h < 1 {
		s.setMessage("no room to split this pane")
		return
	}
	if id == "" {
		spec := workspace.CreateSpec{WindowID: s.winID, Cols: half.w, Rows: half.h}
		if t, ok := s.focusedTab(); ok {
			spec.Directory, spec.GroupID = t.Directory, t.GroupID
		}
		t, err := s.ws.Create(spec)
		if err != nil {
			s.setMessage("new tab: " + err.Error())
			return
		}
		id = t.ID
	}
	p, err := s.openPane(id, half)
	if err != nil {
		s.setMessage(fmt.Sprintf("split: show tab %s: %v", id, err))
		return
	}
	s.fp.leaf.split(p, stacked)
	s.relayout()
	s.focusPane(p)
}

// movePane moves the focus to the pane in direction d.
func (s *session) movePane(d direction) {
	if s.fp == nil || s.zoomed {
		return
	}
	c := s.fp.snap.Cursor
	at := s.fp.r.y + c.Y
	if d == dirUp || d == dirDown {
		at = s.fp.r.x + c.X
	}
	if n := neighbour(s.root.leaves(nil), s.fp.leaf, d, at); n != nil {
		s.focusPane(n.pane)
	}
}

// nextPane moves the focus to the next pane in layout order.
func (s *session) nextPane() {
	ls := s.root.leaves(nil)
	if s.fp == nil || len(ls) < 2 {
		return
	}
	i := slices.IndexFunc(ls, func(l *node) bool { return l.pane == s.fp })
	if s.zoomed {
		s.zoomed = false
	}
	s.focusPane(ls[(i+1)%len(ls)].pane)
	s.relayout()
}

// resizePane moves the focused pane's border towards d.
func (s *session) resizePane(d direction) {
	if s.fp == nil || s.zoomed {
		return
	}
	if resize(s.fp.leaf, d, resizeStep) {
		s.relayout()
	}
}

// resizeStep is how many cells prefix Ctrl-arrow moves a border.
const resizeStep = 2

// toggleZoom makes the focused pane fill the area, or puts it back.
func (s *session) toggleZoom() {
	if s.fp == nil || s.fp.leaf.parent == nil {
		s.setMessage("only one pane: nothing to zoom")
		return
	}
	s.leaveCopy()
	s.zoomed = !s.zoomed
	s.relayout()
}

// paneAt is the visible pane that shows cell x, y of the area.
func (s *session) paneAt(x, y int) *pane {
	for _, p := range s.visiblePanes() {
		if p.r.contains(x, y) {
			return p
		}
	}
	return nil
}
