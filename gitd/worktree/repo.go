// Package worktree is gitd's real work: it runs the real git binary to
// list, add, remove and tidy a repository's worktrees, refusing — before it
// changes anything — arguments that look like options, paths outside the
// repository's worktree folder, branch names git would reject, and
// removals that could lose work. Operations that change a repository are
// serialized per repository (keyed by its common git directory).
package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/reaper"
)

// DefaultWorkers bounds how many git commands one listing runs at once.
const DefaultWorkers = 4

// Options configures a Manager.
type Options struct {
	// Git is the git binary; default "git" from PATH.
	Git string
	// Env is the environment git runs with; default the daemon's own.
	Env []string
	// WorktreeRoot, when set, holds every repository's worktree folder as
	// <WorktreeRoot>/<repository name>; otherwise a repository's worktree
	// folder is <its parent>/<its name>.worktrees.
	WorktreeRoot string
	// Tabs reaches terminald; nil when there is none.
	Tabs Tabs
	// Workers bounds concurrent git commands per listing; default
	// DefaultWorkers.
	Workers int
	// Reaper starts every git command, when gitd is a child subreaper
	// (see internal/reaper); nil starts them directly.
	Reaper *reaper.Reaper
}

// Manager runs worktree operations.
type Manager struct {
	git     *git
	root    string
	tabs    Tabs
	workers int

	mu    sync.Mutex
	locks map[string]chan struct{} // common dir → a one-slot semaphore
}

// New makes a Manager.
func New(opts Options) (*Manager, error) {
	g, err := newGit(opts.Git, opts.Env)
	if err == nil {
		g.reaper = opts.Reaper
	}
	if err != nil {
		return nil, err
	}
	if opts.WorktreeRoot != "" && !filepath.IsAbs(opts.WorktreeRoot) {
		return nil, fmt.Errorf("worktree_root %q must be an absolute path", opts.WorktreeRoot)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	return &Manager{git: g, root: filepath.Clean(opts.WorktreeRoot), tabs: opts.Tabs, workers: opts.Workers,
		locks: map[string]chan struct{}{}}, nil
}

// repo is a resolved repository.
type repo struct {
	// commonDir is the repository's common git directory, the lock key.
	commonDir string
	// main is the main worktree's path (a bare repository's directory).
	main string
	// folder is where new worktrees go.
	folder string
	// entries is git's worktree list, main first.
	entries []Entry
}

func invalid(field, value, why string) error {
	return fmt.Errorf("%s %q: %s: %w", field, value, why, errdefs.ErrInvalidArgument)
}

// checkArg refuses values that git could take for an option, or that cannot
// be passed to a program at all.
func checkArg(field, value string) error {
	if strings.HasPrefix(value, "-") {
		return invalid(field, value, "must not start with '-'")
	}
	if strings.ContainsRune(value, 0) {
		return invalid(field, value, "must not contain a NUL byte")
	}
	return nil
}

// resolve finds the repository that repository (else callerDir) is in.
func (m *Manager) resolve(ctx context.Context, repository, callerDir string) (*repo, error) {
	dir, field := repository, "repository"
	if dir == "" {
		dir, field = callerDir, "caller_directory"
	}
	if dir == "" {
		return nil, fmt.Errorf("repository: none given, and the caller has no tab directory to default to: %w", errdefs.ErrInvalidArgument)
	}
	if err := checkArg(field, dir); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(dir) {
		return nil, invalid(field, dir, "must be an absolute path")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, invalid(field, dir, "is not an existing directory")
	}
	out, err := m.git.run(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, invalid(field, dir, "is not in a git repository")
	}
	common := filepath.Clean(strings.TrimSpace(string(out)))
	return &repo{commonDir: common}, nil
}

// load reads git's worktree list and derives the main worktree and the
// worktree folder. Call it with the repository's lock held when acting on
// what it returns.
func (m *Manager) load(ctx context.Context, r *repo) error {
	out, err := m.git.run(ctx, r.commonDir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return err
	}
	entries, err := ParseWorktreeList(out)
	if err != nil {
		return fmt.Errorf("repository %s: %w", r.commonDir, err)
	}
	if len(entries) == 0 {
		return fmt.Errorf("repository %s: git lists no worktrees", r.commonDir)
	}
	r.entries = entries
	r.main = filepath.Clean(entries[0].Path)
	name := filepath.Base(r.main)
	if entries[0].Bare {
		name = strings.TrimSuffix(name, ".git")
	}
	if m.root != "." && m.root != "" {
		r.folder = filepath.Join(m.root, name)
	} else {
		r.folder = filepath.Join(filepath.Dir(r.main), name+".worktrees")
	}
	return nil
}

// lock serializes changes to the repository whose common dir is key; the
// wait ends early if ctx does.
func (m *Manager) lock(ctx context.Context, key string) (unlock func(), err error) {
	m.mu.Lock()
	ch, ok := m.locks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		m.locks[key] = ch
	}
	m.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for another operation on %s: %w", key, ctx.Err())
	}
}

// open resolves, locks and loads a repository for a change.
func (m *Manager) open(ctx context.Context, repository, callerDir string) (*repo, func(), error) {
	r, err := m.resolve(ctx, repository, callerDir)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := m.lock(ctx, r.commonDir)
	if err != nil {
		return nil, nil, err
	}
	if err := m.load(ctx, r); err != nil {
		unlock()
		return nil, nil, err
	}
	return r, unlock, nil
}

// realPath resolves symlinks in the longest existing prefix of p and
// appends the rest, so paths that do not exist yet compare correctly.
func realPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether p is strictly inside dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../")
}

// destination checks a path for a new or moved worktree: absolute or
// relative to the worktree folder, strictly inside that folder even after
// symlinks are followed, and not existing yet.
func (r *repo) destination(field, p string) (string, error) {
	if err := checkArg(field, p); err != nil {
		return "", err
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.folder, abs)
	}
	abs = filepath.Clean(abs)
	if !within(r.folder, abs) || !within(realPath(r.folder), realPath(abs)) {
		return "", invalid(field, p, fmt.Sprintf("must be inside the repository's worktree folder %s", r.folder))
	}
	if _, err := os.Lstat(abs); err == nil {
		return "", fmt.Errorf("%s %q: %s exists already: %w", field, p, abs, errdefs.ErrAlreadyExists)
	}
	return abs, nil
}

// find returns the index of the worktree at p (absolute, or relative to
// the worktree folder) in git's list.
func (r *repo) find(field, p string) (int, error) {
	if err := checkArg(field, p); err != nil {
		return -1, err
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.folder, abs)
	}
	abs = filepath.Clean(abs)
	for i, e := range r.entries {
		if filepath.Clean(e.Path) == abs {
			return i, nil
		}
	}
	real := realPath(abs)
	for i, e := range r.entries {
		if realPath(e.Path) == real {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%s %q: not a worktree of %s (list_worktrees shows them): %w", field, p, r.main, errdefs.ErrNotFound)
}

// folderName is the default folder name for branch: "/" becomes "-".
func folderName(branch string) string { return strings.ReplaceAll(branch, "/", "-") }

// checkBranch refuses names git would reject as a branch name, and
// shorthands such as "@{-1}" that git would expand to another name.
func (m *Manager) checkBranch(ctx context.Context, field, name string) error {
	if err := checkArg(field, name); err != nil {
		return err
	}
	if name == "HEAD" {
		return invalid(field, name, "is not a valid branch name")
	}
	out, err := m.git.run(ctx, os.TempDir(), "check-ref-format", "--branch", name)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return invalid(field, name, "is not a valid branch name (git check-ref-format --branch)")
	}
	if strings.TrimSpace(string(out)) != name {
		return invalid(field, name, "is a shorthand, not a branch name")
	}
	return nil
}
