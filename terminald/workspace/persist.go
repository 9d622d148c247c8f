package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/phantom-dev/phantom/internal/paths"
)

// The session on disk: what brings windows, tabs, names, directories,
// groups and layouts back after `phantom down` or a reboot, when no
// holder kept the tabs alive. It is the holder's state blob (restore.go),
// the same savedState, written to Phantom's state directory as it
// changes; `phantom up` asks terminald to restore it (RestoreSaved) into
// a workspace that has no tab yet. Each tab comes back as a new shell in
// its directory; its command runs again only when the human marked it
// (KeepCommand), as zellij asks. Tabs opened for an agent do not come
// back; sandboxed tabs come back as sandboxed shells, no wider than their
// saved rules.

// SessionFileName is the saved session's file in Phantom's state
// directory.
const SessionFileName = "session.json"

const (
	// persistDelay gathers a burst of changes into one write.
	persistDelay = 250 * time.Millisecond
	// persistEvery bounds how long a change nothing announces (a `cd` at
	// a prompt) waits to be saved.
	persistEvery = 2 * time.Second
	// maxSessionFile bounds what the loader reads: a larger file is
	// refused, not parsed.
	maxSessionFile = 8 << 20
	// maxKeptCommand bounds a kept command line.
	maxKeptCommand = 4096
	// rerunWait is how long a restored tab's shell has to reach its
	// prompt before its kept command is typed anyway.
	rerunWait = 30 * time.Second
)

// SessionPath is the saved session's path in l's state directory; "" when
// l has none (tests, embedders): nothing is saved then.
func SessionPath(l paths.Layout) string {
	if l.State == "" {
		return ""
	}
	return filepath.Join(l.State, SessionFileName)
}

// KeptCommand is a command line the human marked to re-run in a tab when
// the session is restored, and the directory the tab was in then: both
// recorded when it was marked, never taken from what the tab ran later.
type KeptCommand struct {
	Line string `json:"line"`
	Dir  string `json:"dir"`
}

// persister writes the session to disk.
type persister struct {
	// armed is set once the workspace holds the session worth saving:
	// tabs taken back from a holder, or RestoreSaved done. Until then the
	// file on disk is the last session, which a fresh workspace must not
	// overwrite before `phantom up` restored it.
	armed atomic.Bool
	// restored is set by the first RestoreSaved: a session is restored
	// once.
	restored atomic.Bool

	poke chan struct{} // a change to save soon
	stop chan struct{} // closed by persistFinal
	done chan struct{} // closed when persistLoop ends
	once sync.Once

	mu   sync.Mutex // serialises writes; guards last and wrote
	last []byte     // what was last written
	// wrote is the file as last written: a file changed since by anyone
	// else is written again (persistNow).
	wrote os.FileInfo
}

func newPersister() persister {
	return persister{poke: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// persistSoon asks persistLoop to save the session after persistDelay.
func (w *Workspace) persistSoon() {
	select {
	case w.persist.poke <- struct{}{}:
	default:
	}
}

// holderLost is closed when the holder is lost (never without one).
func (w *Workspace) holderLost() <-chan struct{} {
	if w.opts.Holder == nil {
		return nil
	}
	return w.opts.Holder.Lost()
}

// persistLoop saves the session when it changed, until persistFinal. Once
// the holder is lost it stops: the tabs are being killed, and the file
// keeps the session as it was before.
func (w *Workspace) persistLoop() {
	p := &w.persist
	defer close(p.done)
	tick := time.NewTicker(persistEvery)
	defer tick.Stop()
	lost := w.holderLost()
	for {
		select {
		case <-p.stop:
			return
		case <-lost:
			return
		case <-tick.C:
		case <-p.poke:
			select {
			case <-p.stop:
				return
			case <-lost:
				return
			case <-time.After(persistDelay):
			}
		}
		w.persistNow(false)
	}
}

// persistFinal stops persistLoop and saves the session one last time,
// before Shutdown hangs up the tabs: what `phantom down` and a reboot
// leave is the session as it ran, whatever else wrote the file meanwhile.
func (w *Workspace) persistFinal() {
	p := &w.persist
	p.once.Do(func() { close(p.stop) })
	<-p.done
	select {
	case <-w.holderLost():
		return
	default:
	}
	w.persistNow(true)
}

// persistNow writes the session, if saving is on, when it changed, when
// the file is no longer the one last written (someone else wrote or
// removed it), or when forced.
func (w *Workspace) persistNow(force bool) {
	path := SessionPath(w.opts.Layout)
	if path == "" || !w.persist.armed.Load() || !w.Config().RestoreEnabled() {
		return
	}
	p := &w.persist
	p.mu.Lock()
	defer p.mu.Unlock()
	b := w.sessionBytes()
	if !force && bytes.Equal(b, p.last) && sameFile(path, p.wrote) {
		return
	}
	if err := writeSession(path, b); err != nil {
		w.opts.Logger.Warn("session not saved", "file", path, "err", err)
		return
	}
	p.last = b
	p.wrote, _ = os.Stat(path)
}

// sameFile reports whether path is still the file fi described: the same
// inode, size and modification time.
func sameFile(path string, fi os.FileInfo) bool {
	now, err := os.Stat(path)
	return err == nil && fi != nil && os.SameFile(now, fi) && now.Size() == fi.Size() && now.ModTime().Equal(fi.ModTime())
}

// sessionBytes is the session as saved: the state blob without what a
// restore does not bring back (the editor's tabs, command times).
func (w *Workspace) sessionBytes() []byte {
	st := w.snapshot()
	w.mu.Lock()
	editor := map[string]bool{}
	for id, e := range w.tabs {
		editor[id] = e.last.Editor
	}
	w.mu.Unlock()
	tabs := st.Tabs[:0]
	for _, t := range st.Tabs {
		if editor[t.ID] {
			continue
		}
		t.Commands = nil
		tabs = append(tabs, t)
	}
	st.Tabs = tabs
	b, _ := json.MarshalIndent(st, "", " ")
	return append(b, '\n')
}

// writeSession writes b to path atomically (a temporary file renamed over
// it), mode 0600, in a 0700 directory.
func writeSession(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := paths.EnsurePrivateDir(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+SessionFileName+".*") // 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// loadSession reads the session saved at path; ok is false when there is
// none. An error says what is wrong with the file.
func loadSession(path string) (st savedState, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return savedState{}, false, nil
	}
	if err != nil {
		return savedState{}, false, fmt.Errorf("cannot read it: %w", errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return savedState{}, false, fmt.Errorf("cannot read it: %w", err)
	case !fi.Mode().IsRegular():
		return savedState{}, false, errors.New("it is not a regular file")
	case fi.Size() > maxSessionFile:
		return savedState{}, false, fmt.Errorf("it holds %d bytes, more than the %d a session can", fi.Size(), maxSessionFile)
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && fi.Size() > 0 {
		return savedState{}, false, fmt.Errorf("cannot read it: %w", err)
	}
	st, err = parseSession(b)
	return st, err == nil, err
}

// setAside renames a session file that cannot be used, so that the next
// save does not overwrite what the human may want to look at, and returns
// the new name.
func setAside(path string, now time.Time) (string, error) {
	bad := path + ".bad-" + now.UTC().Format("20060102T150405Z")
	return bad, os.Rename(path, bad)
}
