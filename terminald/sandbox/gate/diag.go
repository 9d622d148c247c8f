package gate

import (
	"encoding/binary"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Unix part of the kernel's socket table interface
// (linux/unix_diag.h), which x/sys/unix does not have.
const (
	udiagShowName = 0x01
	udiagShowVFS  = 0x02
	unixDiagName  = 0
	unixDiagVFS   = 1
	tcpListen     = 10 // the state of a listening socket
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

// listener finds the listening socket t names in the kernel's socket
// table (sock_diag): by the inode of its file, or by its abstract name.
// It returns the listening socket's own inode number, which its holder's
// descriptors link to ("socket:[N]"). More than one match — which a bound
// file or abstract name cannot have — is no match: the answer must be
// about the socket t is, or none.
func listener(t target) (uint64, bool) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	req := unixDiagReq{Family: unix.AF_UNIX, States: 1 << tcpListen, Show: udiagShowName | udiagShowVFS}
	hdr := unix.NlMsghdr{
		Len:   uint32(unix.SizeofNlMsghdr + unsafe.Sizeof(req)),
		Type:  unix.SOCK_DIAG_BY_FAMILY,
		Flags: unix.NLM_F_REQUEST | unix.NLM_F_DUMP,
	}
	msg := append((*[unix.SizeofNlMsghdr]byte)(unsafe.Pointer(&hdr))[:], (*[unsafe.Sizeof(req)]byte)(unsafe.Pointer(&req))[:]...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, false
	}
	buf := make([]byte, 1<<16)
	var found []uint64
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return 0, false
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return 0, false
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case syscall.NLMSG_ERROR:
				return 0, false
			case syscall.NLMSG_DONE:
				if len(found) != 1 {
					return 0, false
				}
				return found[0], true
			}
			if ino, ok := matches(m.Data, t); ok {
				found = append(found, ino)
			}
		}
	}
}

// matches reads one unix_diag_msg and its attributes and reports the
// socket's inode when it is the one t names.
func matches(b []byte, t target) (uint64, bool) {
	const msgLen = 16 // family, type, state, pad, ino, cookie[2]
	if len(b) < msgLen {
		return 0, false
	}
	ino := uint64(binary.NativeEndian.Uint32(b[4:8]))
	for a := b[msgLen:]; len(a) >= 4; {
		l := int(binary.NativeEndian.Uint16(a[0:2]))
		typ := binary.NativeEndian.Uint16(a[2:4])
		if l < 4 || l > len(a) {
			return 0, false
		}
		data := a[4:l]
		switch {
		case typ == unixDiagVFS && t.file >= 0 && len(data) >= 8:
			vino := uint64(binary.NativeEndian.Uint32(data[0:4]))
			vdev := binary.NativeEndian.Uint32(data[4:8])
			if vino == t.ino && sameDev(vdev, t.dev) {
				return ino, true
			}
		case typ == unixDiagName && t.file < 0 && len(data) > 0 && data[0] == 0:
			if string(data[1:]) == t.abstract {
				return ino, true
			}
		}
		step := (l + 3) &^ 3
		if step > len(a) {
			break
		}
		a = a[step:]
	}
	return 0, false
}

// sameDev compares the kernel's own device number (what sock_diag gives:
// major<<20 | minor) with stat's encoding of it, in the kernel's encoding
// only: the two encodings differ, and a device number read in the wrong
// one names another device — for a disk, an anonymous device (0:N) that a
// sandbox can get for a tmpfs of its own by mounting enough of them, and
// so pass its own decoy socket off as the human's.
func sameDev(kdev uint32, statDev uint64) bool {
	return uint64(kdev) == uint64(unix.Major(statDev))<<20|uint64(unix.Minor(statDev))
}
