package buildinfo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// deletedSuffix is what the kernel appends to /proc/PID/exe's target once
// the file a process runs has been replaced or removed.
const deletedSuffix = " (deleted)"

// ProcessBinary is the binary process pid runs, from /proc/PID/exe: the
// link names the path it was started from (with " (deleted)" once that
// file was replaced), and stat through it reaches the file the process
// really runs, even a deleted one.
func ProcessBinary(pid int) (Binary, error) {
	exe := "/proc/" + strconv.Itoa(pid) + "/exe"
	target, err := os.Readlink(exe)
	if err != nil {
		return Binary{}, fmt.Errorf("find the binary of pid %d: %w", pid, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(exe, &st); err != nil {
		return Binary{}, fmt.Errorf("find the binary of pid %d: %w", pid, err)
	}
	b := Binary{Path: target, Written: time.Unix(st.Mtim.Unix()), dev: st.Dev, ino: st.Ino}
	// A file really named "x (deleted)" reads the same as a deleted "x":
	// only a target that no longer leads to the running file was replaced.
	if p, ok := strings.CutSuffix(target, deletedSuffix); ok && !sameFile(target, st) {
		b.Path, b.Deleted = p, true
	}
	return b, nil
}

// SameFile reports whether a and b are the same file on disk.
func (b Binary) SameFile(other Binary) bool {
	return b.dev == other.dev && b.ino == other.ino
}

// OnDisk is the file now at b's path, which differs from b's own file
// once the binary was rebuilt or upgraded.
func (b Binary) OnDisk() (Binary, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(b.Path, &st); err != nil {
		return Binary{}, fmt.Errorf("look at %s: %w", b.Path, err)
	}
	return Binary{Path: b.Path, Written: time.Unix(st.Mtim.Unix()), dev: st.Dev, ino: st.Ino}, nil
}

// sameFile reports whether path leads to the file st describes.
func sameFile(path string, st syscall.Stat_t) bool {
	var p syscall.Stat_t
	return syscall.Stat(path, &p) == nil && p.Dev == st.Dev && p.Ino == st.Ino
}
