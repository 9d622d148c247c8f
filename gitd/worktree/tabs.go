package worktree

import (
	"context"
	"path/filepath"
	"strings"
)

// Tab is a Phantom tab, as much of it as worktrees need.
type Tab struct {
	// ID is the tab's id, e.g. "t3".
	ID string
	// Directory is the shell's current directory.
	Directory string
	// Worktree is the worktree the tab was opened in; empty when none.
	Worktree string
	// GroupID and WindowID place the tab.
	GroupID, WindowID string
}

// TabSpec describes a tab to open.
type TabSpec struct {
	// Worktree is the directory to open it in.
	Worktree string
	// GroupID and WindowID place it; empty for the defaults.
	GroupID, WindowID string
	// Name is the tab's name.
	Name string
}

// Tabs reaches terminald.
type Tabs interface {
	// List returns every tab.
	List(ctx context.Context) ([]Tab, error)
	// Open opens a tab and returns its id.
	Open(ctx context.Context, spec TabSpec) (string, error)
}

// assignTabs maps each worktree path to the ids of the tabs working in it:
// a tab whose directory (or the worktree it was opened in) is the worktree
// or below it. Nested worktrees take their own tabs: the deepest worktree
// containing a directory wins.
func assignTabs(paths []string, tabs []Tab) map[string][]string {
	type cand struct{ key, dir string }
	var cands []cand
	for _, p := range paths {
		cands = append(cands, cand{p, filepath.Clean(p)})
		if r := realPath(p); r != filepath.Clean(p) {
			cands = append(cands, cand{p, r})
		}
	}
	out := map[string][]string{}
	for _, t := range tabs {
		seen := map[string]bool{}
		for _, d := range []string{t.Directory, t.Worktree} {
			if d == "" {
				continue
			}
			d = filepath.Clean(d)
			best, bestLen := "", -1
			for _, c := range cands {
				if (d == c.dir || strings.HasPrefix(d, c.dir+"/") || c.dir == "/") && len(c.dir) > bestLen {
					best, bestLen = c.key, len(c.dir)
				}
			}
			if bestLen >= 0 && !seen[best] {
				seen[best] = true
				out[best] = append(out[best], t.ID)
			}
		}
	}
	return out
}
