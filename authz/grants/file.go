package grants

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// maxFileSize bounds what load reads: a grants file holds a few hundred
// bytes per grant, so anything this large is not one.
const maxFileSize = 4 << 20

// fileState is what the store last saw of the grants file and its folder:
// enough to tell, with two lstat calls, that someone changed, replaced,
// removed, re-owned or re-moded either since. It is a cache key only:
// what a reload finds is compared grant by grant with what is in memory.
type fileState struct {
	exists                  bool
	dev, ino, size          uint64
	mtime, ctime            int64 // nanoseconds
	mode, uid               uint32
	dirDev, dirIno          uint64
	dirMode, dirUID         uint32
	dirMissing, dirReadable bool
}

// statState lstat's the folder and the file at path. Errors other than a
// missing file leave fields zero, which differ from any state a good file
// has, so the next check reloads and reports them.
func statState(path string) fileState {
	var st fileState
	var ds unix.Stat_t
	switch err := unix.Lstat(filepath.Dir(path), &ds); {
	case errors.Is(err, unix.ENOENT):
		st.dirMissing = true
	case err == nil:
		st.dirReadable = true
		st.dirDev, st.dirIno, st.dirMode, st.dirUID = ds.Dev, ds.Ino, ds.Mode, ds.Uid
	}
	var fs unix.Stat_t
	if err := unix.Lstat(path, &fs); err == nil {
		st.setFile(&fs)
	}
	return st
}

// setFile records the file's part of the state.
func (st *fileState) setFile(fs *unix.Stat_t) {
	st.exists = true
	st.dev, st.ino, st.size = fs.Dev, fs.Ino, uint64(fs.Size)
	st.mtime, st.ctime = fs.Mtim.Nano(), fs.Ctim.Nano()
	st.mode, st.uid = fs.Mode, fs.Uid
}

// checkDir refuses a folder of the grants file that someone else could
// change: a symbolic link, not a directory, owned by another user, or
// writable by its group or others (sshd's StrictModes). A missing folder
// is fine: there are no grants yet.
func checkDir(dir string, uid int) error {
	var st unix.Stat_t
	err := unix.Lstat(dir, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return brokenf(dir, "folder", "cannot be examined: %v", err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		target, _ := os.Readlink(dir)
		return brokenf(dir, "folder", "is a symbolic link (to %s), which whoever can change the link could point elsewhere; "+
			"make it a real directory of yours (mode 0700)", target)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return brokenf(dir, "folder", "is not a directory")
	case int(st.Uid) != uid:
		return brokenf(dir, "folder", "is owned by uid %d, not by you (uid %d), so its owner could put grants in it; "+
			"make it yours (chown) with mode 0700", st.Uid, uid)
	case st.Mode&0o022 != 0:
		return brokenf(dir, "folder", "is writable by its group or others (mode %04o), so they could replace the grants file; "+
			"run chmod 700 %s", st.Mode&0o7777, dir)
	}
	return nil
}

// checkFile refuses a grants file, already open as fd, that someone else
// could have written: not a regular file, owned by another user, or
// writable by its group or others.
func checkFile(path string, st *unix.Stat_t, uid int) error {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return brokenf(path, "file", "is not a regular file (mode %#o)", st.Mode&unix.S_IFMT)
	case int(st.Uid) != uid:
		return brokenf(path, "file", "is owned by uid %d, not by you (uid %d), so its owner could grant agents anything; "+
			"remove it, or make it yours (chown) with mode 0600", st.Uid, uid)
	case st.Mode&0o022 != 0:
		return brokenf(path, "file", "is writable by its group or others (mode %04o), so they could grant agents anything; "+
			"check its grants (phantom grants after fixing), then run chmod 600 %s", st.Mode&0o7777, path)
	}
	return nil
}

// load reads and checks the grants file: the folder and the file must be
// the user's alone (see checkDir, checkFile), and the content a valid
// grants file. A missing file is no grants. It returns the state of the
// file it read (by fstat, so a file swapped in after the read differs).
func load(path string, uid int) ([]Grant, fileState, error) {
	st := statState(path)
	if err := checkDir(filepath.Dir(path), uid); err != nil {
		return nil, st, err
	}
	// O_NOFOLLOW: a symbolic link is refused by the kernel, not by a check
	// that a swap could race; O_NONBLOCK: a FIFO put in its place does not
	// hang authz.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		st.exists = false
		return nil, st, nil
	case errors.Is(err, unix.ELOOP):
		target, _ := os.Readlink(path)
		return nil, st, brokenf(path, "file", "is a symbolic link (to %s), which whoever can change the link could point elsewhere; "+
			"replace it with a regular file of yours (mode 0600), or remove it", target)
	case err != nil:
		return nil, st, brokenf(path, "file", "cannot be opened: %v", err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var fs unix.Stat_t
	if err := unix.Fstat(fd, &fs); err != nil {
		return nil, st, brokenf(path, "file", "cannot be examined: %v", err)
	}
	st.setFile(&fs)
	if err := checkFile(path, &fs, uid); err != nil {
		return nil, st, err
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, st, brokenf(path, "file", "cannot be read: %v", err)
	}
	if len(b) > maxFileSize {
		return nil, st, brokenf(path, "file", "is larger than %d bytes, far more than any grants file", maxFileSize)
	}
	list, err := parse(b)
	if err != nil {
		return nil, st, brokenf(path, "file", "%v", err)
	}
	return list, st, nil
}

// parse reads the content of a grants file. Every grant must be complete
// and its id unique; the version must be the one this Phantom writes.
func parse(b []byte) ([]Grant, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %v", err)
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("has version %d, want %d", f.Version, fileVersion)
	}
	seen := map[string]bool{}
	for i, g := range f.Grants {
		if g.ID == "" || seen[g.ID] || g.Client == "" || !g.Capability.Valid() || !g.Scope.Valid() {
			return nil, fmt.Errorf("grant %d is malformed or duplicated: %+v", i, g)
		}
		seen[g.ID] = true
		f.Grants[i].Always = true
	}
	return f.Grants, nil
}

// brokenf is the error of a grants file (or its folder) that cannot be
// used. Its kind is FailedPrecondition: the human must repair or remove
// it. The kind is not part of the message, which status lines and
// refusals show as it is.
func brokenf(path, what, format string, args ...any) error {
	return &brokenError{msg: fmt.Sprintf("the grants %s %s %s; Phantom grants nothing from it until it is fixed "+
		"(authz reads it again as soon as it changes)", what, path, fmt.Sprintf(format, args...))}
}

// brokenError is a grants file that cannot be used.
type brokenError struct{ msg string }

func (e *brokenError) Error() string { return e.msg }

// Unwrap gives the error its kind.
func (e *brokenError) Unwrap() error { return errdefs.ErrFailedPrecondition }

// errChanged is writeFile's error when the file changed while the new one
// was being written.
var errChanged = errors.New("the grants file changed while it was being written")

// writeFile replaces the grants file atomically: a temporary file in the
// same folder, written, synced, renamed over the old one, and the folder
// synced so that the rename survives a crash. It refuses a folder that
// fails checkDir, and creates a missing one with mode 0700. Right before
// the rename it asks unchanged (when set) whether the file is still the
// one the new content was built from, and returns errChanged if not. It
// returns the state of the file written.
func writeFile(path string, f file, uid int, unchanged func() bool) (fileState, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fileState{}, fmt.Errorf("write grants: create folder %s: %w", dir, err)
	}
	if err := checkDir(dir, uid); err != nil {
		return fileState{}, err
	}
	if f.Grants == nil {
		f.Grants = []Grant{}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fileState{}, err
	}
	tmp, err := os.CreateTemp(dir, "."+FileName+".*")
	if err != nil {
		return fileState{}, fmt.Errorf("write grants file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(append(b, '\n'))
	}
	if err == nil {
		err = tmp.Sync()
	}
	st := statState(path)
	var fs unix.Stat_t
	if err == nil {
		if err = unix.Fstat(int(tmp.Fd()), &fs); err == nil {
			st.setFile(&fs)
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && unchanged != nil && !unchanged() {
		return fileState{}, errChanged
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fileState{}, fmt.Errorf("write grants file %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		// A failed folder sync is not reported: the file is in place and
		// in use; only its survival of a power cut is in doubt.
		_ = d.Sync()
		d.Close()
	}
	return st, nil
}
