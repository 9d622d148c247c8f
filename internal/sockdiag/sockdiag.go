// Package sockdiag asks the kernel's socket table (NETLINK_SOCK_DIAG,
// linux/unix_diag.h, which x/sys/unix does not cover) about Unix sockets:
// a listener's bound file or abstract name, or a socket's peer. The
// sandbox's connect gate finds the listener a connect names with it;
// lineage finds the other end of a bridge's socket pair.
package sockdiag

import (
	"encoding/binary"
	"errors"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What a request may ask to be shown, and the attributes that show it.
const (
	ShowName = 0x01 // AttrName: the bound name (abstract ones start with NUL)
	ShowVFS  = 0x02 // AttrVFS: the bound file's inode and device
	ShowPeer = 0x04 // AttrPeer: the peer's inode

	AttrName = 0
	AttrVFS  = 1
	AttrPeer = 2
)

// StateListen is a listening socket's state (TCP_LISTEN); States is a
// mask of 1<<state.
const StateListen = 10

// AllStates asks for sockets in every state.
const AllStates = ^uint32(0)

// noCookie matches any socket in an exact lookup.
const noCookie = ^uint32(0)

// Request is a unix_diag_req.
type Request struct {
	// States selects sockets by state (a mask of 1<<state).
	States uint32
	// Ino names the one socket an exact lookup asks about.
	Ino uint32
	// Show is what each answer carries (Show*).
	Show uint32
}

type wireRequest struct {
	Family   uint8
	Protocol uint8
	Pad      uint16
	States   uint32
	Ino      uint32
	Show     uint32
	Cookie   [2]uint32
}

// msgLen is sizeof(struct unix_diag_msg): family, type, state, pad, ino,
// cookie[2].
const msgLen = 16

// Socket is one answer: a unix_diag_msg and its attributes, unparsed.
type Socket struct {
	// Ino is the socket's inode, which its holders' descriptors link to
	// ("socket:[N]").
	Ino   uint32
	attrs []byte
}

// Parse reads one unix_diag_msg; false when it is too short to be one.
func Parse(b []byte) (Socket, bool) {
	if len(b) < msgLen {
		return Socket{}, false
	}
	return Socket{Ino: binary.NativeEndian.Uint32(b[4:8]), attrs: b[msgLen:]}, true
}

// Attrs calls fn with each attribute's type and data, in order, until fn
// returns false; a malformed attribute ends the walk.
func (s Socket) Attrs(fn func(typ uint16, data []byte) bool) {
	for a := s.attrs; len(a) >= 4; {
		l, typ := int(binary.NativeEndian.Uint16(a[0:2])), binary.NativeEndian.Uint16(a[2:4])
		if l < 4 || l > len(a) || !fn(typ, a[4:l]) {
			return
		}
		step := (l + 3) &^ 3
		if step > len(a) {
			return
		}
		a = a[step:]
	}
}

// Attr is the data of the first attribute of type typ, or nil.
func (s Socket) Attr(typ uint16) []byte {
	var out []byte
	s.Attrs(func(t uint16, data []byte) bool {
		if t == typ {
			out = data
			return false
		}
		return true
	})
	return out
}

// Unix asks the socket table about Unix sockets: with dump, every socket
// in req.States; else the one socket req.Ino. Each answer goes to each,
// raw (see Parse). An error, or an answer the kernel marks as one, is an
// error: a caller that cannot be told must not guess.
func Unix(req Request, dump bool, each func(msg []byte)) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	w := wireRequest{Family: unix.AF_UNIX, States: req.States, Ino: req.Ino, Show: req.Show}
	flags := uint16(unix.NLM_F_REQUEST)
	if dump {
		flags |= unix.NLM_F_DUMP
	} else {
		w.Cookie = [2]uint32{noCookie, noCookie}
	}
	hdr := unix.NlMsghdr{Len: uint32(unix.SizeofNlMsghdr + unsafe.Sizeof(w)), Type: unix.SOCK_DIAG_BY_FAMILY, Flags: flags}
	msg := append((*[unix.SizeofNlMsghdr]byte)(unsafe.Pointer(&hdr))[:], (*[unsafe.Sizeof(w)]byte)(unsafe.Pointer(&w))[:]...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case syscall.NLMSG_ERROR:
				return errors.New("sock_diag: the kernel answered with an error")
			case syscall.NLMSG_DONE:
				return nil
			}
			each(m.Data)
		}
		if !dump {
			return nil // an exact lookup answers in one message
		}
	}
}
