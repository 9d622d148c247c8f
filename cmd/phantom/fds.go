package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedFDs marks every file descriptor above stderr close-on-exec.
//
// Go's os/exec hands a child only Stdin, Stdout, Stderr and ExtraFiles,
// and every descriptor Go itself opens is O_CLOEXEC. But a descriptor this
// process inherited without O_CLOEXEC (`exec 7>file; phantom up` in a
// shell, a leaky parent) stays open across exec into everything it starts:
// up would hand it to every daemon, terminald to every tab's shell and the
// programs agents run there, lspd to language servers. Such a descriptor
// can be a file, a pipe or a socket of the user's session that no tab should
// hold (and an open write end keeps a reader somewhere from seeing EOF).
// tmux closes everything above stderr for the same reason.
//
// Marking rather than closing leaves the descriptors usable by this process
// itself, and it must run before any goroutine could start a process, so
// main calls it first. close_range(2) with CLOSE_RANGE_CLOEXEC (Linux 5.11)
// does it in one call; older kernels get a walk over /proc/self/fd.
func closeInheritedFDs() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("mark inherited file descriptors close-on-exec: %w", err)
	}
	return cloexecFromProc()
}

// cloexecFromProc is closeInheritedFDs for kernels without close_range.
func cloexecFromProc() error {
	// Read the whole list before changing anything: the directory's own
	// descriptor is in it.
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list open file descriptors in /proc/self/fd: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("list open file descriptors in /proc/self/fd: %w", err)
	}
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd < 3 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("mark file descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}
