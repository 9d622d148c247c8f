// Package pty opens pseudo-terminals and does the few ioctls terminald needs
// on them, keeping the master in non-blocking mode.
//
// Why not github.com/creack/pty: it reaches the descriptor through
// (*os.File).Fd, which switches the file to blocking mode. A blocking master
// cannot be closed from another goroutine while a Read waits on it, so
// closing a tab whose background jobs still hold the terminal would hang.
// Here the master is registered with Go's poller and every ioctl goes through
// SyscallConn, so Close always interrupts Read.
package pty

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Open creates a new PTY pair. The master is non-blocking and close-on-exec;
// the slave is for the child (pass it as its stdin, stdout and stderr, then
// close it in the parent).
func Open() (master, slave *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("get pty number: %w", err)
	}
	name := "/dev/pts/" + strconv.Itoa(n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	// os.NewFile sees O_NONBLOCK and registers the master with the poller.
	return os.NewFile(uintptr(mfd), "/dev/ptmx"), os.NewFile(uintptr(sfd), name), nil
}

// control runs f on the file's descriptor without making it blocking.
func control(f *os.File, fn func(fd int) error) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// SetSize sets the terminal's size; the foreground group gets SIGWINCH.
func SetSize(master *os.File, cols, rows int) error {
	return control(master, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
}

// Foreground returns the terminal's foreground process group (TIOCGPGRP).
func Foreground(master *os.File) (int, error) {
	var pgrp int
	err := control(master, func(fd int) (err error) {
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	return pgrp, err
}

// Reader reads a master through Go's poller, like (*os.File).Read, but
// makes the read itself a raw system call.
//
// Why: under a burst of output, a read of the master can wait in the
// kernel for the tty layer's worker to move the next bytes over
// (n_tty_read flushes the port's buffer work). While a goroutine is in a
// system call, Go's scheduler monitor (sysmon) keeps waking every 20 µs
// to take its processor away if the call lasts: with cat of 200 MB into
// a tab, the monitor alone took 8% of terminald's CPU time (perf), 1%
// with raw reads. The master is non-blocking, so the raw read never waits
// for data; when there is none, Read waits in the poller as usual, and
// closing the file or a read deadline ends it as usual.
type Reader struct {
	name  string
	rc    syscall.RawConn
	buf   []byte
	n     int
	errno syscall.Errno
	read  func(fd uintptr) bool // made once: Read allocates nothing
}

// NewReader returns a Reader of master, which must be non-blocking (as
// Open makes it).
func NewReader(master *os.File) (*Reader, error) {
	rc, err := master.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", master.Name(), err)
	}
	r := &Reader{name: master.Name(), rc: rc}
	r.read = func(fd uintptr) bool {
		for {
			var p unsafe.Pointer
			if len(r.buf) > 0 {
				p = unsafe.Pointer(&r.buf[0])
			}
			n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(p), uintptr(len(r.buf)))
			switch errno {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			r.n, r.errno = int(n), errno
			return true
		}
	}
	return r, nil
}

// Read reads what the master has, waiting until it has something. At the
// end of the terminal (every slave closed) it returns an error, EIO from
// the kernel or io.EOF.
func (r *Reader) Read(p []byte) (int, error) {
	r.buf, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.read)
	r.buf = nil
	switch {
	case err != nil:
		return 0, err // closed, or past a read deadline
	case r.errno != 0:
		return 0, &os.PathError{Op: "read", Path: r.name, Err: r.errno}
	case r.n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return r.n, nil
}
