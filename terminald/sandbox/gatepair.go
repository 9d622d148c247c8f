package sandbox

import (
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/terminald/sandbox/gate"
)

// gatePair is the socket pair the second stage hands the gate's listener
// over on: the monitor keeps the first end, the second stage gets the
// other as gateFD.
func gatePair() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: make the socket pair for the connect gate: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "gate"), os.NewFile(uintptr(fds[1]), "gate"), nil
}

// serveGate receives the listener of the second stage, whose pid is root,
// and answers its sandbox's connects until the sandbox has ended. Should
// the second stage fail before it hands the listener over, its end closes
// and there is nothing to serve: the program never ran.
func serveGate(ours *os.File, r Rules, root int) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(int(ours.Fd()), buf, oob, 0)
	if err != nil || oobn == 0 {
		return
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return
	}
	allowed := slices.DeleteFunc(slices.Clone(r.Allow), func(p string) bool { return slices.Contains(r.Vouch, p) })
	gate.Serve(fds[0], gate.Policy{Root: root, Vouch: r.Vouch, Allowed: allowed})
}

// handOverGate confines the calling thread with the gate's filter and
// sends the listener to the monitor on fd, then closes both: the program
// must never hold its own gate's listener. It is the last step before the
// exec, on the thread that execs.
func handOverGate(fd int) error {
	l, err := gate.Install()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	defer unix.Close(l)
	defer unix.Close(fd)
	if err := unix.Sendmsg(fd, []byte{0}, unix.UnixRights(l), nil, 0); err != nil {
		return fmt.Errorf("sandbox: hand the connect gate's listener to the monitor: %w", err)
	}
	return nil
}
