package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once the child pid has exited (it stays a zombie for
// its owner to reap), waiting on a pidfd through Go's netpoller. Why:
// exec.Cmd.Wait blocks an OS thread in waitid for as long as the program
// runs, so a terminald that waited for each tab's program that way held
// one thread per tab (207 for 200 tabs). Waiting here first leaves
// Cmd.Wait nothing to block on. Where pidfds cannot be polled (kernels
// before 5.3) it returns at once and Cmd.Wait blocks as before.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	// A non-blocking descriptor is registered with the poller.
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// A pidfd is readable once its process has exited. Read calls the
	// function again each time the poller reports the descriptor ready;
	// false means "not yet, wait". A descriptor the poller refused makes
	// Read fail at once, which returns too.
	// EINTR is retried here, not by returning false: the poller is
	// edge-triggered and would not report the same exit twice.
	_ = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if err == unix.EINTR {
				continue
			}
			return err != nil || n > 0
		}
	})
}
