package gate

import (
	"encoding/binary"
	"testing"

	"github.com/phantom-dev/phantom/internal/sockdiag"
)

// diagMsg builds a unix_diag_msg for socket ino with the given attributes.
func diagMsg(ino uint32, attrs ...[]byte) []byte {
	b := make([]byte, 16)
	binary.NativeEndian.PutUint32(b[4:8], ino)
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

func attr(typ uint16, data []byte) []byte {
	l := 4 + len(data)
	a := make([]byte, (l+3)&^3)
	binary.NativeEndian.PutUint16(a[0:2], uint16(l))
	binary.NativeEndian.PutUint16(a[2:4], typ)
	copy(a[4:], data)
	return a
}

func vfs(ino, dev uint32) []byte {
	b := make([]byte, 8)
	binary.NativeEndian.PutUint32(b[0:4], ino)
	binary.NativeEndian.PutUint32(b[4:8], dev)
	return b
}

func TestMatches(t *testing.T) {
	file := target{file: 5, ino: 77, dev: 8<<8 | 1} // stat's encoding of 8:1
	abstract := target{file: -1, abstract: "own"}
	tests := []struct {
		name string
		msg  []byte
		t    target
		want uint64
	}{
		{"its file", diagMsg(900, attr(sockdiag.AttrName, []byte("/x.sock")), attr(sockdiag.AttrVFS, vfs(77, 8<<20|1))), file, 900},
		{"another inode", diagMsg(900, attr(sockdiag.AttrVFS, vfs(78, 8<<20|1))), file, 0},
		{"another device", diagMsg(900, attr(sockdiag.AttrVFS, vfs(77, 9<<20|1))), file, 0},
		// A disk 254:0 reads 0xfe00 in stat's encoding; the anonymous
		// device 0:65024, which a sandbox's own tmpfs can get, must not
		// pass for it.
		{"an anonymous device numbered like the disk", diagMsg(900, attr(sockdiag.AttrVFS, vfs(77, 254<<8))), target{file: 5, ino: 77, dev: 254 << 8}, 0},
		{"the disk itself", diagMsg(900, attr(sockdiag.AttrVFS, vfs(77, 254<<20))), target{file: 5, ino: 77, dev: 254 << 8}, 900},
		{"its abstract name", diagMsg(901, attr(sockdiag.AttrName, []byte("\x00own"))), abstract, 901},
		{"a longer abstract name", diagMsg(901, attr(sockdiag.AttrName, []byte("\x00own2"))), abstract, 0},
		{"a path, not abstract", diagMsg(901, attr(sockdiag.AttrName, []byte("own"))), abstract, 0},
		{"truncated", diagMsg(900)[:10], file, 0},
		{"bad attribute length", append(diagMsg(900), 0xff, 0xff, 1, 0), file, 0},
	}
	for _, tt := range tests {
		if got, ok := matches(tt.msg, tt.t); got != tt.want || ok != (tt.want != 0) {
			t.Errorf("%s: matches = %d, %v; want %d", tt.name, got, ok, tt.want)
		}
	}
}

func FuzzMatches(f *testing.F) {
	f.Add(diagMsg(900, attr(sockdiag.AttrVFS, vfs(77, 8<<20|1))))
	f.Add(diagMsg(901, attr(sockdiag.AttrName, []byte("\x00own"))))
	f.Fuzz(func(t *testing.T, b []byte) {
		matches(b, target{file: 5, ino: 77, dev: 8<<8 | 1})
		matches(b, target{file: -1, abstract: "own"})
	})
}
