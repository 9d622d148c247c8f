package project

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOf(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a + "/.git", a + "/src/deep", b + "/sub", filepath.Join(root, "wt")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A linked worktree's .git is a file naming its git dir; what it names
	// does not matter: it is the tab's to write.
	if err := os.WriteFile(filepath.Join(root, "wt", ".git"), []byte("gitdir: "+a+"/.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a+"/src", b+"/link"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{a, a},
		{a + "/src/deep", a},
		{a + "/src/../src", a},
		{b + "/sub", b + "/sub"}, // no repository: the directory
		{b + "/link", a},         // a link into a is a
		{filepath.Join(root, "wt"), root + "/wt"}, // a linked worktree is its own, whatever its .git says
		{"relative/dir", ""},
		{"", ""},
	} {
		if got := Of(tc.dir); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

func TestWorktree(t *testing.T) {
	root := t.TempDir()
	repo := root + "/repo"
	linked := root + "/repo.worktrees/feature"
	for _, d := range []string{repo + "/.git", repo + "/src/deep", linked + "/pkg"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(linked+"/.git", []byte("gitdir: "+repo+"/.git/worktrees/feature\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		repo:                     repo,
		repo + "/src/deep":       repo,
		linked + "/pkg":          linked,
		root:                     "",
		"relative/dir":           "",
		root + "/repo.worktrees": "",
	} {
		if got := Worktree(dir); got != want {
			t.Errorf("Worktree(%q) = %q, want %q", dir, got, want)
		}
	}
}
