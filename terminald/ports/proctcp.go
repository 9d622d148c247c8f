package ports

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
)

// DumpProc returns the listening TCP sockets listed in <procRoot>/net/tcp
// and <procRoot>/net/tcp6. It is the fallback for when netlink sock_diag is
// not allowed; it costs ~10 ms or more instead of ~0.2 ms (see Dump).
//
// /proc/net is the network namespace of the reading thread, as is a netlink
// socket, so both sources describe the same sockets. A missing tcp6 file
// (IPv6 disabled) is not an error.
func DumpProc(procRoot string) ([]Listener, error) {
	var out []Listener
	for _, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join(procRoot, "net", name))
		if err != nil {
			if name == "tcp6" && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		out, err = parseProcNetTCP(b, out)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(procRoot, "net", name), err)
		}
	}
	return out, nil
}

// parseProcNetTCP parses the text of /proc/net/tcp or /proc/net/tcp6 and
// appends the sockets in state LISTEN (0A) to out. Lines look like
//
//	sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
//	 0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 ...
//
// The address is the in-memory (network order) __be32 words printed as
// host-order hex, so on a little-endian machine 127.0.0.1 reads 0100007F;
// the port is printed in host order. The family is told by the address
// length (8 or 32 hex digits).
func parseProcNetTCP(b []byte, out []Listener) ([]Listener, error) {
	first := true
	for lineNo := 1; len(b) > 0; lineNo++ {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		if first {
			first = false
			if bytes.Contains(line, []byte("local_address")) {
				continue // header
			}
		}
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 10 {
			return out, fmt.Errorf("line %d: %d fields, want at least 10", lineNo, len(f))
		}
		st, err := parseHex(f[3], 2)
		if err != nil {
			return out, fmt.Errorf("line %d: bad state %q", lineNo, truncate(f[3]))
		}
		if st != tcpListen {
			continue
		}
		var l Listener
		if l.Addr, l.Port, err = parseHexAddrPort(f[1]); err != nil {
			return out, fmt.Errorf("line %d: bad local address %q: %v", lineNo, truncate(f[1]), err)
		}
		uid, err := strconv.ParseUint(string(f[7]), 10, 32)
		if err != nil || !allDigits(f[7]) {
			return out, fmt.Errorf("line %d: bad uid %q", lineNo, truncate(f[7]))
		}
		l.UID = uint32(uid)
		if l.Inode, err = strconv.ParseUint(string(f[9]), 10, 64); err != nil || !allDigits(f[9]) {
			return out, fmt.Errorf("line %d: bad inode %q", lineNo, truncate(f[9]))
		}
		out = append(out, l)
	}
	return out, nil
}

// parseHexAddrPort parses "0100007F:1F90" or a 32-digit IPv6 form.
func parseHexAddrPort(b []byte) (netip.Addr, uint16, error) {
	i := bytes.IndexByte(b, ':')
	if i < 0 {
		return netip.Addr{}, 0, errors.New("no ':'")
	}
	hexAddr, hexPort := b[:i], b[i+1:]
	port, err := parseHex(hexPort, 4)
	if err != nil {
		return netip.Addr{}, 0, fmt.Errorf("port: %v", err)
	}
	var raw [16]byte
	switch len(hexAddr) {
	case 8, 32:
		for w := 0; w < len(hexAddr)/8; w++ {
			v, err := parseHex(hexAddr[w*8:w*8+8], 8)
			if err != nil {
				return netip.Addr{}, 0, fmt.Errorf("address: %v", err)
			}
			binary.NativeEndian.PutUint32(raw[w*4:], uint32(v))
		}
	default:
		return netip.Addr{}, 0, fmt.Errorf("address of %d hex digits, want 8 or 32", len(hexAddr))
	}
	if len(hexAddr) == 8 {
		return netip.AddrFrom4([4]byte(raw[:4])), uint16(port), nil
	}
	return netip.AddrFrom16(raw), uint16(port), nil
}

// parseHex parses exactly n hex digits.
func parseHex(b []byte, n int) (uint64, error) {
	if len(b) != n {
		return 0, fmt.Errorf("%d hex digits, want %d", len(b), n)
	}
	var v uint64
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, fmt.Errorf("bad hex digit %q", c)
		}
		v = v<<4 | uint64(d)
	}
	return v, nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// appendProcNetTCPLine formats l as a /proc/net/tcp{,6} line; the inverse
// of parseProcNetTCP, used by tests.
func appendProcNetTCPLine(b []byte, sl int, l Listener) []byte {
	b = fmt.Appendf(b, "%4d: ", sl)
	var raw []byte
	if l.Addr.Is4() {
		a := l.Addr.As4()
		raw = a[:]
	} else {
		a := l.Addr.As16()
		raw = a[:]
	}
	for w := 0; w < len(raw); w += 4 {
		b = fmt.Appendf(b, "%08X", binary.NativeEndian.Uint32(raw[w:]))
	}
	zeros := "00000000"
	if !l.Addr.Is4() {
		zeros = "00000000000000000000000000000000"
	}
	return fmt.Appendf(b, ":%04X %s:0000 0A 00000000:00000000 00:00000000 00000000 %5d        0 %d 1 0000000000000000 100 0 0 10 0\n",
		l.Port, zeros, l.UID, l.Inode)
}
