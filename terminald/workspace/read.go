package workspace

import "github.com/phantom-dev/phantom/terminald/screen"

// ReadScreen runs read on tab id's screen while holding the tab's lock, so
// that a page is read from one state of the screen. epoch identifies this
// run of the tab (its start time, in nanoseconds): a tab id can come back
// after terminald restarts, with a new history. read must not keep the
// screen or call back into the workspace.
func (w *Workspace) ReadScreen(id string, read func(scr *screen.Screen, epoch int64)) error {
	return w.ReadScreenSeen(id, func(scr *screen.Screen, epoch int64, _ screen.Pos) { read(scr, epoch) })
}
