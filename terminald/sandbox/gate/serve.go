package gate

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// maxSockaddr is the largest address connect takes (sockaddr_storage).
const maxSockaddr = 128

// Policy says which Unix sockets a sandbox may connect to besides those
// its own processes listen on.
type Policy struct {
	// Root is the sandbox's first process: it and its descendants are the
	// sandbox, whose own listening sockets it may always reach.
	Root int
	// Vouch are the sockets — the gateway's MCP socket — whose
	// connections start with a vouch line naming the process that asked
	// (peercred.VouchLine): their server tells callers by their process.
	Vouch []string
	// Allowed are the sockets the human allowed by name.
	Allowed []string
	// Logger records refusals; nil records nothing.
	Logger *slog.Logger
}

// Serve answers the connects of the sandbox whose seccomp listener is
// listener (from Install), until every process of that sandbox has ended.
// It closes listener.
func Serve(listener int, p Policy) error {
	defer unix.Close(listener)
	for {
		fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("gate: wait for a connect: %w", err)
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return nil // POLLHUP: no process is left under the filter
		}
		n, err := recv(listener)
		switch {
		case errors.Is(err, unix.ENOENT):
			continue // the caller was gone before it could be told
		case err != nil:
			return fmt.Errorf("gate: receive a connect: %w", err)
		}
		// Each in its own goroutine: a TCP connect may take its time.
		go p.answer(listener, n)
	}
}

// answer performs one connect for the sandbox, or refuses it.
func (p Policy) answer(listener int, n notif) {
	val, errno := p.connect(listener, n)
	if errno != 0 {
		val = 0
	}
	// An error here means the caller is gone (ENOENT): nobody to tell.
	_ = respond(listener, n.ID, val, errno)
}

// connect does what the sandbox's connect(fd, addr, len) asked, from the
// supervisor, and returns the call's result.
func (p Policy) connect(listener int, n notif) (int64, unix.Errno) {
	// The kernel names the calling thread; its process owns the
	// descriptors and is who the MCP socket's gateway must hear of.
	tid := int(n.PID)
	pid, err := processOf(tid)
	if err != nil {
		return 0, unix.ESRCH
	}
	fd, addr, alen := int(int32(n.Data.Args[0])), n.Data.Args[1], int(int32(n.Data.Args[2]))
	if alen < 2 || alen > maxSockaddr {
		return 0, unix.EINVAL
	}
	sa, err := readMemory(tid, addr, alen)
	if err != nil {
		return 0, unix.EFAULT
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, unix.ESRCH
	}
	defer unix.Close(pidfd)
	// What was read and opened was the caller's, not a process that
	// reused its pid, if the call is still waiting now.
	if !valid(listener, n.ID) {
		return 0, unix.ESRCH
	}
	sock, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return 0, errnoOf(err, unix.EBADF)
	}
	defer unix.Close(sock)
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return 0, errnoOf(err, unix.ENOTSOCK)
	}
	if domain != unix.AF_UNIX || family(sa) != unix.AF_UNIX {
		// The sandbox's own socket, connected with the address as read:
		// a socket of another family cannot reach a Unix one.
		return 0, rawConnect(sock, sa)
	}
	if _, err := unix.Getpeername(sock); err == nil {
		return 0, unix.EISCONN
	}
	t, errno := p.resolve(tid, sa[2:])
	if errno != 0 {
		return 0, errno
	}
	defer t.close()
	vouch, ok := p.decide(t)
	if !ok {
		p.refused(pid, t)
		return 0, unix.EACCES
	}
	conn, errno := dialLike(sock, t)
	if errno != 0 {
		return 0, errno
	}
	defer unix.Close(conn)
	if vouch {
		start := uint64(0)
		if st, err := procfs.Default.Stat(pid); err == nil {
			start = st.StartTime
		}
		if _, err := unix.Write(conn, peercred.VouchLine(pid, start)); err != nil {
			return 0, unix.ECONNRESET
		}
	}
	if err := install(listener, n.ID, conn, fd, cloexec(pid, fd)); err != nil {
		return 0, errnoOf(err, unix.EBADF)
	}
	return 0, 0
}

// refused logs a refused connect.
func (p Policy) refused(pid int, t target) {
	if p.Logger != nil {
		p.Logger.Info("sandbox: connect refused", "pid", pid, "socket", t.name)
	}
}

// dialLike connects a new socket of sock's type, blocking mode included,
// to t. The caller's socket options and binding do not carry over.
func dialLike(sock int, t target) (int, unix.Errno) {
	typ, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return -1, errnoOf(err, unix.ENOTSOCK)
	}
	fl, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return -1, errnoOf(err, unix.EBADF)
	}
	conn, err := unix.Socket(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, errnoOf(err, unix.ENOBUFS)
	}
	if err := unix.Connect(conn, t.addr()); err != nil {
		unix.Close(conn)
		return -1, errnoOf(err, unix.ECONNREFUSED)
	}
	if fl&unix.O_NONBLOCK != 0 {
		if err := unix.SetNonblock(conn, true); err != nil {
			unix.Close(conn)
			return -1, errnoOf(err, unix.EBADF)
		}
	}
	return conn, 0
}

// rawConnect connects sock to the address sa as the kernel takes it.
func rawConnect(sock int, sa []byte) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&sa[0])), uintptr(len(sa)))
	return errno
}

// cloexec reports whether the caller's descriptor fd is close-on-exec,
// from its fdinfo (the duplicate the supervisor holds has flags of its
// own).
func cloexec(pid, fd int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err != nil || flags&unix.O_CLOEXEC != 0
		}
	}
	return true
}

// processOf is the process (thread group) thread tid belongs to.
func processOf(tid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("no Tgid in /proc/%d/status", tid)
}

// errnoOf is err's errno, or def when it has none.
func errnoOf(err error, def unix.Errno) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return def
}
