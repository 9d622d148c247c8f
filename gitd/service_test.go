package gitd

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/gitd/worktree"
	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// instance is gitd and a real terminald, each served over a real Unix
// socket in-process, with a git repository to work on.
type instance struct {
	git  gitv1.GitServiceClient
	term terminalv1.TerminalServiceClient
	env  *testenv.Env
	repo string
	vars []string
}

// serve serves srv on addr until the test ends.
func serve(t *testing.T, srv *daemon.Server, addr string) {
	t.Helper()
	lis, err := daemon.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve %s: %v", addr, err)
		}
	})
}

func dial(t *testing.T, addr string) *instanceConn {
	t.Helper()
	cc, err := daemon.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return &instanceConn{git: gitv1.NewGitServiceClient(cc), term: terminalv1.NewTerminalServiceClient(cc)}
}

type instanceConn struct {
	git  gitv1.GitServiceClient
	term terminalv1.TerminalServiceClient
}

// start runs terminald (unless noTerminald) and gitd; gitd looks for
// terminald at its usual address either way.
func start(t *testing.T, noTerminald bool) *instance {
	t.Helper()
	env := testenv.New(t)
	vars := append(slices.Clone(env.Vars), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(env.Home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
	in := &instance{env: env, vars: vars, repo: filepath.Join(env.Home, "src", "app")}
	taddr := env.Layout.DaemonAddr("terminald")
	if !noTerminald {
		cfg, err := config.Load(env.Layout.Config)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Shell = "/bin/sh"
		ws, err := workspace.New(workspace.Options{Config: cfg, Layout: env.Layout, Env: env.Vars, PollInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		srv, stopGuard, err := terminald.NewServer(ws, env.Layout, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stopGuard)
		t.Cleanup(ws.Shutdown)
		serve(t, srv, taddr)
		in.term = dial(t, taddr).term
	}
	tabs := newTerminals(taddr)
	t.Cleanup(tabs.Close)
	m, err := worktree.New(worktree.Options{Env: vars, Tabs: tabs})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(m, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	gaddr := env.Layout.DaemonAddr("gitd")
	serve(t, srv, gaddr)
	in.git = dial(t, gaddr).git

	os.MkdirAll(filepath.Dir(in.repo), 0o755)
	in.run(t, filepath.Dir(in.repo), "init", "-q", "-b", "main", in.repo)
	in.run(t, in.repo, "config", "user.name", "Test")
	in.run(t, in.repo, "config", "user.email", "test@example.com")
	in.run(t, in.repo, "commit", "-q", "--allow-empty", "-m", "init")
	return in
}

func (in *instance) run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, in.vars
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantCode(t *testing.T, err error, code codes.Code, inMsg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), inMsg) {
		t.Fatalf("error = %v (%q); want %v containing %q", st.Code(), st.Message(), code, inMsg)
	}
}

// TestService drives every tool over gRPC with a real terminald: add a
// worktree with a tab in the caller's group, see the tab in the listing,
// be refused removal while the tab works there, tidy, and remove by force.
func TestService(t *testing.T) {
	in := start(t, false)
	g, err := in.term.CreateGroup(ctx(t), &terminalv1.CreateGroupRequest{Name: "agents"})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := in.term.CreateTerminal(ctx(t), &terminalv1.CreateTerminalRequest{Directory: in.repo, GroupId: g.GetGroup().GetId()})
	if err != nil {
		t.Fatal(err)
	}

	add, err := in.git.AddWorktree(ctx(t), &gitv1.AddWorktreeRequest{
		Branch: "feature/login", OpenTerminal: true,
		CallerDirectory: in.repo, CallerTabId: caller.GetTerminal().GetId(),
	})
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(filepath.Dir(in.repo), "app.worktrees", "feature-login")
	if add.GetWorktree().GetPath() != wt || !add.GetCreatedBranch() || add.GetTerminalId() == "" || len(add.GetNotes()) != 0 {
		t.Fatalf("AddWorktree = %v", add)
	}
	tabs, err := in.term.ListTerminals(ctx(t), &terminalv1.ListTerminalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range tabs.GetTerminals() {
		if tm.GetId() == add.GetTerminalId() && (tm.GetGroupId() != g.GetGroup().GetId() || tm.GetWorktree() != wt) {
			t.Errorf("new tab = %v; want group %s, worktree %s", tm, g.GetGroup().GetId(), wt)
		}
	}

	list, err := in.git.ListWorktrees(ctx(t), &gitv1.ListWorktreesRequest{CallerDirectory: wt})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetWorktrees()) != 2 || list.GetRepository() != in.repo || list.GetDefaultBranch() != "main" || len(list.GetNotes()) != 0 {
		t.Fatalf("ListWorktrees = %v", list)
	}
	if ids := list.GetWorktrees()[0].GetTerminalIds(); !slices.Equal(ids, []string{caller.GetTerminal().GetId()}) {
		t.Errorf("main worktree tabs = %v", ids)
	}
	if ids := list.GetWorktrees()[1].GetTerminalIds(); !slices.Equal(ids, []string{add.GetTerminalId()}) {
		t.Errorf("new worktree tabs = %v", ids)
	}

	_, err = in.git.RemoveWorktree(ctx(t), &gitv1.RemoveWorktreeRequest{Repository: in.repo, Path: wt})
	wantCode(t, err, codes.FailedPrecondition, add.GetTerminalId())

	tidy, err := in.git.TidyWorktrees(ctx(t), &gitv1.TidyWorktreesRequest{Repository: in.repo, DryRun: true,
		Actions: []*gitv1.TidyAction{{Kind: gitv1.TidyAction_KIND_LOCK, Path: wt, Reason: "busy"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := tidy.GetResults(); len(r) != 1 || !strings.HasPrefix(r[0].GetOutcome(), "would lock") || r[0].GetAction().GetKind() != gitv1.TidyAction_KIND_LOCK {
		t.Errorf("tidy results = %v", r)
	}
	if m := tidy.GetReport().GetMerged(); len(m) != 1 || m[0].GetBranch() != "feature/login" {
		t.Errorf("tidy merged = %v", m)
	}

	rm, err := in.git.RemoveWorktree(ctx(t), &gitv1.RemoveWorktreeRequest{Repository: in.repo, Path: wt, Force: true, DeleteBranch: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rm.GetBranchDeleted() || rm.GetBranch() != "feature/login" {
		t.Errorf("RemoveWorktree = %v", rm)
	}
}

// TestServiceErrors checks that refusals arrive with the right codes and
// name the field or the state.
func TestServiceErrors(t *testing.T) {
	in := start(t, false)
	tests := []struct {
		name string
		call func(context.Context) error
		code codes.Code
		msg  string
	}{
		{"empty branch (validation)", func(c context.Context) error {
			_, err := in.git.AddWorktree(c, &gitv1.AddWorktreeRequest{Repository: in.repo})
			return err
		}, codes.InvalidArgument, "branch"},
		{"option as branch", func(c context.Context) error {
			_, err := in.git.AddWorktree(c, &gitv1.AddWorktreeRequest{Repository: in.repo, Branch: "--upload-pack=x"})
			return err
		}, codes.InvalidArgument, "branch"},
		{"path escapes", func(c context.Context) error {
			_, err := in.git.AddWorktree(c, &gitv1.AddWorktreeRequest{Repository: in.repo, Branch: "x", Path: "/etc/x"})
			return err
		}, codes.InvalidArgument, "path"},
		{"not a repository", func(c context.Context) error {
			_, err := in.git.ListWorktrees(c, &gitv1.ListWorktreesRequest{Repository: in.env.Home})
			return err
		}, codes.InvalidArgument, "not in a git repository"},
		{"no repository", func(c context.Context) error {
			_, err := in.git.ListWorktrees(c, &gitv1.ListWorktreesRequest{})
			return err
		}, codes.InvalidArgument, "repository"},
		{"remove main", func(c context.Context) error {
			_, err := in.git.RemoveWorktree(c, &gitv1.RemoveWorktreeRequest{Repository: in.repo, Path: in.repo, Force: true})
			return err
		}, codes.FailedPrecondition, "main worktree"},
		{"remove unknown", func(c context.Context) error {
			_, err := in.git.RemoveWorktree(c, &gitv1.RemoveWorktreeRequest{Repository: in.repo, Path: "/tmp"})
			return err
		}, codes.NotFound, "not a worktree"},
		{"unspecified action (validation)", func(c context.Context) error {
			_, err := in.git.TidyWorktrees(c, &gitv1.TidyWorktreesRequest{Repository: in.repo, Actions: []*gitv1.TidyAction{{}}})
			return err
		}, codes.InvalidArgument, "kind"},
		{"branch exists", func(c context.Context) error {
			_, err := in.git.AddWorktree(c, &gitv1.AddWorktreeRequest{Repository: in.repo, Branch: "main"})
			return err
		}, codes.FailedPrecondition, "checked out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.call(ctx(t)), tt.code, tt.msg) })
	}
}

// TestServiceTerminaldDown checks that listing works without terminald and
// says the tabs are unknown, and that removal then needs force.
func TestServiceTerminaldDown(t *testing.T) {
	in := start(t, true)
	add, err := in.git.AddWorktree(ctx(t), &gitv1.AddWorktreeRequest{Repository: in.repo, Branch: "b", OpenTerminal: true})
	if err != nil {
		t.Fatal(err)
	}
	if add.GetTerminalId() != "" || len(add.GetNotes()) != 1 {
		t.Errorf("AddWorktree with terminald down = %v", add)
	}
	list, err := in.git.ListWorktrees(ctx(t), &gitv1.ListWorktreesRequest{Repository: in.repo})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetWorktrees()) != 2 || len(list.GetNotes()) != 1 || !strings.Contains(list.GetNotes()[0], "terminald") {
		t.Errorf("ListWorktrees with terminald down = %v", list)
	}
	_, err = in.git.RemoveWorktree(ctx(t), &gitv1.RemoveWorktreeRequest{Repository: in.repo, Path: add.GetWorktree().GetPath()})
	wantCode(t, err, codes.FailedPrecondition, "terminald")
	if _, err := in.git.RemoveWorktree(ctx(t), &gitv1.RemoveWorktreeRequest{Repository: in.repo, Path: add.GetWorktree().GetPath(), Force: true}); err != nil {
		t.Error(err)
	}
}
