package lineage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/procfs"
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

// The Unix part of the kernel's socket table interface
// (linux/unix_diag.h), which x/sys/unix does not have.
const (
	udiagShowPeer = 0x04
	unixDiagPeer  = 2
	noCookie      = ^uint32(0)
)

type unixDiagReq struct {
	Family   uint8
	Protocol uint8
	Pad      uint16
	States   uint32
	Ino      uint32
	Show     uint32
	Cookie   [2]uint32
}

// unixDiagMsgLen is sizeof(struct unix_diag_msg).
const unixDiagMsgLen = 16

// unixPeer asks the kernel's socket table for the peer of the Unix
// socket with inode ino.
func unixPeer(ino uint32) (uint32, bool) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	req := unixDiagReq{Family: unix.AF_UNIX, States: ^uint32(0), Ino: ino, Show: udiagShowPeer, Cookie: [2]uint32{noCookie, noCookie}}
	hdr := unix.NlMsghdr{
		Len:   uint32(unix.SizeofNlMsghdr + unsafe.Sizeof(req)),
		Type:  unix.SOCK_DIAG_BY_FAMILY,
		Flags: unix.NLM_F_REQUEST,
	}
	msg := append((*[unix.SizeofNlMsghdr]byte)(unsafe.Pointer(&hdr))[:], (*[unsafe.Sizeof(req)]byte)(unsafe.Pointer(&req))[:]...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, false
	}
	buf := make([]byte, 1<<12)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, false
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil || len(msgs) == 0 || msgs[0].Header.Type == syscall.NLMSG_ERROR {
		return 0, false
	}
	b := msgs[0].Data
	if len(b) < unixDiagMsgLen || binary.NativeEndian.Uint32(b[4:8]) != ino {
		return 0, false
	}
	for b = b[unixDiagMsgLen:]; len(b) >= 4; {
		l, typ := int(binary.NativeEndian.Uint16(b[0:2])), binary.NativeEndian.Uint16(b[2:4])
		if l < 4 || l > len(b) {
			return 0, false
		}
		if typ == unixDiagPeer && l >= 8 {
			return binary.NativeEndian.Uint32(b[4:8]), true
		}
		step := (l + 3) &^ 3
		if step > len(b) {
			break
		}
		b = b[step:]
	}
	return 0, false
}
