package holder

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// conn is one end of a holder connection: a SOCK_SEQPACKET Unix socket,
// so each message is one datagram and its descriptors travel with it.
type conn struct {
	c   *net.UnixConn
	wmu sync.Mutex // one datagram at a time; replies and exit reports interleave
	buf []byte     // read buffer, used by the one reading goroutine
	oob []byte
}

func newConn(c *net.UnixConn) *conn {
	return &conn{c: c, buf: make([]byte, MaxMsg+1), oob: make([]byte, unix.CmsgSpace(4*(maxFiles+1)))}
}

// send writes m and its files. The files stay open: the sender closes its
// copies when it no longer needs them.
func (c *conn) send(m msg) error {
	b, err := encode(m)
	if err != nil {
		return err
	}
	var oob []byte
	if len(m.files) > 0 {
		fds := make([]int, len(m.files))
		for i, f := range m.files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, _, err := c.c.WriteMsgUnix(b, oob, nil); err != nil {
		return fmt.Errorf("send %s to the holder connection: %w", m.Op, err)
	}
	return nil
}

// recv reads one message. Descriptors arrive close-on-exec (Go's
// ReadMsgUnix asks for MSG_CMSG_CLOEXEC), so none can leak into a tab's
// program. A message that fails to parse has its descriptors closed.
func (c *conn) recv() (msg, error) {
	n, oobn, flags, _, err := c.c.ReadMsgUnix(c.buf, c.oob)
	if err != nil {
		return msg{}, err
	}
	files, ferr := parseRights(c.oob[:oobn])
	if n == 0 && oobn == 0 {
		return msg{}, errEOF
	}
	if flags&(syscall.MSG_TRUNC|syscall.MSG_CTRUNC) != 0 || n > MaxMsg {
		closeAll(files)
		return msg{}, fmt.Errorf("%w: truncated datagram (%d bytes, flags %#x)", errBadMsg, n, flags)
	}
	if ferr != nil {
		closeAll(files)
		return msg{}, ferr
	}
	m, err := decode(c.buf[:n], len(files))
	if err != nil {
		closeAll(files)
		return msg{}, err
	}
	m.files = files
	return m, nil
}

// errEOF is the peer closing the connection (a zero-length datagram).
var errEOF = errors.New("holder connection closed")

func parseRights(oob []byte) ([]*os.File, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	cmsgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("%w: control message: %v", errBadMsg, err)
	}
	var files []*os.File
	var bad error
	for _, cm := range cmsgs {
		fds, err := unix.ParseUnixRights(&cm)
		if err != nil {
			bad = fmt.Errorf("%w: unexpected control message (level %d type %d)", errBadMsg, cm.Header.Level, cm.Header.Type)
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), fmt.Sprintf("holder-fd-%d", fd)))
		}
	}
	if len(files) > maxFiles {
		bad = fmt.Errorf("%w: %d descriptors in one message", errBadMsg, len(files))
	}
	return files, bad
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

func (c *conn) close() error { return c.c.Close() }
