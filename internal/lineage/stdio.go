package lineage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/sockdiag"
)

// talksOnlyTo reports whether every other end of the bridge's standard
// input and output is held by process parent alone: the MCP client that
// started the bridge is the one speaking on it. A process that starts the
// bridge on a pipe or FIFO of its own and then execs a granted agent's
// binary (so that the process tree shows that agent behind the bridge)
// still holds, or has handed on, the other ends, and fails this.
//
// A pipe's two ends are one inode; a socket pair's are two, linked by the
// kernel's socket table (sock_diag's UNIX_DIAG_PEER). Anything else — a
// regular file, a FIFO on disk, a terminal — is no client talking, and
// fails.
func talksOnlyTo(fs procfs.FS, bridge, parent int) bool {
	var ends []string
	for _, fd := range []string{"0", "1"} {
		link, err := os.Readlink(filepath.Join(fs.Root, strconv.Itoa(bridge), "fd", fd))
		if err != nil {
			return false
		}
		end, ok := otherEnd(link)
		if !ok {
			return false
		}
		ends = append(ends, end)
	}
	pids, err := fs.Pids()
	if err != nil {
		return false
	}
	heldByParent := map[string]bool{}
	for _, pid := range pids {
		if pid == bridge {
			continue
		}
		dir := filepath.Join(fs.Root, strconv.Itoa(pid), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or another user's: none of ours
		}
		for _, f := range fds {
			link, err := os.Readlink(filepath.Join(dir, f.Name()))
			if err != nil {
				continue
			}
			for _, end := range ends {
				if link != end {
					continue
				}
				if pid != parent {
					return false
				}
				heldByParent[end] = true
			}
		}
	}
	return heldByParent[ends[0]] && heldByParent[ends[1]]
}

// otherEnd is how the other end of the descriptor link names itself in
// /proc/PID/fd: the same "pipe:[N]" for a pipe, the peer's "socket:[M]"
// for a Unix socket pair.
func otherEnd(link string) (string, bool) {
	switch {
	case strings.HasPrefix(link, "pipe:["):
		return link, true
	case strings.HasPrefix(link, "socket:[") && strings.HasSuffix(link, "]"):
		ino, err := strconv.ParseUint(link[len("socket:["):len(link)-1], 10, 32)
		if err != nil {
			return "", false
		}
		peer, ok := unixPeer(uint32(ino))
		if !ok || peer == 0 {
			return "", false
		}
		return "socket:[" + strconv.FormatUint(uint64(peer), 10) + "]", true
	}
	return "", false
}

// unixPeer asks the kernel's socket table for the peer of the Unix
// socket with inode ino.
func unixPeer(ino uint32) (uint32, bool) {
	var peer []byte
	err := sockdiag.Unix(sockdiag.Request{States: sockdiag.AllStates, Ino: ino, Show: sockdiag.ShowPeer}, false, func(msg []byte) {
		if s, ok := sockdiag.Parse(msg); ok && s.Ino == ino {
			peer = s.Attr(sockdiag.AttrPeer)
		}
	})
	if err != nil || len(peer) < 4 {
		return 0, false
	}
	return binary.NativeEndian.Uint32(peer), true
}
