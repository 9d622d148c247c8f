package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestAdd covers a new branch from the default branch and from a base, an
// existing branch, explicit paths (relative, with spaces and non-ASCII),
// and opening a tab in the caller's group.
func TestAdd(t *testing.T) {
	f := newFixture(t)
	f.git(f.dir, "branch", "existing")
	f.git(f.dir, "tag", "v1")
	f.commit(f.dir, "later.txt")
	f.tabs.set(Tab{ID: "t1", Directory: f.dir, GroupID: "g2", WindowID: "w1"})
	tests := []struct {
		spec        AddSpec
		wantPath    string
		wantCreated bool
		wantHead    string // a revision the head must equal
	}{
		{AddSpec{Branch: "feature/x"}, "feature-x", true, "main"},
		{AddSpec{Branch: "from-tag", Base: "v1"}, "from-tag", true, "v1"},
		{AddSpec{Branch: "existing"}, "existing", false, "existing"},
		{AddSpec{Branch: "spaced", Path: "a dir/ü 日本"}, "a dir/ü 日本", true, "main"},
		{AddSpec{Branch: "abs", Path: filepath.Join(f.folder(), "abs here")}, "abs here", true, "main"},
	}
	for _, tt := range tests {
		t.Run(tt.spec.Branch, func(t *testing.T) {
			tt.spec.Repository = f.dir
			a, err := f.m.Add(f.ctx(), tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(f.folder(), tt.wantPath)
			if a.Worktree.Path != want || a.Worktree.Branch != tt.spec.Branch || a.CreatedBranch != tt.wantCreated {
				t.Errorf("Add = %+v, want path %s created %v", a, want, tt.wantCreated)
			}
			if head := strings.TrimSpace(f.git(f.dir, "rev-parse", tt.wantHead+"^{commit}")); a.Worktree.Head != head {
				t.Errorf("head %s, want %s (%s)", a.Worktree.Head, head, tt.wantHead)
			}
			if _, err := os.Stat(filepath.Join(want, "README")); err != nil {
				t.Errorf("checkout missing: %v", err)
			}
		})
	}

	a, err := f.m.Add(f.ctx(), AddSpec{CallerDir: f.dir, Branch: "tabbed", OpenTerminal: true, CallerTab: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if a.TerminalID == "" || len(f.tabs.opened) != 1 || len(a.Notes) != 0 {
		t.Fatalf("open_terminal: %+v, opened %+v", a, f.tabs.opened)
	}
	if o := f.tabs.opened[0]; o.Worktree != a.Worktree.Path || o.GroupID != "g2" || o.WindowID != "w1" || o.Name != "tabbed" {
		t.Errorf("tab opened as %+v", o)
	}
	f.tabs.down = true
	a, err = f.m.Add(f.ctx(), AddSpec{Repository: f.dir, Branch: "notab", OpenTerminal: true})
	if err != nil || a.TerminalID != "" || len(a.Notes) != 1 {
		t.Errorf("open_terminal with terminald down = %+v, %v; want the worktree and a note", a, err)
	}
}

// TestWorktreeRoot checks the configured root: <root>/<repository name>.
func TestWorktreeRoot(t *testing.T) {
	f := newFixture(t)
	root := t.TempDir()
	m, err := New(Options{Env: f.env, WorktreeRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Add(f.ctx(), AddSpec{Repository: f.dir, Branch: "a/b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "repo", "a-b"); a.Worktree.Path != want {
		t.Errorf("path %s, want %s", a.Worktree.Path, want)
	}
	if _, err := New(Options{WorktreeRoot: "relative"}); err == nil {
		t.Error("relative worktree root accepted")
	}
}

// TestRefusals checks every refusal: the error kind, the field or state it
// names, and that nothing changed.
func TestRefusals(t *testing.T) {
	f := newFixture(t)
	wf := f.folder()
	clean := f.addWT("clean", filepath.Join(wf, "clean"))
	dirty := f.addWT("dirty", filepath.Join(wf, "dirty"))
	f.write(filepath.Join(dirty, "x"), "x")
	locked := f.addWT("locked", filepath.Join(wf, "locked"))
	f.git(f.dir, "worktree", "lock", locked)
	busy := f.addWT("busy", filepath.Join(wf, "busy"))
	f.tabs.set(Tab{ID: "t9", Directory: filepath.Join(busy)})
	os.MkdirAll(filepath.Join(wf, "taken"), 0o755)
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(wf, "link"))
	notRepo := t.TempDir()
	f.git(f.dir, "branch", "spare")

	add := func(s AddSpec) error {
		if s.Repository == "" {
			s.Repository = f.dir
		}
		_, err := f.m.Add(f.ctx(), s)
		return err
	}
	remove := func(s RemoveSpec) error {
		s.Repository = f.dir
		_, err := f.m.Remove(f.ctx(), s)
		return err
	}
	tidy := func(a ...Action) error {
		_, err := f.m.Tidy(f.ctx(), TidySpec{Repository: f.dir, Actions: a})
		return err
	}
	tests := []struct {
		name string
		call func() error
		kind error
		msg  string
	}{
		{"branch option", func() error { return add(AddSpec{Branch: "--upload-pack=evil"}) }, errdefs.ErrInvalidArgument, `branch "--upload-pack=evil"`},
		{"branch dash", func() error { return add(AddSpec{Branch: "-b"}) }, errdefs.ErrInvalidArgument, "branch"},
		{"branch dots", func() error { return add(AddSpec{Branch: "a..b"}) }, errdefs.ErrInvalidArgument, "not a valid branch name"},
		{"branch space", func() error { return add(AddSpec{Branch: "a b"}) }, errdefs.ErrInvalidArgument, "not a valid branch name"},
		{"branch shorthand", func() error { return add(AddSpec{Branch: "@{-1}"}) }, errdefs.ErrInvalidArgument, "branch"},
		{"branch HEAD", func() error { return add(AddSpec{Branch: "HEAD"}) }, errdefs.ErrInvalidArgument, "branch"},
		{"base option", func() error { return add(AddSpec{Branch: "n", Base: "--output=/tmp/x"}) }, errdefs.ErrInvalidArgument, "base"},
		{"base unknown", func() error { return add(AddSpec{Branch: "n", Base: "nope"}) }, errdefs.ErrInvalidArgument, `base "nope"`},
		{"base for existing", func() error { return add(AddSpec{Branch: "spare", Base: "main"}) }, errdefs.ErrInvalidArgument, "base"},
		{"branch checked out", func() error { return add(AddSpec{Branch: "clean"}) }, errdefs.ErrFailedPrecondition, "checked out in worktree"},
		{"path escapes", func() error { return add(AddSpec{Branch: "n", Path: "../escape"}) }, errdefs.ErrInvalidArgument, "worktree folder"},
		{"path absolute outside", func() error { return add(AddSpec{Branch: "n", Path: outside + "/x"}) }, errdefs.ErrInvalidArgument, "path"},
		{"path is folder", func() error { return add(AddSpec{Branch: "n", Path: wf}) }, errdefs.ErrInvalidArgument, "path"},
		{"path via symlink", func() error { return add(AddSpec{Branch: "n", Path: "link/x"}) }, errdefs.ErrInvalidArgument, "worktree folder"},
		{"path option", func() error { return add(AddSpec{Branch: "n", Path: "-x"}) }, errdefs.ErrInvalidArgument, "path"},
		{"path exists", func() error { return add(AddSpec{Branch: "n", Path: "taken"}) }, errdefs.ErrAlreadyExists, "exists"},
		{"not a repository", func() error { return add(AddSpec{Repository: notRepo, Branch: "n"}) }, errdefs.ErrInvalidArgument, "not in a git repository"},
		{"repository relative", func() error { return add(AddSpec{Repository: "repo", Branch: "n"}) }, errdefs.ErrInvalidArgument, "absolute"},
		{"repository option", func() error { return add(AddSpec{Repository: "--git-dir=/x", Branch: "n"}) }, errdefs.ErrInvalidArgument, "repository"},
		{"repository missing", func() error { return add(AddSpec{Repository: "/no/such/dir", Branch: "n"}) }, errdefs.ErrInvalidArgument, "repository"},
		{"no repository", func() error { _, err := f.m.List(f.ctx(), "", ""); return err }, errdefs.ErrInvalidArgument, "repository"},
		{"remove main", func() error { return remove(RemoveSpec{Path: f.dir, Force: true}) }, errdefs.ErrFailedPrecondition, "main worktree"},
		{"remove dirty", func() error { return remove(RemoveSpec{Path: dirty}) }, errdefs.ErrFailedPrecondition, "uncommitted"},
		{"remove locked", func() error { return remove(RemoveSpec{Path: locked}) }, errdefs.ErrFailedPrecondition, "locked"},
		{"remove busy", func() error { return remove(RemoveSpec{Path: busy}) }, errdefs.ErrFailedPrecondition, "tab t9"},
		{"remove unknown", func() error { return remove(RemoveSpec{Path: outside}) }, errdefs.ErrNotFound, "not a worktree"},
		{"remove folder itself", func() error { return remove(RemoveSpec{Path: wf, Force: true}) }, errdefs.ErrNotFound, "not a worktree"},
		{"remove option", func() error { return remove(RemoveSpec{Path: "--force"}) }, errdefs.ErrInvalidArgument, "path"},
		{"move outside", func() error { return tidy(Action{Kind: Move, Path: clean, NewPath: outside + "/m"}) }, errdefs.ErrInvalidArgument, "new_path"},
		{"move busy", func() error { return tidy(Action{Kind: Move, Path: busy, NewPath: "m"}) }, errdefs.ErrFailedPrecondition, "tab t9"},
		{"move main", func() error { return tidy(Action{Kind: Move, Path: f.dir, NewPath: "m"}) }, errdefs.ErrFailedPrecondition, "main worktree"},
		{"lock locked", func() error { return tidy(Action{Kind: Lock, Path: locked}) }, errdefs.ErrFailedPrecondition, "locked already"},
		{"unlock unlocked", func() error { return tidy(Action{Kind: Unlock, Path: clean}) }, errdefs.ErrFailedPrecondition, "not locked"},
		{"second action refused, first not run", func() error {
			return tidy(Action{Kind: Lock, Path: clean}, Action{Kind: Move, Path: clean, NewPath: "moved"})
		}, errdefs.ErrFailedPrecondition, "actions[1]"},
		{"repair outside", func() error { return tidy(Action{Kind: Repair, Path: outside}) }, errdefs.ErrInvalidArgument, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.snapshot()
			err := tt.call()
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error = %v; want %v containing %q", err, tt.kind, tt.msg)
			}
			if after := f.snapshot(); after != before {
				t.Errorf("refused call changed something:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}

	// Tabs unknown: removal is refused unless forced.
	f.tabs.down = true
	if err := remove(RemoveSpec{Path: clean}); !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "terminald") {
		t.Errorf("remove with terminald down = %v", err)
	}
}

// TestRemove covers clean, forced (dirty, locked, busy) and prunable
// removals, and branch deletion only when merged.
func TestRemove(t *testing.T) {
	f := newFixture(t)
	wf := f.folder()
	merged := f.addWT("merged", filepath.Join(wf, "merged"))
	unmerged := f.addWT("unmerged", filepath.Join(wf, "unmerged"))
	f.commit(unmerged, "u.txt")
	dirty := f.addWT("dirty", filepath.Join(wf, "dirty"))
	f.write(filepath.Join(dirty, "README"), "changed")
	locked := f.addWT("locked", filepath.Join(wf, "locked"))
	f.git(f.dir, "worktree", "lock", locked)
	gone := f.addWT("gone", filepath.Join(wf, "gone"))
	os.RemoveAll(gone)
	f.tabs.set(Tab{ID: "t5", Directory: locked})

	tests := []struct {
		spec        RemoveSpec
		wantDeleted bool
		wantKept    string
	}{
		{RemoveSpec{Path: merged, DeleteBranch: true}, true, ""},
		{RemoveSpec{Path: "unmerged", DeleteBranch: true}, false, "not fully merged"},
		{RemoveSpec{Path: dirty, Force: true}, false, ""},
		{RemoveSpec{Path: locked, Force: true}, false, ""},
		{RemoveSpec{Path: gone}, false, ""},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.spec.Path), func(t *testing.T) {
			tt.spec.Repository = f.dir
			rm, err := f.m.Remove(f.ctx(), tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if rm.BranchDeleted != tt.wantDeleted || !strings.Contains(rm.BranchKeptReason, tt.wantKept) {
				t.Errorf("Remove = %+v", rm)
			}
			if _, err := os.Stat(rm.Path); !os.IsNotExist(err) {
				t.Errorf("%s still there: %v", rm.Path, err)
			}
			if strings.Contains(f.git(f.dir, "worktree", "list", "--porcelain"), rm.Path+"\n") {
				t.Errorf("git still lists %s", rm.Path)
			}
			hasBranch := strings.Contains(f.git(f.dir, "branch", "--list", rm.Branch), rm.Branch)
			if hasBranch == tt.wantDeleted {
				t.Errorf("branch %s exists = %v after delete_branch=%v", rm.Branch, hasBranch, tt.spec.DeleteBranch)
			}
		})
	}
	// Never the default branch, even when it is "merged" into itself.
	wt := filepath.Join(wf, "det")
	f.git(f.dir, "worktree", "add", "-q", "--detach", wt, "main")
	f.git(f.dir, "checkout", "-q", "--detach")
	f.git(wt, "checkout", "-q", "main")
	rm, err := f.m.Remove(f.ctx(), RemoveSpec{Repository: f.dir, Path: wt, DeleteBranch: true})
	if err != nil || rm.BranchDeleted || !strings.Contains(rm.BranchKeptReason, "default branch") {
		t.Errorf("remove with the default branch = %+v, %v", rm, err)
	}
}

// TestConcurrentAdds adds worktrees from many goroutines at once: the
// per-repository lock serializes them, every one lands, git's list is
// whole, and adding one branch twice at once succeeds exactly once.
func TestConcurrentAdds(t *testing.T) {
	f := newFixture(t)
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n+2)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.m.Add(f.ctx(), AddSpec{Repository: f.dir, Branch: fmt.Sprintf("c/%02d", i)})
		}()
	}
	for i := n; i < n+2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.m.Add(f.ctx(), AddSpec{Repository: f.dir, Branch: "same"})
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("add %d: %v", i, errs[i])
		}
	}
	if (errs[n] == nil) == (errs[n+1] == nil) {
		t.Errorf("adding one branch twice at once: %v / %v; want exactly one success", errs[n], errs[n+1])
	}
	l := f.list()
	if len(l.Worktrees) != n+2 {
		t.Errorf("%d worktrees after concurrent adds, want %d", len(l.Worktrees), n+2)
	}
	for _, w := range l.Worktrees {
		if w.Prunable || w.Dirty || w.Head == "" {
			t.Errorf("worktree damaged: %+v", w)
		}
	}
	f.git(f.dir, "fsck", "--no-progress")
}
