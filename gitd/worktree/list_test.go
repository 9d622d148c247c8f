package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestList builds 30 worktrees in every state list_worktrees reports and
// checks each one.
func TestList(t *testing.T) {
	f := newFixture(t)
	wf := f.folder()
	var plain []string
	for i := range 24 {
		plain = append(plain, f.addWT(fmt.Sprintf("feat/n%02d", i), filepath.Join(wf, fmt.Sprintf("n%02d", i))))
	}
	dirty := f.addWT("dirty", filepath.Join(wf, "dirty"))
	f.write(filepath.Join(dirty, "README"), "changed\n")
	untracked := f.addWT("untracked", filepath.Join(wf, "untracked"))
	f.write(filepath.Join(untracked, "new.txt"), "x")
	f.write(filepath.Join(untracked, "other.txt"), "x")
	locked := f.addWT("locked", filepath.Join(wf, "locked"))
	f.git(f.dir, "worktree", "lock", "--reason", "agent at work", locked)
	gone := f.addWT("gone", filepath.Join(wf, "gone"))
	os.RemoveAll(gone)
	odd := f.addWT("odd", filepath.Join(wf, "odd name ü 日本"))
	f.commit(odd, "odd.txt") // unmerged, one ahead
	detached := filepath.Join(wf, "detached")
	f.git(f.dir, "worktree", "add", "-q", "--detach", detached, "main")
	f.commit(f.dir, "main2.txt") // main moves on: plain branches are 1 behind
	f.tabs.set(
		Tab{ID: "t1", Directory: f.dir},
		Tab{ID: "t2", Directory: filepath.Join(odd, "sub")},
		Tab{ID: "t3", Directory: "/elsewhere", Worktree: plain[3]},
		Tab{ID: "t4", Directory: wf}, // the folder itself is no worktree
	)

	l := f.list()
	if len(l.Worktrees) != 24+7 {
		t.Fatalf("%d worktrees, want 31", len(l.Worktrees))
	}
	if l.Repository != f.dir || l.DefaultBranch != "main" || l.Folder != wf || len(l.Notes) != 0 {
		t.Errorf("listing header = %q %q %q %q", l.Repository, l.DefaultBranch, l.Folder, l.Notes)
	}
	tests := []struct {
		path string
		want func(w Worktree) bool
		desc string
	}{
		{f.dir, func(w Worktree) bool {
			return w.Main && w.Branch == "main" && !w.Merged && !w.Dirty && slices.Equal(w.Tabs, []string{"t1"})
		}, "main, tab t1"},
		{plain[0], func(w Worktree) bool {
			return w.Branch == "feat/n00" && w.Merged && !w.Dirty && w.ComparedTo == "main" && w.Ahead == 0 && w.Behind == 1 && len(w.Head) == 40
		}, "merged, 1 behind"},
		{plain[3], func(w Worktree) bool { return slices.Equal(w.Tabs, []string{"t3"}) }, "tab t3 by its worktree"},
		{dirty, func(w Worktree) bool { return w.Dirty && w.Changed == 1 }, "dirty, 1 change"},
		{untracked, func(w Worktree) bool { return w.Dirty && w.Changed == 2 }, "dirty, 2 untracked"},
		{locked, func(w Worktree) bool { return w.Locked && w.LockReason == "agent at work" }, "locked with reason"},
		{gone, func(w Worktree) bool { return w.Prunable && w.PrunableReason != "" && !w.Dirty }, "prunable"},
		{odd, func(w Worktree) bool {
			return !w.Merged && w.Ahead == 1 && w.Behind == 1 && slices.Equal(w.Tabs, []string{"t2"})
		}, "unmerged, 1 ahead 1 behind, tab t2"},
		{detached, func(w Worktree) bool { return w.Detached && w.Branch == "" && !w.Merged }, "detached"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			if w := l.at(t, tt.path); !tt.want(w) {
				t.Errorf("want %s, got %+v", tt.desc, w)
			}
		})
	}

	// From any directory inside, via the caller's directory.
	l2, err := f.m.List(f.ctx(), "", filepath.Join(odd))
	if err != nil || l2.Repository != f.dir || len(l2.Worktrees) != 31 {
		t.Errorf("List from a worktree = %q (%d), %v", l2.Repository, len(l2.Worktrees), err)
	}

	// terminald down: no tabs, and a note says so.
	f.tabs.down = true
	l3 := f.list()
	if len(l3.Notes) != 1 || !strings.Contains(l3.Notes[0], "terminald") {
		t.Errorf("notes with terminald down = %q", l3.Notes)
	}
	if w := l3.at(t, f.dir); len(w.Tabs) != 0 {
		t.Errorf("tabs with terminald down = %v", w.Tabs)
	}
}

// TestListUpstream checks ahead/behind against an upstream, and a gone one.
func TestListUpstream(t *testing.T) {
	f := newFixture(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	f.git(f.dir, "init", "-q", "--bare", remote)
	f.git(f.dir, "remote", "add", "origin", remote)
	f.git(f.dir, "push", "-q", "-u", "origin", "main")
	f.git(f.dir, "remote", "set-head", "origin", "main")
	wt := f.addWT("up", filepath.Join(f.folder(), "up"))
	f.git(wt, "push", "-q", "-u", "origin", "up")
	f.commit(wt, "a.txt")
	f.commit(wt, "b.txt")
	goneWT := f.addWT("goner", filepath.Join(f.folder(), "goner"))
	f.git(goneWT, "push", "-q", "-u", "origin", "goner")
	f.git(f.dir, "push", "-q", "origin", "--delete", "goner")
	f.git(f.dir, "fetch", "-q", "--prune")

	l := f.list()
	if w := l.at(t, wt); w.ComparedTo != "origin/up" || w.Ahead != 2 || w.Behind != 0 {
		t.Errorf("upstream: %+v", w)
	}
	if w := l.at(t, goneWT); !w.UpstreamGone {
		t.Errorf("gone upstream: %+v", w)
	}
}
