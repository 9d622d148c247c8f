package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// worktreeRoots returns the writable roots that stand for the tab's
// directory dir (resolved): the root of the git working tree holding dir,
// so that an agent started in a subdirectory can still commit, and for a
// linked worktree also the repository's common git directory, where its
// objects and refs go. A working tree rooted at / or at the home directory
// (a dotfiles repository) does not widen anything: dir stays the root.
func worktreeRoots(dir, home string) []string {
	top := gitTop(dir)
	if top == "" || top != dir && (top == "/" || top == home) {
		return []string{dir}
	}
	roots := []string{top}
	if common := linkedCommonDir(top); common != "" {
		roots = append(roots, common)
	}
	return roots
}

// gitTop returns the nearest directory at or above dir that has a .git
// entry, as git finds its working tree, or "".
func gitTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == "/" {
			return ""
		}
	}
}

// linkedCommonDir returns the common git directory of the linked worktree
// rooted at top, or "" when top is not one.
//
// top/.git is then a file "gitdir: <repo>/.git/worktrees/<name>", which a
// tab that may write top could rewrite to point anywhere, and it could
// forge a whole fake gitdir in top. So the answer is trusted only if the
// gitdir lies in <common dir>/worktrees/ and git's own back-link there,
// <gitdir>/gitdir as `git worktree add` wrote it, names this very .git
// file: forging those takes writing in the common dir already. A .git that
// is a symbolic link is not followed.
func linkedCommonDir(top string) string {
	dotGit := filepath.Join(top, ".git")
	fi, err := os.Lstat(dotGit)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	gitdir, ok := readGitPath(dotGit, "gitdir: ", top)
	if !ok {
		return ""
	}
	back, ok := readGitPath(filepath.Join(gitdir, "gitdir"), "", gitdir)
	if !ok || !samePath(back, dotGit) {
		return ""
	}
	common, ok := readGitPath(filepath.Join(gitdir, "commondir"), "", gitdir)
	if !ok {
		return ""
	}
	realCommon, err1 := filepath.EvalSymlinks(common)
	realGitdir, err2 := filepath.EvalSymlinks(gitdir)
	if err1 != nil || err2 != nil || filepath.Dir(realGitdir) != filepath.Join(realCommon, "worktrees") {
		return ""
	}
	return realCommon
}

// readGitPath reads a one-line git pointer file: prefix, then a path,
// relative to base unless absolute.
func readGitPath(file, prefix, base string) (string, bool) {
	b, err := os.ReadFile(file)
	if err != nil || len(b) > 4096 {
		return "", false
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), prefix)
	if !ok || p == "" || strings.ContainsAny(p, "\n\x00") {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), true
}

// samePath reports whether a and b name the same existing file.
func samePath(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
