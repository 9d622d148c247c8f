package agentconf

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// keepBackups is how many backups of one file we keep; older ones go.
const keepBackups = 3

// backupInfix names backups: <file>.phantom-backup-<UTC timestamp>.
const backupInfix = ".phantom-backup-"

// perms are the modes of files and directories we create.
type perms struct{ file, dir fs.FileMode }

var (
	// userPerms: a user's configuration can hold tokens.
	userPerms = perms{0o600, 0o700}
	// projectPerms: project files are shared and often committed.
	projectPerms = perms{0o644, 0o755}
)

// errRaced means the file changed while we edited it.
var errRaced = errors.New("changed while being edited")

// editFile rewrites the file at path with edit's result.
//
// A symlink is written through: the link stays and its target gets the new
// text, since a dotfile manager (stow, home-manager, chezmoi) links files
// the user means to keep where they are. The target keeps its mode (and
// owner, where we may set it); a new file gets p.file. Before anything is
// replaced the old text is copied to <path>.phantom-backup-<time>. The new
// text is written to a temporary file in the target's directory and renamed
// over it, so a reader sees the old file or the new one, never half of one.
// If the file changes while we work (an agent saving its settings), we
// start over from its new text rather than lose the agent's change.
//
// It returns whether the file changed and the backup's path ("" if none).
func editFile(path string, p perms, edit func(old []byte, exists bool) ([]byte, error)) (changed bool, backup string, err error) {
	for range 3 {
		changed, backup, err = editOnce(path, p, edit)
		if !errors.Is(err, errRaced) {
			return changed, backup, err
		}
	}
	return false, "", errors.New("it kept changing while phantom edited it; quit the agent and try again")
}

func editOnce(path string, p perms, edit func(old []byte, exists bool) ([]byte, error)) (bool, string, error) {
	target, err := resolve(path)
	if err != nil {
		return false, "", err
	}
	old, err := os.ReadFile(target)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, "", fmt.Errorf("cannot read %s: %w", target, unwrapPath(err))
	}
	out, err := edit(old, exists)
	if err != nil {
		return false, "", err
	}
	if exists && bytes.Equal(out, old) {
		return false, "", nil
	}
	mode, owner := p.file, (*syscall.Stat_t)(nil)
	if exists {
		fi, err := os.Stat(target)
		if err != nil {
			return false, "", fmt.Errorf("cannot read %s: %w", target, unwrapPath(err))
		}
		mode = fi.Mode().Perm()
		owner, _ = fi.Sys().(*syscall.Stat_t)
	} else if err := os.MkdirAll(filepath.Dir(target), p.dir); err != nil {
		return false, "", fmt.Errorf("cannot create its directory: %w", err)
	}
	tmp, err := writeTemp(target, out, mode, owner)
	if err != nil {
		return false, "", err
	}
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	now, err := os.ReadFile(target)
	if exists != (err == nil) || !bytes.Equal(now, old) {
		return false, "", errRaced
	}
	var backup string
	if exists {
		if backup, err = makeBackup(path, old, mode); err != nil {
			return false, "", err
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return false, "", fmt.Errorf("cannot replace %s: %w", target, unwrapPath(err))
	}
	syncDir(filepath.Dir(target))
	if exists {
		pruneBackups(path)
	}
	return true, backup, nil
}

// resolve follows symlinks at path. A dangling link is refused: writing
// through it would create a file somewhere the user may not expect.
func resolve(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		dest, _ := os.Readlink(path)
		return "", fmt.Errorf("it is a symbolic link to %s, which cannot be followed (%v); fix or remove the link", dest, unwrapPath(err))
	}
	return target, nil
}

// unwrapPath drops the operation and path from an *fs.PathError, which the
// message around it already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeTemp writes data to a new temporary file beside target, with mode
// and (best effort) owner, flushed to disk, and returns its path.
func writeTemp(target string, data []byte, mode fs.FileMode, owner *syscall.Stat_t) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".phantom-tmp-*")
	if err != nil {
		return "", fmt.Errorf("cannot write beside %s: %w", target, unwrapPath(err))
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(name)
		return "", fmt.Errorf("cannot write %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if owner != nil && (int(owner.Uid) != os.Getuid() || int(owner.Gid) != os.Getgid()) {
		_ = f.Chown(int(owner.Uid), int(owner.Gid)) // only root may; others keep their own file
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("cannot write %s: %w", name, err)
	}
	return name, nil
}

// makeBackup copies old to a new <path>.phantom-backup-<time> with mode.
func makeBackup(path string, old []byte, mode fs.FileMode) (string, error) {
	for {
		name := path + backupInfix + time.Now().UTC().Format("20060102T150405.000000000Z")
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue // the same nanosecond: take the next one
		}
		if err != nil {
			return "", fmt.Errorf("cannot make a backup beside it: %w", unwrapPath(err))
		}
		_, err = f.Write(old)
		if err == nil {
			err = f.Chmod(mode)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("cannot make a backup in %s: %w", name, err)
		}
		return name, nil
	}
}

// Backups lists the backups of path, oldest first.
func Backups(path string) []string {
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil
	}
	prefix := filepath.Base(path) + backupInfix
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			names = append(names, filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
	sort.Strings(names) // the timestamps sort as text
	return names
}

// pruneBackups removes all but the newest keepBackups backups of path.
func pruneBackups(path string) {
	names := Backups(path)
	for len(names) > keepBackups {
		os.Remove(names[0])
		names = names[1:]
	}
}

// syncDir flushes a directory so a rename in it survives a crash.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
