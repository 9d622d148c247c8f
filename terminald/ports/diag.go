// Package ports finds the TCP ports that the processes of each tab listen on,
// so the UI can offer "open localhost:5173" for a dev server started in a tab.
//
// It works in two steps, because the kernel gives the two halves of the
// answer in different places:
//
//  1. Dump lists the listening TCP sockets of this network namespace with
//     their inode numbers, through netlink sock_diag (about 0.2 ms), falling
//     back to /proc/net/tcp{,6} where netlink is not allowed.
//  2. Tracker maps those inodes to tabs by walking /proc/<pid>/fd of the
//     processes that belong to each tab, and caches the answer until the set
//     of listening sockets or the set of tabs changes, because that walk is
//     the expensive part (milliseconds for 100 tabs).
package ports

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Listener is a TCP socket in the LISTEN state.
type Listener struct {
	Port  uint16     // local port, in host order
	Addr  netip.Addr // local address: 0.0.0.0 / :: for a wildcard bind
	Inode uint64     // socket inode, as in /proc/<pid>/fd/* -> "socket:[Inode]"
	UID   uint32     // owner uid (the uid of the process that created it)
}

// Why netlink rather than /proc/net/tcp: the kernel formats /proc/net/tcp
// as text for every socket in the namespace (established ones included) and
// we then parse it back; that measured 10-12 ms even on an idle machine and
// 26 ms with 4,000 sockets. A sock_diag dump filters to LISTEN sockets in the
// kernel and returns fixed-size binary records: 0.15-0.2 ms. The tracker
// polls, so the difference is paid on every tick.

// sock_diag wire layout (include/uapi/linux/inet_diag.h). x/sys/unix has the
// constants but not these structs, so they are encoded by hand.
//
//	struct inet_diag_sockid {             // 48 bytes
//		__be16 idiag_sport, idiag_dport;
//		__be32 idiag_src[4], idiag_dst[4];
//		__u32  idiag_if;
//		__u32  idiag_cookie[2];
//	};
//	struct inet_diag_req_v2 {              // 56 bytes
//		__u8 sdiag_family, sdiag_protocol, idiag_ext, pad;
//		__u32 idiag_states;
//		struct inet_diag_sockid id;
//	};
//	struct inet_diag_msg {                 // 72 bytes
//		__u8 idiag_family, idiag_state, idiag_timer, idiag_retrans;
//		struct inet_diag_sockid id;
//		__u32 idiag_expires, idiag_rqueue, idiag_wqueue, idiag_uid, idiag_inode;
//	};
//
// Ports and addresses are in network byte order (big-endian); everything
// else, including the netlink header, is in host byte order.
const (
	sizeofSockID       = 48
	sizeofDiagReqV2    = 8 + sizeofSockID
	sizeofDiagMsg      = 4 + sizeofSockID + 20
	tcpListen          = 10 // TCP_LISTEN in include/net/tcp_states.h
	nlmsgAlignTo       = 4
	diagRecvBufSize    = 32 << 10 // the kernel caps a dump datagram below 32 KiB (SKB_WITH_OVERHEAD(32768) in netlink_recvmsg)
	diagMaxAttempts    = 3        // retries of a dump the kernel flags as interrupted
	diagReceiveTimeout = 2 * time.Second
)

var native = binary.NativeEndian

// ErrNetlinkUnavailable wraps the error of a netlink dump that cannot work
// in this environment (sandboxed, seccomp-filtered, module missing). Dump
// falls back to /proc/net/tcp when it sees one.
var ErrNetlinkUnavailable = errors.New("sock_diag netlink unavailable")

// Dump returns the listening TCP sockets (IPv4 and IPv6) of the calling
// thread's network namespace. It uses netlink sock_diag and falls back to
// parsing /proc/net/tcp and /proc/net/tcp6 if netlink is unavailable.
//
// The order of the result is unspecified.
func Dump() ([]Listener, error) {
	ls, err := dumpNetlink()
	if errors.Is(err, ErrNetlinkUnavailable) {
		ls, perr := DumpProc("/proc")
		if perr != nil {
			return nil, errors.Join(err, perr)
		}
		return ls, nil
	}
	return ls, err
}

// dumpNetlink is DumpNetlink; tests replace it to exercise the fallback.
var dumpNetlink = DumpNetlink

var nlSeq atomic.Uint32

// DumpNetlink dumps the listening TCP sockets through NETLINK_SOCK_DIAG.
// Errors that mean netlink cannot be used here wrap ErrNetlinkUnavailable.
func DumpNetlink() ([]Listener, error) {
	var err error
	for range diagMaxAttempts {
		var ls []Listener
		ls, err = dumpNetlinkOnce()
		if !errors.Is(err, errDumpInterrupted) {
			return ls, err
		}
	}
	return nil, err
}

var errDumpInterrupted = errors.New("sock_diag dump interrupted (NLM_F_DUMP_INTR)")

func dumpNetlinkOnce() ([]Listener, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, classify(os.NewSyscallError("socket(NETLINK_SOCK_DIAG)", err))
	}
	defer unix.Close(fd)
	// The kernel answers a dump at once, but a receive must never hang the
	// tracker: bound it.
	tv := unix.NsecToTimeval(diagReceiveTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, os.NewSyscallError("setsockopt(SO_RCVTIMEO)", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, classify(os.NewSyscallError("bind(netlink)", err))
	}
	buf := make([]byte, diagRecvBufSize)
	var out []Listener
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		seq := nlSeq.Add(1)
		req := buildDiagRequest(family, seq)
		if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return nil, classify(os.NewSyscallError("sendto(netlink)", err))
		}
		for done := false; !done; {
			n, from, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				if err == unix.EINTR {
					continue
				}
				return nil, classify(os.NewSyscallError("recvfrom(netlink)", err))
			}
			if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
				continue // not from the kernel
			}
			if n >= len(buf) {
				return nil, fmt.Errorf("sock_diag: reply of %d bytes filled the buffer", n)
			}
			out, done, err = parseDiagMsgs(buf[:n], seq, out)
			if err != nil {
				return nil, classify(err)
			}
		}
	}
	return out, nil
}

// classify marks the errors after which /proc/net/tcp should be tried.
func classify(err error) error {
	for _, e := range []syscall.Errno{
		unix.EPERM, unix.EACCES, // seccomp, LSM, sandbox
		unix.EPROTONOSUPPORT, unix.EAFNOSUPPORT, // kernel without sock_diag
		unix.ENOENT,     // inet_diag / tcp_diag module not loaded
		unix.EOPNOTSUPP, // gVisor and similar
	} {
		if errors.Is(err, e) {
			return fmt.Errorf("%w: %w", ErrNetlinkUnavailable, err)
		}
	}
	return err
}

// buildDiagRequest encodes nlmsghdr + inet_diag_req_v2 asking for a dump of
// the TCP sockets of one family in state LISTEN.
func buildDiagRequest(family uint8, seq uint32) []byte {
	b := make([]byte, unix.SizeofNlMsghdr+sizeofDiagReqV2)
	native.PutUint32(b[0:], uint32(len(b)))
	native.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	native.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	native.PutUint32(b[8:], seq)
	native.PutUint32(b[12:], 0) // port id: let the kernel fill it in
	r := b[unix.SizeofNlMsghdr:]
	r[0] = family
	r[1] = unix.IPPROTO_TCP
	r[2] = 0 // idiag_ext: no extensions
	native.PutUint32(r[4:], 1<<tcpListen)
	// id: all zero, i.e. no filter on addresses, ports or cookie.
	return b
}

// parseDiagMsgs parses one datagram of a sock_diag dump reply (a sequence of
// netlink messages each carrying an inet_diag_msg) and appends the LISTEN
// sockets it holds to out. done reports NLMSG_DONE. Messages whose sequence
// number is not seq are ignored (stale replies); seq 0 accepts any.
//
// It never panics on malformed input; a malformed message is an error.
func parseDiagMsgs(b []byte, seq uint32, out []Listener) ([]Listener, bool, error) {
	for len(b) > 0 {
		if len(b) < unix.SizeofNlMsghdr {
			return out, false, fmt.Errorf("sock_diag: %d trailing bytes, shorter than a netlink header", len(b))
		}
		msgLen := native.Uint32(b[0:])
		typ := native.Uint16(b[4:])
		flags := native.Uint16(b[6:])
		mseq := native.Uint32(b[8:])
		if msgLen < unix.SizeofNlMsghdr || uint64(msgLen) > uint64(len(b)) {
			return out, false, fmt.Errorf("sock_diag: bad netlink message length %d (%d bytes left)", msgLen, len(b))
		}
		body := b[unix.SizeofNlMsghdr:msgLen]
		// Advance past the message and its alignment padding; the last
		// message of a datagram may omit the padding.
		next := min(uint64(msgLen+nlmsgAlignTo-1)&^(nlmsgAlignTo-1), uint64(len(b)))
		b = b[next:]

		if seq != 0 && mseq != seq {
			continue
		}
		if flags&unix.NLM_F_DUMP_INTR != 0 {
			// The socket table changed during the dump: the result may be
			// inconsistent, start over.
			return out, false, errDumpInterrupted
		}
		switch typ {
		case unix.NLMSG_DONE:
			return out, true, nil
		case unix.NLMSG_ERROR:
			if len(body) < 4 {
				return out, false, errors.New("sock_diag: truncated NLMSG_ERROR")
			}
			errno := -int32(native.Uint32(body))
			if errno == 0 {
				continue // an ACK
			}
			return out, false, os.NewSyscallError("sock_diag", syscall.Errno(errno))
		case unix.NLMSG_NOOP:
			continue
		case unix.SOCK_DIAG_BY_FAMILY:
		default:
			return out, false, fmt.Errorf("sock_diag: unexpected netlink message type %d", typ)
		}
		if len(body) < sizeofDiagMsg {
			return out, false, fmt.Errorf("sock_diag: inet_diag_msg of %d bytes, want %d", len(body), sizeofDiagMsg)
		}
		l, ok, err := decodeDiagMsg(body)
		if err != nil {
			return out, false, err
		}
		if ok {
			out = append(out, l)
		}
	}
	return out, false, nil
}

// decodeDiagMsg decodes one inet_diag_msg (followed by attributes we did not
// ask for and ignore). ok is false for a socket not in LISTEN state.
func decodeDiagMsg(m []byte) (l Listener, ok bool, err error) {
	family, state := m[0], m[1]
	if state != tcpListen {
		return l, false, nil
	}
	id := m[4 : 4+sizeofSockID]
	l.Port = binary.BigEndian.Uint16(id[0:])
	switch family {
	case unix.AF_INET:
		l.Addr = netip.AddrFrom4([4]byte(id[4:8]))
	case unix.AF_INET6:
		l.Addr = netip.AddrFrom16([16]byte(id[4:20]))
	default:
		return l, false, fmt.Errorf("sock_diag: unexpected address family %d", family)
	}
	tail := m[4+sizeofSockID:]
	l.UID = native.Uint32(tail[12:])
	// idiag_inode is 32 bits on the wire; socket inodes come from
	// get_next_ino(), which is 32 bits too.
	l.Inode = uint64(native.Uint32(tail[16:]))
	return l, true, nil
}

// appendDiagMsg encodes l as a netlink SOCK_DIAG_BY_FAMILY message; the
// inverse of parseDiagMsgs, used by tests and benchmarks.
func appendDiagMsg(b []byte, l Listener, seq uint32) []byte {
	m := make([]byte, unix.SizeofNlMsghdr+sizeofDiagMsg)
	native.PutUint32(m[0:], uint32(len(m)))
	native.PutUint16(m[4:], unix.SOCK_DIAG_BY_FAMILY)
	native.PutUint16(m[6:], unix.NLM_F_MULTI)
	native.PutUint32(m[8:], seq)
	d := m[unix.SizeofNlMsghdr:]
	d[1] = tcpListen
	binary.BigEndian.PutUint16(d[4:], l.Port)
	if l.Addr.Is4() {
		d[0] = unix.AF_INET
		a := l.Addr.As4()
		copy(d[8:], a[:])
	} else {
		d[0] = unix.AF_INET6
		a := l.Addr.As16()
		copy(d[8:], a[:])
	}
	tail := d[4+sizeofSockID:]
	native.PutUint32(tail[12:], l.UID)
	native.PutUint32(tail[16:], uint32(l.Inode))
	return append(b, m...)
}

// sortListeners orders by inode then port, for comparing dumps.
func sortListeners(ls []Listener) {
	slices.SortFunc(ls, func(a, b Listener) int {
		if a.Inode != b.Inode {
			if a.Inode < b.Inode {
				return -1
			}
			return 1
		}
		if c := int(a.Port) - int(b.Port); c != 0 {
			return c
		}
		return a.Addr.Compare(b.Addr)
	})
}
