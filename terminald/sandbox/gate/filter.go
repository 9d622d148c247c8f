package gate

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Offsets into struct seccomp_data, which the filter reads.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits on a little-endian machine
	offArg1 = 24
)

// x32Bit marks x32 system calls on x86-64, another numbering of the same
// calls: refused, so that connect cannot be reached under another number.
const x32Bit = 0x40000000

// program is the filter: connect is handed to the supervisor; creating a
// Unix datagram socket (socket or socketpair: a datagram goes to the path
// sendto names even from a connected one) and setting up io_uring are
// refused; calls of
// another architecture (32-bit code on a 64-bit kernel, with its own
// numbers) are refused; everything else is allowed.
func program() ([]unix.SockFilter, error) {
	arch, err := auditArch()
	if err != nil {
		return nil, err
	}
	var a asm
	a.load(offArch)
	a.jumpIf(arch, "native")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	a.label("native")
	a.load(offNr)
	a.jumpIfAtLeast(x32Bit, "foreign")
	a.jumpIf(uint32(unix.SYS_CONNECT), "notify")
	a.jumpIf(uint32(unix.SYS_IO_URING_SETUP), "eperm")
	a.jumpIf(uint32(unix.SYS_SOCKET), "socket")
	a.jumpIf(uint32(unix.SYS_SOCKETPAIR), "socket")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("socket")
	a.load(offArg0)
	a.jumpIf(unix.AF_UNIX, "unix")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("unix")
	a.load(offArg1)
	a.and(0xf) // the type, without SOCK_CLOEXEC and SOCK_NONBLOCK
	a.jumpIf(unix.SOCK_DGRAM, "eacces")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("notify")
	a.ret(unix.SECCOMP_RET_USER_NOTIF)
	a.label("eperm")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	a.label("eacces")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES))
	a.label("foreign")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	return a.assemble()
}

// asm assembles a classic BPF program with forward jumps to labels.
type asm struct {
	p      []unix.SockFilter
	jumps  map[int]string // instruction → the label its true branch goes to
	labels map[string]int
}

func (a *asm) load(off uint32) {
	a.p = append(a.p, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *asm) and(k uint32) {
	a.p = append(a.p, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

// jumpIf goes to label when the accumulator equals k, else on.
func (a *asm) jumpIf(k uint32, label string) { a.jump(unix.BPF_JEQ, k, label) }

// jumpIfAtLeast goes to label when the accumulator is k or more, else on.
func (a *asm) jumpIfAtLeast(k uint32, label string) { a.jump(unix.BPF_JGE, k, label) }

func (a *asm) jump(op uint16, k uint32, label string) {
	if a.jumps == nil {
		a.jumps = map[int]string{}
	}
	a.jumps[len(a.p)] = label
	a.p = append(a.p, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (a *asm) ret(k uint32) {
	a.p = append(a.p, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.p)
}

// assemble resolves the jumps; a jump may only go forward, and at most
// 255 instructions.
func (a *asm) assemble() ([]unix.SockFilter, error) {
	for at, name := range a.jumps {
		to, ok := a.labels[name]
		skip := to - at - 1
		if !ok || skip < 0 || skip > 255 {
			return nil, fmt.Errorf("gate: filter jump from %d to label %q cannot be encoded", at, name)
		}
		a.p[at].Jt = uint8(skip)
	}
	return a.p, nil
}

// auditArch is this machine's architecture as seccomp names it.
func auditArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("gate: no seccomp filter for %s", runtime.GOARCH)
}

// Install confines the calling thread with the filter and returns the
// listener the supervisor serves (Serve). The thread must be locked
// (runtime.LockOSThread) and must exec the sandboxed program next: the
// filter holds for that thread and whatever it executes, and the calling
// process must have no_new_privs set (or CAP_SYS_ADMIN in its user
// namespace). The listener must not reach the program: it is created
// close-on-exec, and the caller hands it to the supervisor first.
func Install() (listener int, err error) {
	p, err := program()
	if err != nil {
		return -1, err
	}
	prog := unix.SockFprog{Len: uint16(len(p)), Filter: &p[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(p)
	if errno != 0 {
		return -1, fmt.Errorf("gate: install the seccomp filter with a listener: %w", errno)
	}
	// The kernel makes the listener close-on-exec already; say so anyway.
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}
