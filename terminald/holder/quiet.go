package holder

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// quietFile is a descriptor the holder keeps open but never reads: a
// tab's PTY master, held so that the terminal outlives terminald.
//
// Why not an *os.File: the master is non-blocking, so os.NewFile
// registers it with Go's poller, and the poller's edge-triggered epoll
// then wakes the holder for every chunk of output the tab writes, which
// no one in the holder waits for. With cat of 200 MB in a tab that was
// 0.4–0.7 CPU seconds of the holder's, for nothing.
type quietFile struct {
	fd   int // -1 once closed
	name string
}

// quiet moves f's descriptor out of Go's poller: it keeps a duplicate
// outside it and closes f. On an error f is left open.
func quiet(f *os.File) (*quietFile, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("keep %s: %w", f.Name(), err)
	}
	var fd int
	var derr error
	if err := sc.Control(func(d uintptr) { fd, derr = unix.FcntlInt(d, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, fmt.Errorf("keep %s: %w", f.Name(), err)
	}
	if derr != nil {
		return nil, fmt.Errorf("keep %s: duplicate it: %w", f.Name(), derr)
	}
	name := f.Name()
	f.Close()
	return &quietFile{fd: fd, name: name}, nil
}

// file returns a duplicate of the descriptor as an *os.File, to send; the
// caller closes it once sent.
func (q *quietFile) file() (*os.File, error) {
	fd, err := unix.FcntlInt(uintptr(q.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("send %s: duplicate it: %w", q.name, err)
	}
	return os.NewFile(uintptr(fd), q.name), nil
}

// Close closes the descriptor; closing it again does nothing.
func (q *quietFile) Close() error {
	if q.fd < 0 {
		return nil
	}
	err := unix.Close(q.fd)
	q.fd = -1
	return err
}
