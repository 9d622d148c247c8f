package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// writeFiles creates each path (relative to root) with its content; a
// content ending in "/" makes a directory instead.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		p = filepath.Join(root, p)
		if content == "/" {
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWorktreeRoots checks which roots a tab's directory stands for, and
// that a .git file the tab itself could have written widens nothing.
func TestWorktreeRoots(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		dir   string
		want  []string
	}{
		{
			name:  "no repository",
			files: map[string]string{"plain/": "/"},
			dir:   "plain", want: []string{"plain"},
		},
		{
			name:  "repository root",
			files: map[string]string{"repo/.git/HEAD": "ref: refs/heads/main\n"},
			dir:   "repo", want: []string{"repo"},
		},
		{
			name:  "subdirectory widens to the working tree",
			files: map[string]string{"repo/.git/HEAD": "x", "repo/a/b/": "/"},
			dir:   "repo/a/b", want: []string{"repo"},
		},
		{
			name: "linked worktree adds the common git directory",
			files: map[string]string{
				"main/.git/HEAD":                   "x",
				"main/.git/worktrees/wt/gitdir":    "ROOT/wt/.git\n",
				"main/.git/worktrees/wt/commondir": "../..\n",
				"wt/.git":                          "gitdir: ROOT/main/.git/worktrees/wt\n",
				"wt/src/":                          "/",
			},
			dir: "wt/src", want: []string{"wt", "main/.git"},
		},
		{
			name: "relative gitdir as newer git writes it",
			files: map[string]string{
				"main/.git/HEAD":                   "x",
				"main/.git/worktrees/wt/gitdir":    "../../../../wt/.git\n",
				"main/.git/worktrees/wt/commondir": "../..\n",
				"wt/.git":                          "gitdir: ../main/.git/worktrees/wt\n",
			},
			dir: "wt", want: []string{"wt", "main/.git"},
		},
		{
			name: "a .git file pointing at another worktree's gitdir",
			files: map[string]string{
				"main/.git/worktrees/other/gitdir":    "ROOT/other/.git\n",
				"main/.git/worktrees/other/commondir": "../..\n",
				"other/.git":                          "gitdir: ROOT/main/.git/worktrees/other\n",
				"wt/.git":                             "gitdir: ROOT/main/.git/worktrees/other\n",
			},
			dir: "wt", want: []string{"wt"},
		},
		{
			name: "a gitdir forged inside the tab's own directory",
			files: map[string]string{
				"victim/.git/HEAD":  "x",
				"wt/.git":           "gitdir: ROOT/wt/fake\n",
				"wt/fake/gitdir":    "ROOT/wt/.git\n",
				"wt/fake/commondir": "ROOT/victim/.git\n",
			},
			dir: "wt", want: []string{"wt"},
		},
		{
			name:  "a dotfiles repository in the home directory widens nothing",
			files: map[string]string{"home/.git/HEAD": "x", "home/proj/": "/"},
			dir:   "home/proj", want: []string{"home/proj"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{}
			for p, c := range tt.files {
				files[p] = replaceRoot(c, root)
			}
			writeFiles(t, root, files)
			got := worktreeRoots(filepath.Join(root, tt.dir), filepath.Join(root, "home"))
			if got := rel(root, got); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("worktreeRoots = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWorktreeRootsSymlinkedDotGit checks that a .git that is a symbolic
// link to a real worktree's .git file is not followed.
func TestWorktreeRootsSymlinkedDotGit(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{
		"main/.git/worktrees/wt/gitdir":    root + "/wt/.git\n",
		"main/.git/worktrees/wt/commondir": "../..\n",
		"wt/.git":                          "gitdir: " + root + "/main/.git/worktrees/wt\n",
		"evil/":                            "/",
	})
	if err := os.Symlink(filepath.Join(root, "wt/.git"), filepath.Join(root, "evil/.git")); err != nil {
		t.Fatal(err)
	}
	if got := rel(root, worktreeRoots(filepath.Join(root, "evil"), "/nonexistent")); !reflect.DeepEqual(got, []string{"evil"}) {
		t.Errorf("worktreeRoots = %q, want only the tab's directory", got)
	}
}

// TestWorktreeRootsRealGit checks the linked-worktree case against what
// git itself writes.
func TestWorktreeRootsRealGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	main := filepath.Join(root, "main")
	git(root, "init", "-q", main)
	git(main, "commit", "-q", "--allow-empty", "-m", "first")
	git(main, "worktree", "add", "-q", filepath.Join(root, "main.worktrees", "feature"), "-b", "feature")
	got := rel(root, worktreeRoots(filepath.Join(root, "main.worktrees", "feature"), "/nonexistent"))
	if want := []string{"main.worktrees/feature", "main/.git"}; !reflect.DeepEqual(got, want) {
		t.Errorf("worktreeRoots = %q, want %q", got, want)
	}
}

func replaceRoot(s, root string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if i+4 <= len(s) && s[i:i+4] == "ROOT" {
			out = append(out, root...)
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
