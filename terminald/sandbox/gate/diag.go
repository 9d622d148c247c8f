package gate

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/sockdiag"
)

// listener finds the listening socket t names in the kernel's socket
// table (sock_diag): by the inode of its file, or by its abstract name.
// It returns the listening socket's own inode number, which its holder's
// descriptors link to ("socket:[N]"). More than one match — which a bound
// file or abstract name cannot have — is no match: the answer must be
// about the socket t is, or none.
func listener(t target) (uint64, bool) {
	var found []uint64
	err := sockdiag.Unix(sockdiag.Request{States: 1 << sockdiag.StateListen, Show: sockdiag.ShowName | sockdiag.ShowVFS}, true,
		func(msg []byte) {
			if ino, ok := matches(msg, t); ok {
				found = append(found, ino)
			}
		})
	if err != nil || len(found) != 1 {
		return 0, false
	}
	return found[0], true
}

// matches reads one unix_diag_msg and its attributes and reports the
// socket's inode when it is the one t names.
func matches(b []byte, t target) (uint64, bool) {
	s, ok := sockdiag.Parse(b)
	if !ok {
		return 0, false
	}
	match := false
	s.Attrs(func(typ uint16, data []byte) bool {
		switch {
		case typ == sockdiag.AttrVFS && t.file >= 0 && len(data) >= 8:
			vino := uint64(binary.NativeEndian.Uint32(data[0:4]))
			vdev := binary.NativeEndian.Uint32(data[4:8])
			match = vino == t.ino && sameDev(vdev, t.dev)
		case typ == sockdiag.AttrName && t.file < 0 && len(data) > 0 && data[0] == 0:
			match = string(data[1:]) == t.abstract
		}
		return !match
	})
	if !match {
		return 0, false
	}
	return uint64(s.Ino), true
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
