package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// gitEnv is an environment isolated from the user's git configuration.
func gitEnv(t testing.TB) []string {
	t.Helper()
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "XDG_CONFIG") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
}

// fixture is a real repository in a temporary directory with a Manager.
type fixture struct {
	t    testing.TB
	env  []string
	dir  string // the main worktree
	m    *Manager
	tabs *fakeTabs
}

// newFixture makes a repository "repo" (branch main, one commit) inside a
// fresh directory, so its worktree folder is <dir>/../repo.worktrees.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, env: gitEnv(t), dir: filepath.Join(t.TempDir(), "repo"), tabs: &fakeTabs{}}
	f.git(filepath.Dir(f.dir), "init", "-q", "-b", "main", f.dir)
	f.git(f.dir, "config", "user.name", "Test")
	f.git(f.dir, "config", "user.email", "test@example.com")
	f.write("README", "hello\n")
	f.git(f.dir, "add", "README")
	f.git(f.dir, "commit", "-q", "-m", "init")
	m, err := New(Options{Env: f.env, Tabs: f.tabs})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	return f
}

func (f *fixture) folder() string { return f.dir + ".worktrees" }

func (f *fixture) git(dir string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = f.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.dir, rel)
	if filepath.IsAbs(rel) {
		p = rel
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// commit makes a commit in the worktree at dir.
func (f *fixture) commit(dir, file string) {
	f.t.Helper()
	f.write(filepath.Join(dir, file), file+"\n")
	f.git(dir, "add", file)
	f.git(dir, "commit", "-q", "-m", "add "+file)
}

// addWT adds a worktree with plain git, for setting up.
func (f *fixture) addWT(branch, path string) string {
	f.t.Helper()
	f.git(f.dir, "worktree", "add", "-q", "-b", branch, path, "main")
	return path
}

func (f *fixture) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	f.t.Cleanup(cancel)
	return ctx
}

// snapshot is everything a refused operation must leave as it was.
func (f *fixture) snapshot() string {
	f.t.Helper()
	var b strings.Builder
	b.WriteString(f.git(f.dir, "worktree", "list", "--porcelain"))
	b.WriteString(f.git(f.dir, "for-each-ref", "--format=%(refname) %(objectname)"))
	b.WriteString(f.git(f.dir, "status", "--porcelain"))
	var files []string
	filepath.Walk(filepath.Dir(f.dir), func(p string, info os.FileInfo, err error) error {
		if err == nil && !strings.Contains(p, "/.git/objects") && !strings.HasSuffix(p, "/.git/index") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	b.WriteString(strings.Join(files, "\n"))
	return b.String()
}

// list lists via the Manager.
func (f *fixture) list() Listing {
	f.t.Helper()
	l, err := f.m.List(f.ctx(), f.dir, "")
	if err != nil {
		f.t.Fatalf("List: %v", err)
	}
	return l
}

func (l Listing) at(t testing.TB, path string) Worktree {
	t.Helper()
	for _, w := range l.Worktrees {
		if w.Path == path {
			return w
		}
	}
	t.Fatalf("worktree %s not listed: %+v", path, l.Worktrees)
	return Worktree{}
}

// fakeTabs is a terminald stand-in.
type fakeTabs struct {
	mu     sync.Mutex
	tabs   []Tab
	down   bool
	opened []TabSpec
}

func (ft *fakeTabs) set(tabs ...Tab) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.tabs = tabs
}

func (ft *fakeTabs) List(context.Context) ([]Tab, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.down {
		return nil, errors.New("connection refused")
	}
	return append([]Tab(nil), ft.tabs...), nil
}

func (ft *fakeTabs) Open(_ context.Context, s TabSpec) (string, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.down {
		return "", errors.New("connection refused")
	}
	ft.opened = append(ft.opened, s)
	id := fmt.Sprintf("t%d", 100+len(ft.opened))
	ft.tabs = append(ft.tabs, Tab{ID: id, Directory: s.Worktree, Worktree: s.Worktree, GroupID: s.GroupID, WindowID: s.WindowID})
	return id, nil
}
