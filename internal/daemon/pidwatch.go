package daemon

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// DirWatch tells when something in a directory changed, so that a
// process waiting for daemons to write their pid files (WritePIDFile
// renames each into place) looks again at once rather than on a timer.
// It says only that something changed, not what: the watcher reads the
// files it waits for, which also covers anything a notification could
// miss (an overflowed queue).
type DirWatch struct {
	f    *os.File
	c    chan struct{}
	done chan struct{}
	once sync.Once
}

// WatchDir watches dir for files created, written or renamed into it.
// It fails where inotify is not to be had (a kernel without it, the
// user's limit of instances reached); callers then look on a timer.
func WatchDir(dir string) (*DirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE|unix.IN_CREATE); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	// A non-blocking descriptor goes to the runtime's poller, so that
	// Close ends a pending Read.
	w := &DirWatch{f: os.NewFile(uintptr(fd), "inotify:"+dir), c: make(chan struct{}, 1), done: make(chan struct{})}
	go w.read()
	return w, nil
}

// Changed receives a value after one or more changes; changes that come
// while a value waits unread are folded into it. It is closed when the
// watch ends.
func (w *DirWatch) Changed() <-chan struct{} { return w.c }

// Close ends the watch and waits for its reader to stop.
func (w *DirWatch) Close() error {
	var err error
	w.once.Do(func() {
		err = w.f.Close()
		<-w.done
	})
	return err
}

func (w *DirWatch) read() {
	defer close(w.done)
	defer close(w.c)
	// Events are only a wake-up call: their contents are not needed.
	buf := make([]byte, 4096)
	for {
		if _, err := w.f.Read(buf); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
}
