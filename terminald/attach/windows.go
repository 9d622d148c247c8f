package attach

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// Windows from attach, as tmux's sessions: a client shows one window at
// a time and switches to another (prefix ( and ), the tree of prefix w),
// which re-targets the whole session — its window id, tabs, status line,
// layout and focus follow the new window, whose layout and focused tab
// are the window's own, shared with its other clients. prefix & closes
// the window (its tabs with it; the last window is kept, see
// workspace.CloseWindow) and prefix . moves the shown tab to another
// window. A client whose window is closed moves to a neighbour window; one
// whose window lost its last tab because that tab moved follows it.

// stepWindow shows the window step places after (before, when negative)
// this one in the workspace's order, wrapping around, as tmux's
// switch-client -n and -p.
func (s *session) stepWindow(step int) {
	wins := s.ws.Windows()
	if len(wins) < 2 {
		s.setMessage(fmt.Sprintf("%s is the only window; prefix . moves a tab to a new one", s.windowLabel()))
		return
	}
	i := max(slices.IndexFunc(wins, func(w workspace.Window) bool { return w.ID == s.winID }), 0)
	n := len(wins)
	s.switchWindow(wins[((i+step)%n+n)%n].ID, "")
}

// switchWindow re-targets the session at window id, showing tab (one of
// the window's, made its focused tab) or, when "", the window's focused
// tab. An empty window gets a tab in the shown tab's directory, as attach
// opens one in an empty window. The panes of the window left are closed
// (its tabs run on, its layout stays the window's); those of the new
// window are read at the top of the session loop (syncLayout, refresh).
func (s *session) switchWindow(id, tab string) {
	if id == s.winID {
		if tab != "" {
			s.focus(tab)
		}
		return
	}
	dir := ""
	if t, ok := s.focusedTab(); ok {
		dir = t.Directory
	}
	if tab != "" {
		if _, err := s.ws.Focus(tab); err != nil {
			s.setMessage(err.Error())
			return
		}
	}
	for _, w := range s.ws.Windows() {
		if w.ID != id {
			continue
		}
		if len(w.TabIDs) == 0 {
			r := rect{0, 0, s.cols, s.rows - 1}
			if _, err := s.ws.Create(workspace.CreateSpec{Directory: dir, WindowID: id, Cols: r.w, Rows: r.h}); err != nil {
				s.setMessage(fmt.Sprintf("window %s has no tab and opening one failed: %v", w.Name, err))
				return
			}
		}
		s.retarget(id)
		return
	}
	s.setMessage(fmt.Sprintf("no window %s", id))
}

// retarget drops everything the session shows of its window and makes it
// a client of window id; the loop reads the new window's layout and tabs
// at its top.
func (s *session) retarget(id string) {
	s.leaveCopy()
	if s.mode != modeSheet && s.mode != modeHelp {
		// A prompt, question or tree was about the window left; a
		// permission sheet is not.
		s.mode = modeNormal
	}
	s.copy, s.drag = copyState{}, dragState{}
	s.confirmID, s.confirmWin = "", ""
	for _, l := range s.root.leaves(nil) {
		l.pane.close()
	}
	s.root, s.fp, s.direct, s.tabID, s.zoomed = nil, nil, nil, "", false
	s.entries, s.layoutCh = nil, nil
	s.tabs, s.groups = nil, nil
	s.followed, s.diverged, s.typedTab, s.notice = "", "", "", nil
	s.noteWindow(id) // extras.go
	s.winID, s.winName = id, ""
	s.winName = s.windowName(id)
	if s.o.Focus != nil && s.focusIn != nil {
		s.o.Focus.move(s.focusIn, id)
	}
	if s.o.Window != nil {
		// A failed send shows at the next frame's.
		_ = s.o.Window(id)
	}
	s.statusOld, s.needFull, s.needFrame, s.statusStale = true, true, true, true
}

// leaveWindow moves the session elsewhere when its window is gone (win
// nil: closed) or has no tab left, and reports whether it did: a closed
// window's clients go to a neighbour (nextWindow); a window that lost its
// last tab to a move is left for the window the tab went to. A window
// whose last tab closed still ends the session, as before.
func (s *session) leaveWindow(win *workspace.Window, wins []workspace.Window) bool {
	old := s.winID
	if win != nil {
		if s.tabID == "" {
			return false
		}
		t, err := s.ws.Get(s.tabID)
		if err != nil || t.WindowID == s.winID {
			return false // closed, not moved
		}
		s.switchWindow(t.WindowID, t.ID)
		s.setMessage(fmt.Sprintf("followed %s to window %s", t.ID, s.windowLabel()))
		return s.winID != old
	}
	if len(wins) == 0 {
		return false
	}
	gone := s.windowLabel()
	s.switchWindow(nextWindow(s.winOrder, s.winID, wins), "")
	s.setMessage(fmt.Sprintf("window %s was closed; this is window %s", gone, s.windowLabel()))
	return s.winID != old
}

// nextWindow is where the clients of closed window gone go: the first
// window after it in order (as the session last saw the order), else
// the last before it, preferring windows that have tabs (an empty one
// gets a new tab from each client that comes).
func nextWindow(order []string, gone string, wins []workspace.Window) string {
	byID := map[string]workspace.Window{}
	for _, w := range wins {
		byID[w.ID] = w
	}
	i := slices.Index(order, gone)
	var cands []string
	if i >= 0 {
		cands = append(cands, order[i+1:]...)
		for j := i - 1; j >= 0; j-- {
			cands = append(cands, order[j])
		}
	}
	for _, w := range wins {
		cands = append(cands, w.ID) // windows made since
	}
	for _, needTabs := range []bool{true, false} {
		for _, id := range cands {
			if w, ok := byID[id]; ok && (!needTabs || len(w.TabIDs) > 0) {
				return id
			}
		}
	}
	return wins[0].ID
}

// windowLabel names the session's window for messages: "ci (w2)".
func (s *session) windowLabel() string {
	return windowLabel(s.winID, s.windowName(s.winID))
}

// windowName is window id's name as last listed ("" when unknown).
func (s *session) windowName(id string) string {
	if id == s.winID && s.winName != "" {
		return s.winName
	}
	for _, w := range s.ws.Windows() {
		if w.ID == id {
			return w.Name
		}
	}
	return ""
}

// windowLabel is "name (id)", or the id alone when the name is it.
func windowLabel(id, name string) string {
	name = sanitize(name)
	if name == "" || name == id {
		return id
	}
	return name + " (" + id + ")"
}

// askCloseWindow asks y/n before closing window id with its tabs; the
// last window is refused at once.
func (s *session) askCloseWindow(id string) {
	wins := s.ws.Windows()
	i := slices.IndexFunc(wins, func(w workspace.Window) bool { return w.ID == id })
	switch {
	case i < 0:
		s.setMessage("no window " + id)
		return
	case len(wins) == 1:
		s.setMessage(fmt.Sprintf("%s is the only window, which Phantom keeps; prefix x closes a tab", windowLabel(id, wins[i].Name)))
		return
	}
	s.leaveCopy()
	s.mode, s.confirmID, s.confirmWin = modeConfirm, "", id
}

// closeWindowPrompt is the y/n question of askCloseWindow.
func (s *session) closeWindowPrompt() string {
	n := 0
	for _, w := range s.ws.Windows() {
		if w.ID == s.confirmWin {
			n = len(w.TabIDs)
		}
	}
	tabs := fmt.Sprintf("its %d tabs", n)
	if n == 1 {
		tabs = "its tab"
	}
	return fmt.Sprintf("close window %s and %s? y/n", windowLabel(s.confirmWin, s.windowName(s.confirmWin)), tabs)
}

// confirmCloseWindow carries out the answer to closeWindowPrompt. The
// close runs in the background (each tab's hang-up waits for its
// processes); the closed window's clients, this one included, move on
// when they see its tabs close.
func (s *session) confirmCloseWindow(yes bool) {
	id := s.confirmWin
	s.confirmWin = ""
	label := windowLabel(id, s.windowName(id))
	if !yes {
		s.setMessage("kept window " + label)
		return
	}
	s.bg.Go(func() { _, _, _ = s.ws.CloseWindow(id) })
	s.setMessage("closing window " + label)
}

// startMoveTab opens the prompt for the window the shown tab moves to.
func (s *session) startMoveTab() {
	if s.tabID == "" {
		return
	}
	s.leaveCopy()
	s.startPrompt(promptMoveTab, "")
}

// moveTabPrompt is the prompt's label for promptMoveTab.
func (s *session) moveTabPrompt() string {
	return fmt.Sprintf("move %s to window (name or id; a new name makes one): ", s.tabLabel(s.tabID))
}

// moveTab moves the shown tab to the window text names: an existing
// window by id or name, else a new window of that name (an id that names
// no window is an error, not a name). The client stays in its window, as
// tmux's move-window leaves it, unless the tab was the window's last.
func (s *session) moveTab(text string) {
	if text == "" {
		return
	}
	tab := s.tabID
	win, made, err := s.windowFor(text)
	if err != nil {
		s.setMessage("move " + tab + ": " + err.Error())
		return
	}
	if win.ID == s.winID {
		s.setMessage(fmt.Sprintf("%s is in window %s already", tab, windowLabel(win.ID, win.Name)))
		return
	}
	if _, err := s.ws.MoveTab(tab, win.ID); err != nil {
		s.setMessage("move " + tab + ": " + err.Error())
		return
	}
	what := "window"
	if made {
		what = "new window"
	}
	s.statusOld = true
	s.setMessage(fmt.Sprintf("moved %s to %s %s", tab, what, windowLabel(win.ID, win.Name)))
}

// windowFor finds the window text names, or makes one called text.
func (s *session) windowFor(text string) (w workspace.Window, made bool, err error) {
	var named []workspace.Window
	for _, w := range s.ws.Windows() {
		if w.ID == text {
			return w, false, nil
		}
		if w.Name == text {
			named = append(named, w)
		}
	}
	switch {
	case len(named) == 1:
		return named[0], false, nil
	case len(named) > 1:
		ids := make([]string, len(named))
		for i, w := range named {
			ids[i] = w.ID
		}
		return w, false, fmt.Errorf("%q names %d windows (%s): type the id", text, len(named), strings.Join(ids, ", "))
	case isWindowID(text):
		return w, false, fmt.Errorf("no window %s (a new window gets a name, not an id)", text)
	}
	return s.ws.CreateWindow(text), true, nil
}

// isWindowID reports whether s has the shape of a window id ("w3").
func isWindowID(s string) bool {
	if len(s) < 2 || s[0] != 'w' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// move makes inbox in a client of window win: agents' focus requests for
// that window reach it from now on. A request left undecided for the old
// window is answered as from a client that went away.
func (f *Focuses) move(in *focusInbox, win string) {
	f.mu.Lock()
	in.win = win
	f.mu.Unlock()
	if a := in.take(); a != nil && a.claim() {
		a.reply <- focusDecision{gone: true}
	}
}
