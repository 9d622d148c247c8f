package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTidy checks the report (prunable, merged, orphaned, dirty, locked),
// that a dry run changes nothing, and then every action for real.
func TestTidy(t *testing.T) {
	f := newFixture(t)
	wf := f.folder()
	gone := f.addWT("gone", filepath.Join(wf, "gone"))
	os.RemoveAll(gone)
	merged := f.addWT("merged", filepath.Join(wf, "merged"))
	unmerged := f.addWT("unmerged", filepath.Join(wf, "unmerged"))
	f.commit(unmerged, "u.txt")
	f.write(filepath.Join(unmerged, "dirt"), "x")
	locked := f.addWT("locked", filepath.Join(wf, "locked"))
	f.git(f.dir, "worktree", "lock", "--reason", "keep", locked)
	orphan := filepath.Join(wf, "orphan")
	os.MkdirAll(orphan, 0o755)
	// Another repository's worktree sharing the folder is not ours.
	other := filepath.Join(t.TempDir(), "other")
	f.git(f.dir, "init", "-q", "-b", "main", other)
	f.git(other, "commit", "-q", "--allow-empty", "-m", "x")
	f.git(other, "worktree", "add", "-q", "-b", "theirs", filepath.Join(wf, "theirs"))

	names := func(its []Item) string {
		var s []string
		for _, it := range its {
			s = append(s, filepath.Base(it.Path))
		}
		return strings.Join(s, ",")
	}
	before := f.snapshot()
	moved := filepath.Join(wf, "moved ü")
	actions := []Action{
		{Kind: Prune},
		{Kind: Lock, Path: merged, Reason: "mine"},
		{Kind: Unlock, Path: locked},
		{Kind: Move, Path: unmerged, NewPath: "moved ü"},
		{Kind: Move, Path: moved, NewPath: "moved twice"},
		{Kind: Repair},
	}
	dry, err := f.m.Tidy(f.ctx(), TidySpec{Repository: f.dir, Actions: actions, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := dry.Report
	for _, c := range []struct{ what, got, want string }{
		{"prunable", names(rep.Prunable), "gone"},
		{"merged", names(rep.Merged), "gone,locked,merged"},
		{"orphaned", names(rep.Orphaned), "orphan"},
		{"dirty", names(rep.Dirty), "unmerged"},
		{"locked", names(rep.Locked), "locked"},
	} {
		if c.got != c.want {
			t.Errorf("report %s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if len(dry.Results) != len(actions) {
		t.Fatalf("dry run results = %+v", dry.Results)
	}
	for _, r := range dry.Results {
		if !strings.HasPrefix(r.Outcome, "would ") {
			t.Errorf("dry run outcome %q", r.Outcome)
		}
	}
	if after := f.snapshot(); after != before {
		t.Fatalf("dry run changed something:\n%s\n---\n%s", before, after)
	}

	done, err := f.m.Tidy(f.ctx(), TidySpec{Repository: f.dir, Actions: actions})
	if err != nil {
		t.Fatal(err)
	}
	l := f.list()
	if len(l.Worktrees) != 4 {
		t.Errorf("after tidy: %+v", l.Worktrees)
	}
	if w := l.at(t, merged); !w.Locked || w.LockReason != "mine" {
		t.Errorf("merged not locked: %+v", w)
	}
	if w := l.at(t, locked); w.Locked {
		t.Errorf("locked still locked: %+v", w)
	}
	if w := l.at(t, filepath.Join(wf, "moved twice")); w.Branch != "unmerged" || !w.Dirty {
		t.Errorf("moved worktree: %+v", w)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Errorf("orphan folder touched: %v", err)
	}
	for _, r := range done.Results {
		if !strings.HasPrefix(r.Outcome, "did ") {
			t.Errorf("outcome %q", r.Outcome)
		}
	}

	// Repair after a hand move inside the folder.
	hand := filepath.Join(wf, "by hand")
	if err := os.Rename(merged, hand); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Tidy(f.ctx(), TidySpec{Repository: f.dir, Actions: []Action{{Kind: Repair, Path: hand}}}); err != nil {
		t.Fatal(err)
	}
	if w := f.list().at(t, hand); w.Prunable || w.Branch != "merged" {
		t.Errorf("after repair: %+v", w)
	}
}
