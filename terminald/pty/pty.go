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
	"os"
	"strconv"

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
