package workspace

import (
	"fmt"
	"slices"
	"sync"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// Closing windows and moving tabs between them. A workspace always keeps
// at least one window (New makes "w1", and tabs opened without a window
// land in the first), so the last window is never closed: Phantom has no
// "server with no sessions" state for tmux's kill-session to fall into;
// `phantom down` is how everything ends.

// CloseWindow closes window id and every tab in it (their processes are
// hung up, as Close does), with its groups and its layout. It returns the
// window as it was and the ids of the tabs closed. The last window is
// refused. Attach sessions of the window see its tabs close and move to
// another window.
func (w *Workspace) CloseWindow(id string) (Window, []string, error) {
	if id == "" {
		return Window{}, nil, invalid("window_id", "name the window to close")
	}
	w.mu.Lock()
	if w.detached {
		w.mu.Unlock()
		return Window{}, nil, fmt.Errorf("terminald is handing its tabs over: %w", errdefs.ErrUnavailable)
	}
	win, err := w.windowLocked(id)
	if err != nil {
		w.mu.Unlock()
		return Window{}, nil, err
	}
	if len(w.windows) == 1 {
		w.mu.Unlock()
		return Window{}, nil, fmt.Errorf("window %s (%s) is the only window, which Phantom always keeps — close its tabs instead (phantom close), or stop Phantom (phantom down): %w",
			win.name, win.id, errdefs.ErrFailedPrecondition)
	}
	info := w.windowInfoLocked(win)
	entries := make([]*tabEntry, 0, len(win.tabs))
	infos := make([]Terminal, 0, len(win.tabs))
	for _, tid := range win.tabs {
		e := w.tabs[tid]
		entries = append(entries, e)
		infos = append(infos, w.infoLocked(e))
		delete(w.tabs, tid)
	}
	for gid, g := range w.groups {
		if g.windowID == id {
			delete(w.groups, gid)
		}
	}
	w.windows = slices.DeleteFunc(w.windows, func(x *windowEntry) bool { return x == win })
	delete(w.entries.m, id) // its entries and their layouts go with it
	w.mu.Unlock()
	w.winChanged.fire()
	// In parallel, as at shutdown: each hang-up waits for its processes.
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Go(func() { w.hangUp(e, infos[i]) })
	}
	wg.Wait()
	w.requestSave()
	return info, slices.Clone(info.TabIDs), nil
}

// MoveTab moves tab id to window windowID, as its last tab: it keeps its
// id, processes and scrollback, leaves the layout of its old window (whose
// focus goes to a neighbour, as when a tab closes) and its group, which
// belongs to the old window. Moving a tab to its own window changes
// nothing.
func (w *Workspace) MoveTab(id, windowID string) (Terminal, error) {
	if windowID == "" {
		return Terminal{}, invalid("window_id", "name the window to move the tab to")
	}
	w.mu.Lock()
	e, err := w.tabLocked(id)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	dst, err := w.windowLocked(windowID)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	if dst.id == e.windowID {
		info := w.infoLocked(e)
		w.mu.Unlock()
		return info, nil
	}
	src, _ := w.windowLocked(e.windowID)
	i := slices.Index(src.tabs, id)
	src.tabs = slices.Delete(src.tabs, i, i+1)
	var changed []Terminal
	if src.focused == id {
		src.focused = ""
		if len(src.tabs) > 0 {
			src.focused = src.tabs[min(i, len(src.tabs)-1)]
			changed = append(changed, w.infoLocked(w.tabs[src.focused]))
		}
	}
	dst.tabs = append(dst.tabs, id)
	if dst.focused == "" {
		dst.focused = id
	}
	e.windowID = dst.id
	e.groupID, e.groupByAgent = "", false
	info := w.infoLocked(e)
	w.mu.Unlock()
	w.requestSave()
	w.winChanged.fire()
	for _, t := range append(changed, info) {
		w.publish(Event{Kind: EventUpdated, Terminal: t})
	}
	return info, nil
}

// signal is a change signal: a channel closed and replaced at each
// change, so that any number of waiters learn of it without a queue.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait is the channel the next change closes.
func (sg *signal) wait() <-chan struct{} {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.ch == nil {
		sg.ch = make(chan struct{})
	}
	return sg.ch
}

// fire closes the current channel.
func (sg *signal) fire() {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.ch != nil {
		close(sg.ch)
		sg.ch = nil
	}
}

// WindowsChanged is a channel closed at the next change to the windows
// themselves — one made, renamed or closed, a tab moved between two —
// which tab events do not all tell (a window with no tab has none):
// attach's trees and status lines re-read the windows then.
func (w *Workspace) WindowsChanged() <-chan struct{} { return w.winChanged.wait() }
