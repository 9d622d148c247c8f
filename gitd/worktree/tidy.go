package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// ActionKind is what a tidy action does.
type ActionKind int

// The tidy actions.
const (
	// Prune forgets worktrees whose folders are gone (git worktree prune).
	Prune ActionKind = iota + 1
	// Repair fixes the links between worktrees and the repository.
	Repair
	// Move moves a worktree inside the worktree folder.
	Move
	// Lock locks a worktree against prune, move and remove.
	Lock
	// Unlock unlocks a worktree.
	Unlock
)

// String names the action, e.g. "move".
func (k ActionKind) String() string {
	switch k {
	case Prune:
		return "prune"
	case Repair:
		return "repair"
	case Move:
		return "move"
	case Lock:
		return "lock"
	case Unlock:
		return "unlock"
	}
	return fmt.Sprintf("action(%d)", int(k))
}

// Action is one tidy action.
type Action struct {
	// Kind says what to do.
	Kind ActionKind
	// Path is the worktree acted on (for repair: a moved worktree's new
	// location, optional).
	Path string
	// NewPath is a move's destination, inside the worktree folder.
	NewPath string
	// Reason is a lock's reason.
	Reason string
}

// Item is one line of the tidy report.
type Item struct {
	// Path and Branch of the worktree or folder.
	Path, Branch string
	// Detail says why it is listed.
	Detail string
}

// Report says what needs tidying.
type Report struct {
	// Prunable worktrees' folders are gone; Merged ones' branches are in
	// the default branch; Orphaned are folders in the worktree folder git
	// does not know; Dirty have changes; Locked are locked.
	Prunable, Merged, Orphaned, Dirty, Locked []Item
}

// Result is what an action did or would do.
type Result struct {
	// Action is the action.
	Action Action
	// Outcome describes it.
	Outcome string
}

// TidySpec asks for the report and the actions.
type TidySpec struct {
	// Repository and CallerDir name the repository (see List).
	Repository, CallerDir string
	// Actions run in order after the report.
	Actions []Action
	// DryRun only says what the actions would do.
	DryRun bool
	// Force moves a worktree even when locked or in use by a tab.
	Force bool
}

// Tidied is the result of Tidy.
type Tidied struct {
	// Folder is the repository's worktree folder.
	Folder string
	// Report was made before any action ran.
	Report Report
	// Results, one per action.
	Results []Result
	// Notes say what could not be found out.
	Notes []string
}

// step is a checked action, ready to run.
type step struct {
	args    []string
	outcome string // what it does, completed by "would" or "did"
}

// Tidy reports and then runs the actions. Every action is checked, against
// the state the earlier ones leave, before any runs: a refused action
// changes nothing.
func (m *Manager) Tidy(ctx context.Context, s TidySpec) (Tidied, error) {
	r, unlock, err := m.open(ctx, s.Repository, s.CallerDir)
	if err != nil {
		return Tidied{}, err
	}
	defer unlock()
	l, err := m.inspect(ctx, r, r.entries, true)
	if err != nil {
		return Tidied{}, err
	}
	out := Tidied{Folder: r.folder, Notes: l.Notes, Report: report(r, l)}

	steps := make([]step, len(s.Actions))
	state := append([]Entry(nil), r.entries...)
	for i, a := range s.Actions {
		if steps[i], err = m.plan(ctx, r, l, state, a, s.Force); err != nil {
			return Tidied{}, fmt.Errorf("actions[%d] (%s): %w", i, a.Kind, err)
		}
	}
	for i, a := range s.Actions {
		if s.DryRun {
			out.Results = append(out.Results, Result{Action: a, Outcome: "would " + steps[i].outcome})
			continue
		}
		if steps[i].args[1] == "move" {
			if err := os.MkdirAll(r.folder, 0o755); err != nil {
				return Tidied{}, fmt.Errorf("create worktree folder %s: %w", r.folder, err)
			}
		}
		sctx, err := grant(ctx, r, r.folder, filepath.Dir(a.Path), filepath.Dir(a.NewPath), a.Path)
		if err == nil {
			_, err = m.git.run(sctx, r.main, steps[i].args...)
		}
		if err != nil {
			done := make([]string, i)
			for j := range i {
				done[j] = steps[j].outcome
			}
			return Tidied{}, failed(ctx, fmt.Sprintf("actions[%d] (%s), after %d done [%s]", i, a.Kind, i, strings.Join(done, "; ")), err)
		}
		out.Results = append(out.Results, Result{Action: a, Outcome: "did " + steps[i].outcome})
	}
	return out, nil
}

// plan checks one action against state and updates state to what it will
// leave.
func (m *Manager) plan(ctx context.Context, r *repo, l Listing, state []Entry, a Action, force bool) (step, error) {
	at := func() (int, error) {
		sub := &repo{main: r.main, folder: r.folder, entries: state}
		i, err := sub.find("path", a.Path)
		if err == nil && i == 0 {
			return -1, fmt.Errorf("path %q is the main worktree; it cannot be %sed: %w", a.Path, a.Kind, errdefs.ErrFailedPrecondition)
		}
		return i, err
	}
	switch a.Kind {
	case Prune:
		var names []string
		for _, e := range state {
			if e.Prunable && !e.Locked {
				names = append(names, e.Path)
			}
		}
		if len(names) == 0 {
			return step{args: []string{"worktree", "prune"}, outcome: "prune nothing: no worktree is prunable"}, nil
		}
		return step{args: []string{"worktree", "prune"}, outcome: "prune " + strings.Join(names, ", ")}, nil
	case Repair:
		if a.Path == "" {
			return step{args: []string{"worktree", "repair"}, outcome: "repair the links of every worktree"}, nil
		}
		if err := checkArg("path", a.Path); err != nil {
			return step{}, err
		}
		p := a.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.folder, p)
		}
		if !within(realPath(r.folder), realPath(p)) {
			return step{}, invalid("path", a.Path, "must be inside the repository's worktree folder "+r.folder)
		}
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return step{}, invalid("path", a.Path, "is not an existing directory")
		}
		return step{args: []string{"worktree", "repair", "--", p}, outcome: "repair the links of " + p}, nil
	case Move:
		i, err := at()
		if err != nil {
			return step{}, err
		}
		if a.NewPath == "" {
			return step{}, fmt.Errorf("new_path: required for a move: %w", errdefs.ErrInvalidArgument)
		}
		dest, err := r.destination("new_path", a.NewPath)
		if err != nil {
			return step{}, err
		}
		e := state[i]
		if e.Prunable {
			return step{}, fmt.Errorf("worktree %s is prunable (%s); prune or repair it instead: %w", e.Path, e.PrunableReason, errdefs.ErrFailedPrecondition)
		}
		if err := m.checkFree(ctx, &repo{main: r.main, folder: r.folder, entries: state}, e, force, false); err != nil {
			return step{}, err
		}
		args := []string{"worktree", "move"}
		if e.Locked {
			args = append(args, "--force", "--force")
		}
		state[i].Path = dest
		return step{args: append(args, "--", e.Path, dest), outcome: "move " + e.Path + " to " + dest}, nil
	case Lock, Unlock:
		i, err := at()
		if err != nil {
			return step{}, err
		}
		e := state[i]
		if a.Kind == Lock {
			if e.Locked {
				return step{}, fmt.Errorf("worktree %s is locked already: %w", e.Path, errdefs.ErrFailedPrecondition)
			}
			if strings.ContainsRune(a.Reason, 0) {
				return step{}, invalid("reason", a.Reason, "must not contain a NUL byte")
			}
			state[i].Locked, state[i].LockReason = true, a.Reason
			args := []string{"worktree", "lock"}
			if a.Reason != "" {
				args = append(args, "--reason", a.Reason)
			}
			return step{args: append(args, "--", e.Path), outcome: "lock " + e.Path}, nil
		}
		if !e.Locked {
			return step{}, fmt.Errorf("worktree %s is not locked: %w", e.Path, errdefs.ErrFailedPrecondition)
		}
		state[i].Locked, state[i].LockReason = false, ""
		return step{args: []string{"worktree", "unlock", "--", e.Path}, outcome: "unlock " + e.Path}, nil
	}
	return step{}, fmt.Errorf("kind %d: not an action: %w", int(a.Kind), errdefs.ErrInvalidArgument)
}

// report sorts a listing into what needs tidying, and finds orphaned
// folders in the worktree folder.
func report(r *repo, l Listing) Report {
	var rep Report
	known := map[string]bool{}
	for _, w := range l.Worktrees {
		known[filepath.Clean(w.Path)] = true
		known[realPath(w.Path)] = true
		it := Item{Path: w.Path, Branch: w.Branch}
		if w.Prunable {
			rep.Prunable = append(rep.Prunable, Item{w.Path, w.Branch, w.PrunableReason})
		}
		if w.Merged && !w.Main {
			rep.Merged = append(rep.Merged, Item{w.Path, w.Branch, "merged into " + l.DefaultBranch})
		}
		if w.Dirty {
			it.Detail = fmt.Sprintf("%d changed or untracked paths", w.Changed)
			rep.Dirty = append(rep.Dirty, it)
		}
		if w.Locked {
			rep.Locked = append(rep.Locked, Item{w.Path, w.Branch, w.LockReason})
		}
	}
	ents, err := os.ReadDir(r.folder)
	if err != nil {
		return rep
	}
	for _, d := range ents {
		p := filepath.Join(r.folder, d.Name())
		if known[p] || known[realPath(p)] {
			continue
		}
		detail := "not a worktree git knows of"
		if b, err := os.ReadFile(filepath.Join(p, ".git")); err == nil {
			gitdir := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
			if !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(p, gitdir)
			}
			if !within(r.commonDir, gitdir) && !within(realPath(r.commonDir), realPath(gitdir)) {
				continue // another repository's worktree sharing the folder
			}
			detail = "its .git file points to a worktree entry git has forgotten"
		}
		rep.Orphaned = append(rep.Orphaned, Item{Path: p, Detail: detail})
	}
	return rep
}
