package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// AddSpec describes a new worktree.
type AddSpec struct {
	// Repository and CallerDir name the repository (see List).
	Repository, CallerDir string
	// Branch is an existing local branch, or a new one made from Base.
	Branch string
	// Base is where a new branch starts; default the default branch.
	Base string
	// Path is where to put it, inside the worktree folder; default
	// <folder>/<branch with / as ->.
	Path string
	// OpenTerminal opens a tab in it, in CallerTab's group and window.
	OpenTerminal bool
	CallerTab    string
}

// Added is the result of Add.
type Added struct {
	// Worktree is the new worktree.
	Worktree Worktree
	// CreatedBranch is true when the branch was made.
	CreatedBranch bool
	// TerminalID is the tab opened in it.
	TerminalID string
	// Notes say what did not go as asked.
	Notes []string
}

// failed marks a git failure after every check passed as a state problem:
// the arguments were valid, so the repository did not allow it.
func failed(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%s: %w: %w", what, err, errdefs.ErrFailedPrecondition)
}

// Add adds a worktree.
func (m *Manager) Add(ctx context.Context, s AddSpec) (Added, error) {
	if err := m.checkBranch(ctx, "branch", s.Branch); err != nil {
		return Added{}, err
	}
	if err := checkArg("base", s.Base); err != nil {
		return Added{}, err
	}
	r, unlock, err := m.open(ctx, s.Repository, s.CallerDir)
	if err != nil {
		return Added{}, err
	}
	defer unlock()

	ref := "refs/heads/" + s.Branch
	_, err = m.git.run(ctx, r.commonDir, "rev-parse", "--verify", "--quiet", ref)
	exists := err == nil
	if err != nil && ctx.Err() != nil {
		return Added{}, err
	}
	if exists {
		if s.Base != "" {
			return Added{}, invalid("base", s.Base, fmt.Sprintf("branch %q exists already; base is only for a new branch", s.Branch))
		}
		for _, e := range r.entries {
			if e.Branch == ref {
				return Added{}, fmt.Errorf("branch %q is checked out in worktree %s already: %w", s.Branch, e.Path, errdefs.ErrFailedPrecondition)
			}
		}
	} else if s.Base == "" {
		_, def, err := m.refs(ctx, r)
		if err != nil {
			return Added{}, err
		}
		if def == "" {
			return Added{}, fmt.Errorf("repository %s has no default branch to start %q from; give base: %w", r.main, s.Branch, errdefs.ErrFailedPrecondition)
		}
		s.Base = def
	}
	if !exists {
		if _, err := m.git.run(ctx, r.commonDir, "rev-parse", "--verify", "--quiet", "--end-of-options", s.Base+"^{commit}"); err != nil {
			if ctx.Err() != nil {
				return Added{}, err
			}
			return Added{}, invalid("base", s.Base, "is not a commit of "+r.main)
		}
	}
	field, path := "path", s.Path
	if path == "" {
		field, path = "branch", folderName(s.Branch)
	}
	if _, err := r.destination(field, path); err != nil {
		return Added{}, err
	}
	if err := os.MkdirAll(r.folder, 0o755); err != nil {
		return Added{}, fmt.Errorf("create worktree folder %s: %w", r.folder, err)
	}
	// Creating the folder may have followed a symlink planted since the check.
	dest, err := r.destination(field, path)
	if err != nil {
		return Added{}, err
	}
	args := []string{"worktree", "add", "--quiet"}
	if exists {
		args = append(args, "--", dest, s.Branch)
	} else {
		args = append(args, "-b", s.Branch, "--", dest, s.Base)
	}
	// A sandboxed git may write the new worktree, which must exist for
	// the sandbox to name it: git fills an empty directory.
	confined := confinementOf(ctx).Confined()
	if confined {
		if err := os.Mkdir(dest, 0o755); err != nil {
			return Added{}, fmt.Errorf("create worktree directory %s: %w", dest, err)
		}
	}
	gctx, err := grant(ctx, r, dest)
	if err == nil {
		_, err = m.git.run(gctx, r.main, args...)
	}
	if err != nil {
		if confined {
			os.Remove(dest) // only while still empty
		}
		return Added{}, failed(ctx, fmt.Sprintf("add worktree %s for branch %q", dest, s.Branch), err)
	}
	if err := m.load(ctx, r); err != nil {
		return Added{}, err
	}
	i, err := r.find("path", dest)
	if err != nil {
		return Added{}, fmt.Errorf("git added %s but does not list it: %w", dest, err)
	}
	l, err := m.inspect(ctx, r, r.entries[i:i+1], false)
	if err != nil {
		return Added{}, err
	}
	out := Added{Worktree: l.Worktrees[0], CreatedBranch: !exists, Notes: l.Notes}
	if s.OpenTerminal {
		id, err := m.openTab(ctx, dest, s.Branch, s.CallerTab)
		if err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("the worktree was added, but no tab was opened in it: %v", err))
		}
		out.TerminalID = id
		if id != "" {
			out.Worktree.Tabs = []string{id}
		}
	}
	return out, nil
}

// openTab opens a tab in dir, in the group and window of callerTab.
func (m *Manager) openTab(ctx context.Context, dir, branch, callerTab string) (string, error) {
	if m.tabs == nil {
		return "", errors.New("gitd has no terminald to ask")
	}
	spec := TabSpec{Worktree: dir, Name: branch}
	if callerTab != "" {
		tabs, err := m.tabs.List(ctx)
		if err != nil {
			return "", err
		}
		for _, t := range tabs {
			if t.ID == callerTab {
				spec.GroupID, spec.WindowID = t.GroupID, t.WindowID
			}
		}
	}
	return m.tabs.Open(ctx, spec)
}

// RemoveSpec names a worktree to remove.
type RemoveSpec struct {
	// Repository and CallerDir name the repository (see List).
	Repository, CallerDir string
	// Path is the worktree, as List shows it.
	Path string
	// Force removes it even when dirty, locked or in use by a tab.
	Force bool
	// DeleteBranch deletes its branch too, when fully merged.
	DeleteBranch bool
}

// Removed is the result of Remove.
type Removed struct {
	// Path and Branch of the removed worktree.
	Path, Branch string
	// BranchDeleted is true when the branch was deleted.
	BranchDeleted bool
	// BranchKeptReason says why a branch asked to be deleted was kept.
	BranchKeptReason string
}

// Remove removes a worktree that git lists, never anything else.
func (m *Manager) Remove(ctx context.Context, s RemoveSpec) (Removed, error) {
	r, unlock, err := m.open(ctx, s.Repository, s.CallerDir)
	if err != nil {
		return Removed{}, err
	}
	defer unlock()
	i, err := r.find("path", s.Path)
	if err != nil {
		return Removed{}, err
	}
	e := r.entries[i]
	if i == 0 || filepath.Clean(e.Path) == r.main {
		return Removed{}, fmt.Errorf("path %q is the main worktree of %s; it is never removed: %w", s.Path, r.main, errdefs.ErrFailedPrecondition)
	}
	if err := m.checkFree(ctx, r, e, s.Force, true); err != nil {
		return Removed{}, err
	}
	args := []string{"worktree", "remove"}
	if s.Force {
		args = append(args, "--force")
		if e.Locked {
			args = append(args, "--force")
		}
	}
	args = append(args, "--", e.Path)
	// Removing a directory takes writing its parent.
	ctx, err = grant(ctx, r, filepath.Dir(e.Path))
	if err != nil {
		return Removed{}, err
	}
	if _, err := m.git.run(ctx, r.main, args...); err != nil {
		return Removed{}, failed(ctx, "remove worktree "+e.Path, err)
	}
	out := Removed{Path: e.Path, Branch: strings.TrimPrefix(e.Branch, "refs/heads/")}
	if s.DeleteBranch && out.Branch != "" {
		out.BranchDeleted, out.BranchKeptReason = m.deleteMerged(ctx, r, out.Branch)
	}
	return out, nil
}

// checkFree refuses, unless force, a worktree that is locked, has a tab
// working in it, or (when checkDirty) has changes.
func (m *Manager) checkFree(ctx context.Context, r *repo, e Entry, force, checkDirty bool) error {
	if force {
		return nil
	}
	if e.Locked {
		why := ""
		if e.LockReason != "" {
			why = fmt.Sprintf(" (%s)", e.LockReason)
		}
		return fmt.Errorf("worktree %s is locked%s; unlock it with tidy_worktrees or pass force: %w", e.Path, why, errdefs.ErrFailedPrecondition)
	}
	if checkDirty && !e.Prunable {
		n, err := m.changes(ctx, e.Path)
		if err != nil {
			return failed(ctx, "check worktree "+e.Path+" for changes", err)
		}
		if n > 0 {
			return fmt.Errorf("worktree %s has %d uncommitted or untracked changes; commit or stash them, or pass force to discard them: %w", e.Path, n, errdefs.ErrFailedPrecondition)
		}
	}
	if m.tabs == nil {
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, tabsTimeout)
	defer cancel()
	tabs, err := m.tabs.List(tctx)
	if err != nil {
		return fmt.Errorf("cannot tell whether a tab works in %s (terminald: %v); pass force to go ahead anyway: %w", e.Path, err, errdefs.ErrFailedPrecondition)
	}
	paths := make([]string, len(r.entries))
	for i, x := range r.entries {
		paths[i] = x.Path
	}
	if ids := assignTabs(paths, tabs)[e.Path]; len(ids) > 0 {
		return fmt.Errorf("worktree %s is in use by tab %s; close it or pass force: %w", e.Path, strings.Join(ids, ", "), errdefs.ErrFailedPrecondition)
	}
	return nil
}

// deleteMerged deletes branch with `git branch -d`, which refuses an
// unmerged branch; it never forces.
func (m *Manager) deleteMerged(ctx context.Context, r *repo, branch string) (bool, string) {
	_, def, err := m.refs(ctx, r)
	if err == nil && branch == def {
		return false, fmt.Sprintf("%q is the default branch", branch)
	}
	if _, err := m.git.run(ctx, r.main, "branch", "-d", "--", branch); err != nil {
		var ge *gitError
		if errors.As(err, &ge) {
			return false, strings.TrimSpace(ge.stderr)
		}
		return false, err.Error()
	}
	return true, ""
}
