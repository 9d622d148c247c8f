package sandbox

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// privateDev covers /dev with a fresh tmpfs holding only devices, the
// files of devices that are device nodes (/dev/null, /dev/tty, …) bound
// from the host, /dev/pts as a new devpts instance whose multiplexer is
// /dev/ptmx, /dev/shm bound from the host, and the usual /dev/fd links —
// what bubblewrap's --dev gives. The tab's new PTYs (script, tmux, expect)
// come from its own devpts; no other tab's /dev/pts/N, and no console or
// virtual terminal, has a name here. The tab keeps its own terminal on fds
// 0–2 and as /dev/tty.
func privateDev(devices []string) error {
	var nodes []kept
	for _, d := range devices {
		if fi, err := os.Lstat(d); err != nil || fi.Mode()&fs.ModeDevice == 0 || filepath.Dir(d) != "/dev" {
			continue
		}
		ks, err := openKeeps([]string{d})
		if err != nil {
			return err
		}
		nodes = append(nodes, ks...)
	}
	defer func() {
		for _, k := range nodes {
			unix.Close(k.fd)
		}
	}()
	shm, err := openKeeps([]string{"/dev/shm"})
	if err != nil {
		return err
	}
	defer func() {
		for _, k := range shm {
			unix.Close(k.fd)
		}
	}()
	if err := mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return err
	}
	for _, k := range nodes {
		if k.path == "/dev/ptmx" {
			continue // the private devpts's, below
		}
		if _, err := bringBack([]kept{k}); err != nil {
			return err
		}
	}
	if _, err := bringBack(shm); err != nil {
		return err
	}
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		return err
	}
	if err := mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	for link, to := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(to, "/dev/"+link); err != nil {
			return err
		}
	}
	return nil
}

// readOnlyAll remounts every mount of the namespace read-only except
// /proc and /dev (whose parts privateDev and readOnlyProc see to): the
// tab writes only where writable then binds a path again. A flag the
// host set (nosuid, nodev, noexec, atime) is kept, or the kernel refuses
// the remount: in a user namespace those are locked.
func readOnlyAll() error {
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if within(m.point, "/proc") || within(m.point, "/dev") {
			continue
		}
		if err := mount("", m.point, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|m.flags, ""); err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
				continue // covered by a later mount, or out of reach
			}
			return err
		}
	}
	return nil
}

// writable binds each path onto itself, writable, after readOnlyAll. A
// path that vanished, or that lies on a mount the host made read-only
// (locked in a user namespace), is skipped: unwritable is the safe side.
func writable(paths []string) error {
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		if err := mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|flagsAt(mounts, p), ""); err != nil && !errors.Is(err, unix.EPERM) {
			return err
		}
	}
	return nil
}

// flagsAt returns the per-mount flags of the mount p lies on: the last of
// mounts (on top) whose mount point holds p.
func flagsAt(mounts []mountPoint, p string) uintptr {
	for i := len(mounts) - 1; i >= 0; i-- {
		if within(p, mounts[i].point) {
			return mounts[i].flags
		}
	}
	return 0
}

// mountPoint is one line of /proc/self/mountinfo.
type mountPoint struct {
	point string
	flags uintptr // the per-mount flags to keep, read-only aside
}

// mountPoints lists the namespace's mounts, in mountinfo's order (parents
// before their children).
func mountPoints() ([]mountPoint, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountPoint
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m, ok := parseMountInfo(sc.Text())
		if ok {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

// parseMountInfo reads the mount point and options of a mountinfo line:
// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw".
func parseMountInfo(line string) (mountPoint, bool) {
	f := strings.Fields(line)
	if len(f) < 6 {
		return mountPoint{}, false
	}
	return mountPoint{point: unescapeMountInfo(f[4]), flags: optionFlags(f[5])}, true
}

// unescapeMountInfo undoes mountinfo's octal escapes (\040 for a space,
// \011, \012, \134).
func unescapeMountInfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:min(i+4, len(s))]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return s[0] <= '3'
}

// optionFlags turns mountinfo's per-mount options into mount flags.
func optionFlags(opts string) uintptr {
	var flags uintptr
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "nosuid":
			flags |= unix.MS_NOSUID
		case "nodev":
			flags |= unix.MS_NODEV
		case "noexec":
			flags |= unix.MS_NOEXEC
		case "noatime":
			flags |= unix.MS_NOATIME
		case "nodiratime":
			flags |= unix.MS_NODIRATIME
		case "relatime":
			flags |= unix.MS_RELATIME
		case "nosymfollow":
			flags |= unix.MS_NOSYMFOLLOW
		}
	}
	return flags
}
