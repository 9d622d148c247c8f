package workspace

import (
	"fmt"
	"sync"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// EventKind says what changed.
type EventKind int

// The event kinds.
const (
	EventCreated EventKind = iota + 1
	EventUpdated
	EventIdleChanged
	EventClosed
)

// Event is one change to a tab.
type Event struct {
	Kind     EventKind
	Terminal Terminal
}

// watchBuffer is how many events a watcher may fall behind before it is
// cut off: a stalled client must never slow down the tabs.
const watchBuffer = 1024

// Watcher receives the workspace's changes.
type Watcher struct {
	w    *Workspace
	c    chan Event
	once sync.Once
	err  error
}

// Watch subscribes to changes. Call Stop when done.
func (w *Workspace) Watch() *Watcher {
	wt := &Watcher{w: w, c: make(chan Event, watchBuffer)}
	w.mu.Lock()
	if w.closing {
		wt.end(fmt.Errorf("terminald is shutting down: %w", errdefs.ErrUnavailable))
	} else {
		w.watchers[wt] = struct{}{}
	}
	w.mu.Unlock()
	return wt
}

// Events is closed when the watcher ends; then Err says why.
func (wt *Watcher) Events() <-chan Event { return wt.c }

// Err is nil when the watcher was stopped or the workspace shut down, or
// the reason it was cut off.
func (wt *Watcher) Err() error { return wt.err }

// Stop unsubscribes.
func (wt *Watcher) Stop() {
	wt.w.mu.Lock()
	defer wt.w.mu.Unlock()
	wt.end(nil)
}

// end closes the watcher; called with w.mu held.
func (wt *Watcher) end(err error) {
	wt.once.Do(func() {
		delete(wt.w.watchers, wt)
		wt.err = err
		close(wt.c)
	})
}

// publish hands ev to every watcher, cutting off those that fell behind.
func (w *Workspace) publish(ev Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wt := range w.watchers {
		select {
		case wt.c <- ev:
		default:
			wt.end(fmt.Errorf("watcher fell more than %d events behind: %w", watchBuffer, errdefs.ErrResourceExhausted))
		}
	}
}
