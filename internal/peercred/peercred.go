// Package peercred reads who is on the other end of a Unix socket: the
// peer's pid, uid and gid as the kernel recorded them at connect time
// (SO_PEERCRED), plus, on Linux 6.5 and later, a pidfd for that very process
// (SO_PEERPIDFD).
//
// Why the pidfd: a pid is only a snapshot. The peer may exit and its pid be
// reused by another process between connect() and the moment we read
// /proc/<pid> (polkit CVE-2013-4288, CVE-2019-6133). A pidfd always refers to
// the original process, so after reading /proc we check through it that the
// process is still alive: if it is, the pid still names it and what we read
// was about the right process.
package peercred

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// soPeerPIDFD is SO_PEERPIDFD (Linux 6.5+); x/sys does not name it yet.
const soPeerPIDFD = 77

// Creds are a socket peer's credentials.
type Creds struct {
	PID, UID, GID int
	// pidfd refers to the peer process, or is -1 where the kernel has no
	// SO_PEERPIDFD.
	pidfd int
}

// ErrGone means the peer process exited (its pid may now name another).
var ErrGone = errors.New("peer process has exited")

// Get reads the credentials of conn's peer. The caller must Close them.
func Get(conn syscall.Conn) (Creds, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return Creds{}, fmt.Errorf("peer credentials: %w", err)
	}
	c := Creds{pidfd: -1}
	var serr error
	err = raw.Control(func(fd uintptr) {
		var ucred *unix.Ucred
		ucred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if serr != nil {
			return
		}
		c.PID, c.UID, c.GID = int(ucred.Pid), int(ucred.Uid), int(ucred.Gid)
		if pidfd, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, soPeerPIDFD); err == nil {
			c.pidfd = pidfd
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return Creds{}, fmt.Errorf("peer credentials: %w", err)
	}
	return c, nil
}

// HasPIDFD reports whether the kernel gave a pidfd for the peer.
func (c Creds) HasPIDFD() bool { return c.pidfd >= 0 }

// Alive checks, through the pidfd, that the peer process still runs, so
// that what was just read about c.PID from /proc was about the peer and not
// a process that reused its pid. Without a pidfd it can only check that some
// process has the pid.
func (c Creds) Alive() error {
	if c.pidfd >= 0 {
		if err := unix.PidfdSendSignal(c.pidfd, 0, nil, 0); err != nil {
			if errors.Is(err, unix.ESRCH) {
				return ErrGone
			}
			return fmt.Errorf("check peer %d: %w", c.PID, err)
		}
		return nil
	}
	if err := unix.Kill(c.PID, 0); errors.Is(err, unix.ESRCH) {
		return ErrGone
	}
	return nil
}

// Close releases the pidfd.
func (c *Creds) Close() {
	if c.pidfd >= 0 {
		unix.Close(c.pidfd)
		c.pidfd = -1
	}
}

// FromConn is Get for a net.Conn that may not be a Unix socket.
func FromConn(conn net.Conn) (Creds, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return Creds{}, fmt.Errorf("peer credentials: %T is not a socket", conn)
	}
	return Get(sc)
}
