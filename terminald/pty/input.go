package pty

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Modes is what the terminal's line discipline does with typed input
// (its termios, as the program on the slave set it).
type Modes struct {
	// Canonical is ICANON: typed text waits in the line discipline until
	// a line ends, and only whole lines can be read.
	Canonical bool
	// Signals is ISIG: Intr (usually Ctrl-C) interrupts the foreground
	// process group and discards the line being typed.
	Signals bool
	// CRIsNewline is ICRNL without IGNCR: Enter (CR) ends a line in
	// canonical mode.
	CRIsNewline bool
	// Intr is the interrupt character (VINTR), 0 when disabled.
	Intr byte
}

// InputModes reads the terminal's input modes through the master: the
// termios ioctls on a master act on its slave.
func InputModes(master *os.File) (Modes, error) {
	var m Modes
	err := control(master, func(fd int) error {
		tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return err
		}
		m = Modes{
			Canonical:   tio.Lflag&unix.ICANON != 0,
			Signals:     tio.Lflag&unix.ISIG != 0,
			CRIsNewline: tio.Iflag&unix.ICRNL != 0 && tio.Iflag&unix.IGNCR == 0,
			Intr:        tio.Cc[unix.VINTR],
		}
		return nil
	})
	if err != nil {
		return Modes{}, fmt.Errorf("read the input modes of %s: %w", master.Name(), err)
	}
	return m, nil
}

// Unread returns how many typed bytes the program on the terminal has not
// read yet: the slave's input queue (TIOCINQ), with the tty layer's
// pending buffer work flushed into it first. In canonical mode it counts
// only whole lines: a line still being typed is not readable, so it is
// not counted.
//
// The count is taken on a descriptor of the slave opened from the master
// (TIOCGPTPEER, without becoming anyone's controlling terminal) and
// closed at once: a slave descriptor kept open would keep the master from
// seeing the terminal's end.
func Unread(master *os.File) (int, error) {
	var n int
	err := control(master, func(fd int) error {
		sfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK))
		if errno != 0 {
			return errno
		}
		defer unix.Close(int(sfd))
		// poll makes the line discipline take what the tty layer still
		// holds for it (n_tty_poll flushes the port's buffer work).
		_, _ = unix.Poll([]unix.PollFd{{Fd: int32(sfd), Events: unix.POLLIN}}, 0)
		var err error
		n, err = unix.IoctlGetInt(int(sfd), unix.TIOCINQ)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count the unread input of %s: %w", master.Name(), err)
	}
	return n, nil
}

// Unrendered returns how many bytes the program wrote that the master
// has not read yet (FIONREAD on the master, the buffer work flushed
// first, as for Unread).
func Unrendered(master *os.File) (int, error) {
	var n int
	err := control(master, func(fd int) (err error) {
		_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
		n, err = unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count the unread output of %s: %w", master.Name(), err)
	}
	return n, nil
}
