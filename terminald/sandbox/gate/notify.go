package gate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp user-notification interface (linux/seccomp.h), which
// x/sys/unix names the constants of but not the structures.
type (
	seccompData struct {
		Nr                 int32
		Arch               uint32
		InstructionPointer uint64
		Args               [6]uint64
	}
	notif struct {
		ID    uint64
		PID   uint32
		Flags uint32
		Data  seccompData
	}
	notifResp struct {
		ID    uint64
		Val   int64
		Error int32
		Flags uint32
	}
	notifAddFD struct {
		ID         uint64
		Flags      uint32
		SrcFD      uint32
		NewFD      uint32
		NewFDFlags uint32
	}
)

// Ioctls the x/sys/unix constants lack: _IOW('!', 2, __u64) and
// _IOW('!', 3, struct seccomp_notif_addfd).
const (
	ioctlNotifIDValid = 0x40082102
	ioctlNotifAddFD   = 0x40182103
)

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// recv waits for the next notification.
func recv(listener int) (notif, error) {
	var n notif
	for {
		err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n))
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

// respond ends the notified call with val, or with errno when it is not 0.
func respond(listener int, id uint64, val int64, errno unix.Errno) error {
	r := notifResp{ID: id, Val: val, Error: -int32(errno)}
	return ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// valid reports whether the notified call is still waiting: after reading
// the caller's /proc entries, this says they were the caller's, not those
// of a process that reused its pid.
func valid(listener int, id uint64) bool {
	return ioctl(listener, ioctlNotifIDValid, unsafe.Pointer(&id)) == nil
}

// install puts src in the caller's descriptor table as number at,
// replacing what was there, close-on-exec when cloexec.
func install(listener int, id uint64, src, at int, cloexec bool) error {
	a := notifAddFD{ID: id, Flags: unix.SECCOMP_ADDFD_FLAG_SETFD, SrcFD: uint32(src), NewFD: uint32(at)}
	if cloexec {
		a.NewFDFlags = unix.O_CLOEXEC
	}
	return ioctl(listener, ioctlNotifAddFD, unsafe.Pointer(&a))
}

// readMemory reads n bytes at addr of process pid.
func readMemory(pid int, addr uint64, n int) ([]byte, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(addr)); err != nil {
		return nil, fmt.Errorf("read %d bytes at %#x of process %d: %w", n, addr, pid, err)
	}
	return b, nil
}

// family is the address family at the start of a sockaddr.
func family(sa []byte) uint16 { return binary.NativeEndian.Uint16(sa) }
