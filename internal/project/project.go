// Package project names the project a directory belongs to, the key of a
// standing grant: the top of the git working tree holding it (the
// directory holding the nearest `.git` entry, a directory in a main
// checkout or a file in a linked worktree), else the directory itself.
//
// Why not `git rev-parse --show-toplevel`: git reads the repository's
// config and environment (core.worktree, GIT_DIR, GIT_WORK_TREE, a `.git`
// file's gitdir line), all of which a tab can write, so a tab of project B
// could make git name project A and inherit A's grants. Of reads no file's
// contents and runs nothing: it resolves symbolic links (so a link inside
// B to A names A) and looks only at which directories hold a `.git`
// entry. A tab can still create a `.git` entry below its project, which
// names a narrower project that no grant is keyed by yet; it cannot make
// a directory outside its own ancestry its project.
package project

import (
	"os"
	"path/filepath"
)

// Of is the project of dir: the nearest directory at or above dir, after
// resolving symbolic links, that holds a `.git` entry; else dir itself
// (resolved). A relative or empty dir is "": it names no project.
func Of(dir string) string {
	if !filepath.IsAbs(dir) {
		return ""
	}
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if top := Worktree(dir); top != "" {
		return top
	}
	return dir
}

// Worktree is the nearest directory at or above dir that holds a `.git`
// entry — the root of the git working tree holding dir, found the way git
// looks for it but without running git — or "" when there is none. dir is
// taken as it is (no symbolic link is resolved).
func Worktree(dir string) string {
	for d := dir; filepath.IsAbs(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == "/" {
			break
		}
	}
	return ""
}
