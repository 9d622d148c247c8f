package grants

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch intervals.
const (
	// settle is how long the watcher lets a burst of events (an editor's
	// save: write a temporary file, rename it, chmod it) settle before it
	// reads the file.
	settle = 20 * time.Millisecond
	// pollEvery is how often the watcher checks the file without an
	// event: the folder may have been removed and made again (which ends
	// its inotify watch), events can be lost when the queue overflows,
	// and a failed write is retried.
	pollEvery = 2 * time.Second
)

// Watch follows the grants file until ctx ends, so that a change made by
// hand — an edit, a replacement by an editor, a removal, a chmod — is read
// (and reported through Observe) as soon as it happens, not at the next
// request. It watches the folder, since editors replace the file rather
// than write it in place. Without inotify it still checks every few
// seconds; every request checks anyway.
func (s *Store) Watch(ctx context.Context, logger *slog.Logger) {
	dir := filepath.Dir(s.path)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Warn("cannot watch the grants file; it is checked before every request and every few seconds", "path", s.path, "err", err)
	} else {
		defer w.Close()
	}
	watching := false
	watch := func() {
		if w == nil || watching {
			return
		}
		if err := w.Add(dir); err == nil {
			watching = true
			s.Refresh() // what changed before the watch began
		}
	}
	watch()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var settled <-chan time.Time
	lastFlushErr := ""
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Name == dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				watching = false // the kernel dropped the watch with the folder
			}
			if ev.Name == dir || filepath.Base(ev.Name) == FileName {
				if settled == nil {
					settled = time.After(settle)
				}
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An overflow loses events: look at the file now.
			logger.Warn("watching the grants file", "path", s.path, "err", err)
			s.Refresh()
		case <-settled:
			settled = nil
			s.Refresh()
		case <-tick.C:
			watch()
			s.Refresh()
			err := s.Flush()
			if msg := errText(err); msg != lastFlushErr {
				if err != nil {
					logger.Error("grants file still not updated: a revocation holds in memory only", "path", s.path, "err", err)
				}
				lastFlushErr = msg
			}
		}
	}
}
