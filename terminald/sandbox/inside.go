package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxScan bounds how many directory entries the launcher looks at, per
// scan root and breadth first, for sockets to mask, and MaxScanDepth how
// deep: a home directory can hold millions of files, and a tab must start
// in milliseconds. Sockets live near the top (~/.ssh, ~/.gnupg,
// ~/.docker/run, /run/docker.sock).
const (
	MaxScan      = 20000
	MaxScanDepth = 4
)

// procReadOnly are the parts of /proc a root tab sees read-only. /proc
// stays writable (a nested sandbox writes its own /proc/self/uid_map);
// these are what else a write there could reach: sysctls, which root
// writes by file mode alone, capabilities or not, the SysRq trigger,
// interrupt and bus settings — Docker keeps the same list read-only.
// Everyone else's file modes already refuse those writes, and leaving
// /proc whole lets a nested sandbox mount a /proc of its own (bubblewrap's
// --proc): the kernel refuses that where parts of /proc are covered.
var procReadOnly = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}

// buildWalls runs inside the new user and mount namespace (the launcher's
// second stage) and builds r's walls there, before Landlock. The order
// matters: what is kept is opened before anything covers it, and the
// private devpts, /tmp and tmpfs mounts exist before the Landlock rules
// name their paths.
func buildWalls(r Rules) error {
	if err := checkOwnNamespace(); err != nil {
		return err
	}
	// The private /tmp is also kept at its own host path (under Phantom's
	// runtime directory, which the walls hide), writable: a nested sandbox
	// may name /tmp by where it really is (Codex's bubblewrap binds the
	// mount's source path, from /proc/self/mountinfo).
	keepPaths, writePaths := r.Keep, slices.Concat(r.WriteDirs, r.WriteFiles)
	if r.Tmp != "" {
		keepPaths = slices.Sorted(slices.Values(append(slices.Clone(r.Keep), r.Tmp)))
		writePaths = append(writePaths, r.Tmp)
	}
	keeps, err := openKeeps(keepPaths)
	if err != nil {
		return err
	}
	defer func() {
		for _, k := range keeps {
			unix.Close(k.fd)
		}
	}()
	var created []string // by bringBack
	steps := []struct {
		what string
		do   func() error
	}{
		{"make every mount private", func() error { return mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") }},
		{"make a private /dev", func() error { return privateDev(r.Devices) }},
		{"mount the private /tmp", func() error { return privateTmp(r) }},
		{"hide the runtime directories", func() error { return hide(r.Hide, nil) }},
		{"keep the tab's paths in view", func() (err error) { created, err = bringBack(keeps); return err }},
		{"hide the runtime directories beneath kept paths", func() error { return hide(r.Hide, r.Keep) }},
		{"mask sockets", func() error { return maskSockets(r.Scan, r.Allow) }},
		{"make the file system read-only", readOnlyAll},
		{"make the tab's paths writable", func() error { return writable(writePaths) }},
		{"make the parents of kept paths read-only", func() error { return lockParents(created) }},
		{"make kernel settings in /proc read-only", readOnlyProc},
	}
	// The working directory still refers to the mounts as they were (the
	// host's, now read-only, or hidden): enter it again through the walls.
	wd, wdErr := os.Getwd()
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("sandbox: %s: %w", s.what, err)
		}
	}
	if wdErr == nil {
		if err := os.Chdir(wd); err != nil {
			return fmt.Errorf("sandbox: enter the working directory %s again inside the walls: %w", wd, err)
		}
	}
	return nil
}

// checkOwnNamespace refuses to build walls in the initial user namespace:
// the second stage run there by hand, as root, would remount the host's
// devpts and /tmp.
func checkOwnNamespace() error {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return fmt.Errorf("sandbox: read /proc/self/uid_map: %w", err)
	}
	if f := strings.Fields(string(b)); len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295" {
		return errors.New("sandbox: the launcher's second stage runs in the initial user namespace; it only runs in the one the first stage makes")
	}
	return nil
}

// mount is unix.Mount with the paths in its error.
func mount(source, target, fstype string, flags uintptr, data string) error {
	if err := unix.Mount(source, target, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s on %s: %w", cmpOr(source, fstype), target, err)
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// privateTmp binds r.Tmp (the launcher's first stage created it) on /tmp
// and creates the temporary directories inside it ($TMPDIR).
func privateTmp(r Rules) error {
	if r.Tmp == "" {
		return nil
	}
	if err := mount(r.Tmp, "/tmp", "", unix.MS_BIND, ""); err != nil {
		return err
	}
	for _, d := range r.WriteDirs {
		if within(d, "/tmp") {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
	}
	return nil
}

// hide covers each directory of dirs that exists with a fresh tmpfs; with
// under, only those beneath one of under (what bringBack uncovered).
func hide(dirs, under []string) error {
	for _, d := range dirs {
		if under != nil && !slices.ContainsFunc(under, func(k string) bool { return k != d && within(d, k) }) {
			continue
		}
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
			return err
		}
	}
	return nil
}

// kept is a path opened before the walls went up.
type kept struct {
	path string
	fd   int
	st   unix.Stat_t
}

// openKeeps opens each path to keep (O_PATH: any file type, no access
// needed). A path that does not exist has nothing to keep.
func openKeeps(paths []string) ([]kept, error) {
	var out []kept
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		k := kept{path: p, fd: fd}
		if err := unix.Fstat(fd, &k.st); err != nil {
			unix.Close(fd)
			return out, fmt.Errorf("sandbox: stat %s: %w", p, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// bringBack binds each kept path that the walls covered back where it
// was, creating its mount point (parents first; keeps are sorted, so a
// parent comes back before what lies in it). It returns the topmost
// directories it had to create, for lockParents.
func bringBack(keeps []kept) ([]string, error) {
	var created []string
	for _, k := range keeps {
		var st unix.Stat_t
		if unix.Stat(k.path, &st) == nil && st.Dev == k.st.Dev && st.Ino == k.st.Ino {
			continue // still in view
		}
		top, err := mkdirAll(filepath.Dir(k.path))
		if err != nil {
			return created, err
		}
		if top != "" && !slices.ContainsFunc(created, func(c string) bool { return within(top, c) }) {
			created = append(created, top)
		}
		if k.st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := os.Mkdir(k.path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return created, err
			}
		} else if f, err := os.OpenFile(k.path, os.O_CREATE|os.O_WRONLY, 0o600); err != nil {
			return created, err
		} else {
			f.Close()
		}
		if err := mount(fmt.Sprintf("/proc/self/fd/%d", k.fd), k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return created, err
		}
	}
	return created, nil
}

// mkdirAll is os.MkdirAll that returns the topmost directory it created,
// "" if dir existed.
func mkdirAll(dir string) (string, error) {
	top := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == "/" {
			break
		}
		top = d
	}
	if top == "" {
		return "", nil
	}
	return top, os.MkdirAll(dir, 0o700)
}

// lockParents makes the directories bringBack created to reach a kept
// path read-only. They stand where Phantom's own directories stand on the
// host (its runtime directory, the MCP socket's): a tab that could write
// there would seem to write Phantom's files, and a tool that trusts those
// paths would read what the tab put there.
func lockParents(dirs []string) error {
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := mount(d, d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		if err := mount("", d, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flagsAt(mounts, d), ""); err != nil {
			return err
		}
	}
	return nil
}

// maskSockets binds /dev/null over every socket found beneath roots
// (breadth first, within MaxScan entries and MaxScanDepth levels per
// root), except the allowed ones: connecting to a masked socket is
// refused (ECONNREFUSED), in this namespace only.
func maskSockets(roots, allow []string) error {
	for _, root := range roots {
		socks := findSockets(root, MaxScan, MaxScanDepth)
		for _, s := range socks {
			if slices.Contains(allow, s) {
				continue
			}
			if err := mount("/dev/null", s, "", unix.MS_BIND, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// findSockets lists the sockets beneath root, breadth first, looking at
// no more than max entries and depth levels. Symbolic links are not
// followed; unreadable directories are skipped.
func findSockets(root string, max, depth int) []string {
	var socks []string
	level := []string{root}
	seen := 0
	for d := 0; d < depth && len(level) > 0; d++ {
		var next []string
		for _, dir := range level {
			ents, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if seen++; seen > max {
					return socks
				}
				p := filepath.Join(dir, e.Name())
				switch {
				case e.Type()&fs.ModeSocket != 0:
					socks = append(socks, p)
				case e.IsDir():
					next = append(next, p)
				}
			}
		}
		level = next
	}
	return socks
}

// readOnlyProc remounts procReadOnly read-only for root (the flags /proc
// has, nosuid, nodev and noexec, must be kept: they are locked in a user
// namespace).
func readOnlyProc() error {
	if os.Geteuid() != 0 {
		return nil
	}
	for _, p := range procReadOnly {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		if err := mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return err
		}
	}
	return nil
}

// dropCapabilities empties the calling thread's capability sets,
// bounding set included, so that the program — root's too — cannot undo
// the walls. Capabilities are per thread: call it on the thread that
// execs. The price for root: mapping uid 0 into a nested user namespace
// takes CAP_SETFCAP (Linux 5.12), so a root tab cannot start nested
// sandboxes that map root (bubblewrap run by root); keeping CAP_SETFCAP
// would let it set file capabilities that hold on the host.
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("sandbox: drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: clear the ambient capabilities: %w", err)
	}
	var data [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0]); err != nil {
		return fmt.Errorf("sandbox: clear the capabilities: %w", err)
	}
	return nil
}
