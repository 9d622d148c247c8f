package workspace

import "github.com/phantom-dev/phantom/terminald/screen"

// ReadScreen runs read on tab id's screen while holding the tab's lock, so
// that a page is read from one state of the screen. epoch identifies this
// run of the tab (its start time, in nanoseconds): a tab id can come back
// after terminald restarts, with a new history. read must not keep the
// screen or call back into the workspace.
func (w *Workspace) ReadScreen(id string, read func(scr *screen.Screen, epoch int64)) error {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	read(e.scr, e.started.UnixNano())
	return nil
}
