package attach

import (
	"fmt"
	"slices"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// More of tmux's default keys, each where tmux has it: prefix ; the last
// pane (tmux's last-pane: the pane of this entry focused before this
// one), prefix L the last window (tmux's switch-client -l: the Phantom
// window this client showed before), prefix $ renames the window (tmux's
// rename-session, since a Phantom window is tmux's session), prefix { and
// } swap the focused pane with the previous and next pane of the entry
// (tmux's swap-pane -U and -D; the focus stays with the pane that moved).

// notePane remembers, when the focus moves from pane old to pane p of the
// same entry, that old was focused before p, for last-pane. Kept per tab
// rather than once per session, so that coming back to an entry finds
// its last pane, as each tmux window keeps its own.
func (s *session) notePane(old, p *pane) {
	if old == nil || p == nil || old.closed || s.root.find(old) == nil || s.root.find(p) == nil {
		return
	}
	h := &s.habit
	if h.lastPane == nil {
		h.lastPane = map[string]string{}
	}
	h.lastPane[p.tabID] = old.tabID
	if len(h.lastPane) > 2*len(s.tabs)+16 {
		// Forget the tabs that are gone, so that the map stays the size
		// of the workspace.
		for id := range h.lastPane {
			if _, err := s.ws.Get(id); err != nil {
				delete(h.lastPane, id)
			}
		}
	}
}

// lastPane focuses the pane of this entry focused before this one; again
// goes back. A zoomed entry is unzoomed, as in tmux.
func (s *session) lastPane() {
	if s.fp == nil {
		return
	}
	id := s.habit.lastPane[s.fp.tabID]
	i := slices.IndexFunc(s.root.leaves(nil), func(l *node) bool { return id != "" && l.pane.tabID == id })
	if i < 0 {
		s.setMessage("no last pane in this entry")
		return
	}
	s.zoomed = false
	s.focusPane(s.root.leaves(nil)[i].pane)
	s.relayout()
}

// swapPane swaps the focused pane with the one step places after it
// (before, when negative) in the entry's order, wrapping around; the
// focus moves with the pane. A zoomed entry is unzoomed, as in tmux.
func (s *session) swapPane(step int) {
	ls := s.root.leaves(nil)
	if s.fp == nil || len(ls) < 2 {
		s.setMessage("only one pane: nothing to swap")
		return
	}
	n := len(ls)
	i := slices.IndexFunc(ls, func(l *node) bool { return l.pane == s.fp })
	a, b := ls[i], ls[((i+step)%n+n)%n]
	a.pane, b.pane = b.pane, a.pane
	a.pane.leaf, b.pane.leaf = a, b
	s.leaveCopy()
	s.zoomed = false
	s.relayout()
}

// noteWindow remembers the window a client leaves, for last-session.
func (s *session) noteWindow(next string) {
	if s.winID != "" && s.winID != next {
		s.habit.lastWin = s.winID
	}
}

// lastSession shows the window this client showed before; again goes
// back.
func (s *session) lastSession() {
	id := s.habit.lastWin
	if id == "" || !slices.ContainsFunc(s.ws.Windows(), func(w workspace.Window) bool { return w.ID == id }) {
		s.setMessage("no last window: ( ) and w show another")
		return
	}
	s.switchWindow(id, "")
}

// startRenameWindow opens the prompt for the window's new name.
func (s *session) startRenameWindow() {
	s.startPrompt(promptRenameWindow, s.windowName(s.winID))
}

// renameWindow names the session's window; every client's status line
// shows it.
func (s *session) renameWindow(name string) {
	if name == "" {
		s.setMessage(fmt.Sprintf("window %s keeps its name: type one", s.windowLabel()))
		return
	}
	w, err := s.ws.RenameWindow(s.winID, name)
	if err != nil {
		s.setMessage("rename window: " + err.Error())
		return
	}
	s.winName = w.Name
	s.statusOld = true
}
