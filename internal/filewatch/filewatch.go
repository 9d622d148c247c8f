// Package filewatch follows one file that people edit by hand — the grants
// file, config.json — and calls back when it may have changed.
//
// It watches the file's folder, not the file: editors save by writing a
// temporary file and renaming it over the old one, which ends a watch on
// the file itself. It lets a burst of events settle before calling back,
// so one save is one call. And it calls back every Poll besides, because
// inotify is not enough alone: the folder may not exist yet, or be removed
// and made again (the kernel drops the watch with it), and a full event
// queue loses events.
package filewatch

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Defaults for Spec's intervals.
const (
	// DefaultSettle is how long a burst of events (an editor's save:
	// write a temporary file, rename it, chmod it) settles before Changed.
	DefaultSettle = 20 * time.Millisecond
	// DefaultPoll is how often Changed runs without an event.
	DefaultPoll = 2 * time.Second
)

// Spec is what to follow and what to call.
type Spec struct {
	// Path is the file. Its folder is watched.
	Path string
	// What names the file in log lines, e.g. "the grants file".
	What string
	// Changed runs, on the watching goroutine, after each settled burst
	// of events about the file or its folder, when a watch (re)starts (to
	// catch what changed before it began), after lost events, and every
	// Poll.
	Changed func()
	// Tick, if set, runs every Poll after Changed: for work that is
	// retried on a timer, such as a write that failed.
	Tick func()
	// Settle and Poll default to DefaultSettle and DefaultPoll.
	Settle, Poll time.Duration
	// Logger gets a warning when inotify cannot be used or loses events.
	Logger *slog.Logger
}

// Follow calls s.Changed as the file changes until ctx ends. Without
// inotify it still calls it every Poll.
func Follow(ctx context.Context, s Spec) {
	if s.Settle <= 0 {
		s.Settle = DefaultSettle
	}
	if s.Poll <= 0 {
		s.Poll = DefaultPoll
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	dir, name := filepath.Dir(s.Path), filepath.Base(s.Path)

	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.Logger.Warn("cannot watch "+s.What+"; it is checked every few seconds", "path", s.Path, "err", err)
	} else {
		defer w.Close()
	}
	watching := false
	watch := func() {
		if w != nil && !watching && w.Add(dir) == nil {
			watching = true
			s.Changed() // what changed before the watch began
		}
	}
	watch()

	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	tick := time.NewTicker(s.Poll)
	defer tick.Stop()
	var settled <-chan time.Time
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
			if (ev.Name == dir || filepath.Base(ev.Name) == name) && settled == nil {
				settled = time.After(s.Settle)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			s.Logger.Warn("watching "+s.What, "path", s.Path, "err", err)
			s.Changed() // an overflow loses events: look at the file now
		case <-settled:
			settled = nil
			s.Changed()
		case <-tick.C:
			watch()
			s.Changed()
			if s.Tick != nil {
				s.Tick()
			}
		}
	}
}
