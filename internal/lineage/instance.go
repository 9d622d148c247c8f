package lineage

import (
	"path/filepath"
	"strings"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// Instance is the process tree of the Phantom instance l describes, seen
// from outside terminald: its terminald is the process serving l's
// terminald address.
func Instance(l paths.Layout) Tree {
	addr := l.DaemonAddr("terminald")
	return Tree{FS: procfs.Default, IsTerminald: ByCommandLine(addr, addr)}
}

// BesideSocket is the process tree of the instance whose daemon socket is
// sock: the instance's terminald listens on terminald.sock in the same
// runtime directory. A client uses it to check that the daemon it dialled
// is not a process inside that instance (an agent that swapped a socket).
func BesideSocket(sock string) Tree {
	addr := "unix://" + filepath.Join(filepath.Dir(sock), "terminald.sock")
	return Tree{FS: procfs.Default, IsTerminald: ByCommandLine(addr, addr)}
}

// SocketPath returns the path of a unix:// address.
func SocketPath(addr string) (string, bool) {
	p, ok := strings.CutPrefix(addr, "unix://")
	return p, ok && p != ""
}
