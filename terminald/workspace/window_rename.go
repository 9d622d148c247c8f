package workspace

import (
	"fmt"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// RenameWindow gives a window a new name. Its tabs are published as
// updated, so that attach's status lines show the name at once.
func (w *Workspace) RenameWindow(id, name string) (Window, error) {
	w.mu.Lock()
	win, err := w.windowLocked(id)
	if err != nil {
		w.mu.Unlock()
		return Window{}, err
	}
	if name == "" {
		w.mu.Unlock()
		return Window{}, fmt.Errorf("window %s: the new name is empty: %w", id, errdefs.ErrInvalidArgument)
	}
	win.name = name
	info := w.windowInfoLocked(win)
	w.mu.Unlock()
	w.requestSave()
	w.winChanged.fire()
	for _, tab := range info.TabIDs {
		if t, err := w.Get(tab); err == nil {
			w.publish(Event{Kind: EventUpdated, Terminal: t})
		}
	}
	return info, nil
}
