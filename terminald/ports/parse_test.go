package ports

import (
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Captured on this kernel (6.18, x86_64, little-endian) with listeners on
// 127.0.0.1:8080 (inode 19419), [::1]:5173 (inode 19424) and a system
// listener on 0.0.0.0:2024 (inode 1603). Note the kernel appends attributes
// after each inet_diag_msg even though we asked for no extensions.
const (
	capturedDiagV4 = "7c000000140002004d000000983d0000020a00001f9000007f0000010000000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000010000000000000db4b0000050008000000000008000f00000000000c001500010000000000000006001600520000007c000000140002004d000000983d0000020a000007e8000000000000000000000000000000000000000000000000000000000000000000000000000001000000000000000000000000000000800000000000000043060000050008000000000008000f00000000000c00150001000000000000000600160052000000"
	capturedDiagV6 = "84000000140002004d000000983d00000a0a000014350000000000000000000000000000000000010000000000000000000000000000000000000000030000000000000000000000000000000010000000000000e04b0000050008000000000005000b000100000008000f00000000000c00150001000000000000000600160012000000"
	capturedDone   = "14000000030002004d000000983d000000000000"

	capturedProcTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 19419 2 00000000544eb478 100 0 0 10 0                     
   1: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1603 1 00000000884246ef 100 0 0 10 0                      
   2: 020200C0:9E80 507100CB:01BB 06 00000000:00000000 03:00000D41 00000000     0        0 0 3 000000009e76638c                                      
`
	capturedProcTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1435 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 19424 2 000000009afb50c7 100 0 0 10 0
`
)

var (
	l8080 = Listener{Port: 8080, Addr: netip.MustParseAddr("127.0.0.1"), Inode: 19419}
	l2024 = Listener{Port: 2024, Addr: netip.MustParseAddr("0.0.0.0"), Inode: 1603}
	l5173 = Listener{Port: 5173, Addr: netip.MustParseAddr("::1"), Inode: 19424}
)

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseDiagMsgs(t *testing.T) {
	if !littleEndian() {
		t.Skip("captured bytes are little-endian")
	}
	errMsg := unhex(t, "24000000020000004d000000983d0000"+"feffffff"+strings.Repeat("00", 16)) // error -2 (ENOENT) + echoed request header
	established := unhex(t, capturedDiagV4[:248])
	established[17] = 1 // TCP_ESTABLISHED
	badFamily := unhex(t, capturedDiagV4[:248])
	badFamily[16] = 7
	intr := unhex(t, capturedDiagV4[:248])
	intr[6] |= unix.NLM_F_DUMP_INTR
	tests := []struct {
		name     string
		in       []byte
		seq      uint32
		want     []Listener
		wantDone bool
		wantErr  string
	}{
		{name: "v4 two sockets", in: unhex(t, capturedDiagV4), seq: 0x4d, want: []Listener{l8080, l2024}},
		{name: "v6", in: unhex(t, capturedDiagV6), seq: 0x4d, want: []Listener{l5173}},
		{name: "done", in: unhex(t, capturedDone), seq: 0x4d, wantDone: true},
		{name: "v6 then done", in: unhex(t, capturedDiagV6+capturedDone), seq: 0x4d, want: []Listener{l5173}, wantDone: true},
		{name: "other seq ignored", in: unhex(t, capturedDiagV4+capturedDone), seq: 0x4e},
		{name: "empty", in: nil},
		{name: "not listening skipped", in: established, want: nil},
		{name: "error message", in: errMsg, wantErr: "no such file"},
		{name: "interrupted", in: intr, wantErr: "interrupted"},
		{name: "bad family", in: badFamily, wantErr: "address family 7"},
		{name: "short header", in: unhex(t, capturedDone)[:10], wantErr: "shorter than a netlink header"},
		{name: "length beyond buffer", in: unhex(t, capturedDiagV4)[:100], wantErr: "bad netlink message length 124"},
		{name: "length below header", in: unhex(t, "0800000003000200"+"4d000000983d0000"), wantErr: "bad netlink message length 8"},
		{name: "short diag msg", in: unhex(t, "20000000140002004d000000983d0000"+strings.Repeat("00", 16)), wantErr: "inet_diag_msg of 16 bytes"},
		{name: "unknown type", in: unhex(t, "10000000990002004d000000983d0000"), wantErr: "message type 153"},
		{name: "truncated error", in: unhex(t, "12000000020000004d000000983d00000000"), wantErr: "truncated NLMSG_ERROR"},
		{name: "ack is not an error", in: unhex(t, "14000000020000004d000000983d0000"+"00000000"), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, done, err := parseDiagMsgs(tc.in, tc.seq, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if done != tc.wantDone || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v done=%v, want %+v done=%v", got, done, tc.want, tc.wantDone)
			}
		})
	}
}

func TestBuildDiagRequest(t *testing.T) {
	if !littleEndian() {
		t.Skip("little-endian expectation")
	}
	got := hex.EncodeToString(buildDiagRequest(unix.AF_INET6, 0x4d))
	want := "48000000" + "1400" + "0103" + "4d000000" + "00000000" + // nlmsghdr
		"0a060000" + "00040000" + strings.Repeat("00", 48) // req_v2
	if got != want {
		t.Fatalf("request\n got %s\nwant %s", got, want)
	}
}

func FuzzParseDiagMsgs(f *testing.F) {
	for _, s := range []string{capturedDiagV4, capturedDiagV6, capturedDone, capturedDiagV6 + capturedDone} {
		b, _ := hex.DecodeString(s)
		f.Add(b, uint32(0x4d))
	}
	f.Add([]byte{}, uint32(0))
	f.Fuzz(func(t *testing.T, b []byte, seq uint32) {
		ls, _, err := parseDiagMsgs(b, seq, nil)
		if err != nil {
			return
		}
		// Re-encoding what was parsed must parse back to the same thing.
		var enc []byte
		for _, l := range ls {
			if !l.Addr.IsValid() || l.Inode > 1<<32-1 {
				t.Fatalf("parsed an impossible listener %+v", l)
			}
			enc = appendDiagMsg(enc, l, seq)
		}
		again, _, err := parseDiagMsgs(enc, seq, nil)
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if !slices.Equal(again, ls) {
			t.Fatalf("round trip: %+v != %+v", again, ls)
		}
	})
}

func TestParseProcNetTCP(t *testing.T) {
	if !littleEndian() {
		t.Skip("captured text is from a little-endian machine")
	}
	const hdr = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	line := func(local, st, uid, inode string) string {
		return "   0: " + local + " 00000000:0000 " + st + " 00000000:00000000 00:00000000 00000000 " + uid + " 0 " + inode + " 1 0 100 0 0 10 0\n"
	}
	tests := []struct {
		name    string
		in      string
		want    []Listener
		wantErr string
	}{
		{name: "captured tcp", in: capturedProcTCP, want: []Listener{l8080, l2024}},
		{name: "captured tcp6", in: capturedProcTCP6, want: []Listener{l5173}},
		{name: "header only", in: hdr},
		{name: "empty", in: ""},
		{name: "no trailing newline", in: hdr + strings.TrimSuffix(line("0100007F:1F90", "0A", "1000", "42"), "\n"),
			want: []Listener{{Port: 8080, Addr: netip.MustParseAddr("127.0.0.1"), Inode: 42, UID: 1000}}},
		{name: "lowercase hex", in: hdr + line("0100007f:1f90", "0a", "1000", "42"),
			want: []Listener{{Port: 8080, Addr: netip.MustParseAddr("127.0.0.1"), Inode: 42, UID: 1000}}},
		{name: "v6 wildcard", in: hdr + line("00000000000000000000000000000000:0050", "0A", "0", "7"),
			want: []Listener{{Port: 80, Addr: netip.IPv6Unspecified(), Inode: 7}}},
		{name: "v4-mapped", in: hdr + line("0000000000000000FFFF00000100007F:0050", "0A", "0", "7"),
			want: []Listener{{Port: 80, Addr: netip.MustParseAddr("::ffff:127.0.0.1"), Inode: 7}}},
		{name: "big uid and inode", in: hdr + line("00000000:0001", "0A", "4294967295", "18446744073709551615"),
			want: []Listener{{Port: 1, Addr: netip.IPv4Unspecified(), Inode: 1<<64 - 1, UID: 1<<32 - 1}}},
		{name: "non-listening skipped even if odd", in: hdr + line("zz:zz", "01", "x", "y")},
		{name: "blank lines", in: hdr + "\n  \n"},
		{name: "too few fields", in: hdr + "   0: 0100007F:1F90 00000000:0000 0A\n", wantErr: "line 2: 4 fields"},
		{name: "bad state", in: hdr + line("0100007F:1F90", "A", "0", "1"), wantErr: "bad state"},
		{name: "no colon", in: hdr + line("0100007F1F90", "0A", "0", "1"), wantErr: "no ':'"},
		{name: "short port", in: hdr + line("0100007F:1F9", "0A", "0", "1"), wantErr: "port"},
		{name: "odd address length", in: hdr + line("0100007:1F90", "0A", "0", "1"), wantErr: "7 hex digits"},
		{name: "bad hex address", in: hdr + line("0100007G:1F90", "0A", "0", "1"), wantErr: "bad hex digit"},
		{name: "uid overflow", in: hdr + line("0100007F:1F90", "0A", "4294967296", "1"), wantErr: "bad uid"},
		{name: "uid sign", in: hdr + line("0100007F:1F90", "0A", "+1", "1"), wantErr: "bad uid"},
		{name: "inode negative", in: hdr + line("0100007F:1F90", "0A", "0", "-1"), wantErr: "bad inode"},
		{name: "inode overflow", in: hdr + line("0100007F:1F90", "0A", "0", "18446744073709551616"), wantErr: "bad inode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcNetTCP([]byte(tc.in), nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseProcNetTCP(f *testing.F) {
	f.Add([]byte(capturedProcTCP))
	f.Add([]byte(capturedProcTCP6))
	f.Add([]byte("0: 0100007F:1F90 0 0A 0 0 0 1000 0 42\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ls, err := parseProcNetTCP(b, nil)
		if err != nil {
			return
		}
		enc := []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
		for i, l := range ls {
			enc = appendProcNetTCPLine(enc, i, l)
		}
		again, err := parseProcNetTCP(enc, nil)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", enc, err)
		}
		if !slices.Equal(again, ls) {
			t.Fatalf("round trip: %+v != %+v", again, ls)
		}
	})
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err         error
		unavailable bool
	}{
		{os.NewSyscallError("socket", unix.EPROTONOSUPPORT), true},
		{os.NewSyscallError("socket", unix.EPERM), true},
		{os.NewSyscallError("socket", unix.EACCES), true},
		{os.NewSyscallError("sock_diag", unix.ENOENT), true},
		{os.NewSyscallError("recvfrom", unix.EAGAIN), false},
		{errors.New("sock_diag: bad netlink message length"), false},
	} {
		err := classify(tc.err)
		if errors.Is(err, ErrNetlinkUnavailable) != tc.unavailable {
			t.Errorf("classify(%v) = %v", tc.err, err)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("classify(%v) lost the cause", tc.err)
		}
	}
}

func TestDumpFallback(t *testing.T) {
	defer func(f func() ([]Listener, error)) { dumpNetlink = f }(dumpNetlink)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := uint16(l.Addr().(*net.TCPAddr).Port)

	dumpNetlink = func() ([]Listener, error) {
		return nil, classify(os.NewSyscallError("socket(NETLINK_SOCK_DIAG)", unix.EPERM))
	}
	ls, err := Dump()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ls, func(x Listener) bool { return x.Port == port }) {
		t.Errorf("fallback dump lacks port %d: %+v", port, ls)
	}

	// Other errors are reported, not papered over.
	dumpNetlink = func() ([]Listener, error) { return nil, errors.New("boom") }
	if _, err := Dump(); err == nil || err.Error() != "boom" {
		t.Errorf("Dump() err = %v, want boom", err)
	}
}
