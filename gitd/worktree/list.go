package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tabsTimeout bounds asking terminald for its tabs.
const tabsTimeout = 3 * time.Second

// Worktree is one worktree with everything list_worktrees reports.
type Worktree struct {
	// Path is the worktree's absolute path.
	Path string
	// Branch is the short branch name; empty when detached or bare.
	Branch string
	// Head is the commit HEAD points at.
	Head string
	// Detached, Bare and Main describe its kind.
	Detached, Bare, Main bool
	// Locked and LockReason: locked against prune, move and remove.
	Locked     bool
	LockReason string
	// Prunable and PrunableReason: git would prune it.
	Prunable       bool
	PrunableReason string
	// Dirty is true with uncommitted or untracked changes; Changed counts
	// the paths.
	Dirty   bool
	Changed int
	// ComparedTo is what Ahead and Behind count against: the upstream, else
	// the default branch; empty when not counted.
	ComparedTo    string
	Ahead, Behind int
	// UpstreamGone: an upstream is configured but gone.
	UpstreamGone bool
	// Merged: the branch is merged into the default branch.
	Merged bool
	// Tabs are the ids of the tabs working in it.
	Tabs []string
}

// Listing is a repository's worktrees.
type Listing struct {
	// Repository is the main worktree's path.
	Repository string
	// DefaultBranch is what Merged (and ahead/behind without an upstream)
	// refer to; empty when the repository has none.
	DefaultBranch string
	// Folder is the repository's worktree folder.
	Folder string
	// Worktrees, the main one first.
	Worktrees []Worktree
	// Notes say what could not be found out.
	Notes []string
}

// List lists the worktrees of the repository that repository (else
// callerDir) is in.
func (m *Manager) List(ctx context.Context, repository, callerDir string) (Listing, error) {
	r, err := m.resolve(ctx, repository, callerDir)
	if err != nil {
		return Listing{}, err
	}
	if err := m.load(ctx, r); err != nil {
		return Listing{}, err
	}
	return m.inspect(ctx, r, r.entries, true)
}

// branchRef is one local branch from for-each-ref.
type branchRef struct {
	tip           string
	upstream      string // short name, e.g. origin/x
	ahead, behind int
	gone          bool
}

// refs reads every local branch (tip, upstream, ahead/behind) and the
// default branch in one git command.
func (m *Manager) refs(ctx context.Context, r *repo) (map[string]branchRef, string, error) {
	out, err := m.git.run(ctx, r.commonDir, "for-each-ref",
		"--format=%(refname)%00%(objectname)%00%(upstream:short)%00%(upstream:track,nobracket)%00%(symref)",
		"refs/heads", "refs/remotes/origin/HEAD")
	if err != nil {
		return nil, "", err
	}
	heads := map[string]branchRef{}
	originHead := ""
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 5 {
			continue
		}
		if f[0] == "refs/remotes/origin/HEAD" {
			originHead = strings.TrimPrefix(f[4], "refs/remotes/origin/")
			continue
		}
		name, ok := strings.CutPrefix(f[0], "refs/heads/")
		if !ok {
			continue
		}
		b := branchRef{tip: f[1], upstream: f[2]}
		if f[3] == "gone" {
			b.gone = true
		}
		for _, part := range strings.Split(f[3], ", ") {
			if n, ok := strings.CutPrefix(part, "ahead "); ok {
				b.ahead, _ = strconv.Atoi(n)
			} else if n, ok := strings.CutPrefix(part, "behind "); ok {
				b.behind, _ = strconv.Atoi(n)
			}
		}
		heads[name] = b
	}
	def := ""
	mainBranch := strings.TrimPrefix(r.entries[0].Branch, "refs/heads/")
	for _, c := range []string{originHead, "main", "master", mainBranch} {
		if _, ok := heads[c]; ok && c != "" {
			def = c
			break
		}
	}
	return heads, def, nil
}

// inspect fills in everything list_worktrees reports for entries, running
// per-worktree git commands on a bounded pool. Whatever the number of
// worktrees, branches cost three git commands in all (refs, merge base,
// one history walk); each worktree costs one status.
func (m *Manager) inspect(ctx context.Context, r *repo, entries []Entry, withTabs bool) (Listing, error) {
	l := Listing{Repository: r.main, Folder: r.folder, Worktrees: make([]Worktree, len(entries))}
	for i, e := range entries {
		l.Worktrees[i] = Worktree{
			Path: e.Path, Head: e.Head, Detached: e.Detached, Bare: e.Bare,
			Main:   filepath.Clean(e.Path) == r.main,
			Locked: e.Locked, LockReason: e.LockReason, Prunable: e.Prunable, PrunableReason: e.PrunableReason,
			Branch: strings.TrimPrefix(e.Branch, "refs/heads/"),
		}
	}

	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		sem    = make(chan struct{}, m.workers)
		notes  []string
		tabs   []Tab
		tabErr error
		fatal  error
	)
	note := func(format string, args ...any) {
		mu.Lock()
		notes = append(notes, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	spawn := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f()
		}()
	}
	if withTabs && m.tabs != nil {
		wg.Add(1)
		go func() { // not on the pool: it waits on terminald, not on git
			defer wg.Done()
			tctx, cancel := context.WithTimeout(ctx, tabsTimeout)
			defer cancel()
			tabs, tabErr = m.tabs.List(tctx)
		}()
	}
	spawn(func() { // first, so that it gets a slot first
		if err := m.branches(ctx, r, &l, note); err != nil {
			mu.Lock()
			fatal = err
			mu.Unlock()
		}
	})
	for i := range l.Worktrees {
		w := &l.Worktrees[i]
		if w.Bare || w.Prunable {
			continue
		}
		spawn(func() {
			n, err := m.changes(ctx, w.Path)
			if err != nil {
				note("dirty state of %s unknown: %v", w.Path, err)
				return
			}
			w.Changed, w.Dirty = n, n > 0
		})
	}
	wg.Wait()
	if fatal != nil {
		return Listing{}, fatal
	}
	if err := ctx.Err(); err != nil {
		return Listing{}, err
	}
	switch {
	case !withTabs:
	case m.tabs == nil:
		notes = append(notes, "tabs unknown: gitd has no terminald to ask")
	case tabErr != nil:
		notes = append(notes, fmt.Sprintf("tabs unknown: terminald did not answer: %v", tabErr))
	default:
		paths := make([]string, len(l.Worktrees))
		for i := range l.Worktrees {
			paths[i] = l.Worktrees[i].Path
		}
		in := assignTabs(paths, tabs)
		for i := range l.Worktrees {
			l.Worktrees[i].Tabs = in[l.Worktrees[i].Path]
		}
	}
	l.Notes = notes
	return l, nil
}

// branches fills in the default branch, and each worktree's ahead/behind
// and merged state. It only writes fields the status checks do not.
func (m *Manager) branches(ctx context.Context, r *repo, l *Listing, note func(string, ...any)) error {
	heads, def, err := m.refs(ctx, r)
	if err != nil {
		return err
	}
	l.DefaultBranch = def
	if def == "" {
		return nil
	}
	var tips []string
	for i := range l.Worktrees { // by field: status checks write others
		if b, ok := heads[l.Worktrees[i].Branch]; ok {
			tips = append(tips, b.tip)
		}
	}
	div, err := m.divergence(ctx, r, heads[def].tip, tips)
	if err != nil {
		note("merged and ahead/behind unknown: %v", err)
	}
	for i := range l.Worktrees {
		w := &l.Worktrees[i]
		b, ok := heads[w.Branch]
		if !ok {
			continue
		}
		d, known := div[b.tip]
		w.Merged = known && d[0] == 0 && w.Branch != def
		switch {
		case b.upstream != "" && b.gone:
			w.UpstreamGone = true
		case b.upstream != "":
			w.ComparedTo, w.Ahead, w.Behind = b.upstream, b.ahead, b.behind
		case w.Branch != def && known:
			w.ComparedTo, w.Ahead, w.Behind = def, d[0], d[1]
		}
	}
	return nil
}

// divergence counts, for every tip, the commits it has that base lacks and
// those base has that it lacks, with two git commands for all tips: their
// common merge bases, and one walk of the history above them, counted
// here. Commits below the merge bases are in every tip's history, so they
// cancel out.
func (m *Manager) divergence(ctx context.Context, r *repo, base string, tips []string) (map[string][2]int, error) {
	out := map[string][2]int{base: {0, 0}}
	all := []string{base}
	for _, t := range tips {
		if _, ok := out[t]; !ok && t != "" {
			out[t] = [2]int{}
			all = append(all, t)
		}
	}
	if len(all) == 1 {
		return out, nil
	}
	mb, err := m.git.run(ctx, r.commonDir, append([]string{"merge-base", "--octopus", "--all"}, all...)...)
	var ge *gitError
	if err != nil && !(errors.As(err, &ge) && ge.code == 1) { // 1: no common ancestor
		return nil, err
	}
	args := append([]string{"rev-list", "--parents"}, all...)
	if bases := strings.Fields(string(mb)); len(bases) > 0 {
		args = append(append(args, "--not"), bases...)
	}
	walk, err := m.git.run(ctx, r.commonDir, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	parents := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(walk)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			parents[f[0]] = f[1:]
		}
	}
	reach := func(tip string) map[string]bool {
		seen := map[string]bool{}
		stack := []string{tip}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			ps, in := parents[c]
			if !in || seen[c] {
				continue
			}
			seen[c] = true
			stack = append(stack, ps...)
		}
		return seen
	}
	fromBase := reach(base)
	for _, t := range all[1:] {
		fromTip := reach(t)
		ahead, behind := 0, 0
		for c := range fromTip {
			if !fromBase[c] {
				ahead++
			}
		}
		for c := range fromBase {
			if !fromTip[c] {
				behind++
			}
		}
		out[t] = [2]int{ahead, behind}
	}
	return out, nil
}

// changes counts the changed and untracked paths of the worktree at dir.
// Optional locks are off (see newGit) and the fsmonitor hook is not run,
// so checking never disturbs an agent's own git or runs repository hooks.
func (m *Manager) changes(ctx context.Context, dir string) (int, error) {
	out, err := m.git.run(ctx, dir, "-c", "core.fsmonitor=false", "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	if err != nil {
		return 0, err
	}
	n := 0
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			break
		}
		rec := out[:i]
		out = out[i+1:]
		n++
		// A rename or copy is followed by its source path as a second field.
		if len(rec) > 1 && (rec[0] == 'R' || rec[0] == 'C' || rec[1] == 'R' || rec[1] == 'C') {
			if j := bytes.IndexByte(out, 0); j >= 0 {
				out = out[j+1:]
			}
		}
	}
	return n, nil
}
