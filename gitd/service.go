// Package gitd is the git daemon: a thin gRPC adapter (GitService) over
// package worktree, which runs the real git to list, add, remove and tidy a
// repository's worktrees. Domain errors from worktree are translated to
// gRPC codes by the shared server chain (internal/daemon).
package gitd

import (
	"context"
	"time"

	"github.com/phantom-dev/phantom/gitd/worktree"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
)

// CallTimeout bounds one call, all the git commands it runs included (each
// is bounded by a minute too): the tools' options state it (wait_bound).
const CallTimeout = 2 * time.Minute

// Service implements gitv1.GitServiceServer.
type Service struct {
	gitv1.UnimplementedGitServiceServer
	m *worktree.Manager
	// describe and launcher sandbox the git of sandboxed callers
	// (sandbox.go); without describe git runs unconfined.
	describe tabSandbox
	launcher string
}

// NewService serves m, running git unconfined: for tests of the adapter.
func NewService(m *worktree.Manager) *Service { return &Service{m: m} }

// NewSandboxingService serves m, running the git of each call in its
// caller's sandbox (sandbox.go): describe tells a tab's rules, launcher is
// the sandbox launcher.
func NewSandboxingService(m *worktree.Manager, describe tabSandbox, launcher string) *Service {
	return &Service{m: m, describe: describe, launcher: launcher}
}

// ListWorktrees lists a repository's worktrees.
func (s *Service) ListWorktrees(ctx context.Context, r *gitv1.ListWorktreesRequest) (*gitv1.ListWorktreesResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	ctx, err := s.confine(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.m.List(ctx, r.GetRepository(), r.GetCallerDirectory())
	if err != nil {
		return nil, err
	}
	return &gitv1.ListWorktreesResponse{
		Repository: l.Repository, DefaultBranch: l.DefaultBranch, WorktreeFolder: l.Folder,
		Worktrees: toWorktrees(l.Worktrees), Notes: l.Notes,
	}, nil
}

// AddWorktree adds a worktree.
func (s *Service) AddWorktree(ctx context.Context, r *gitv1.AddWorktreeRequest) (*gitv1.AddWorktreeResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	ctx, err := s.confine(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.m.Add(ctx, worktree.AddSpec{
		Repository: r.GetRepository(), CallerDir: r.GetCallerDirectory(),
		Branch: r.GetBranch(), Base: r.GetBase(), Path: r.GetPath(),
		OpenTerminal: r.GetOpenTerminal(), CallerTab: r.GetCallerTabId(),
	})
	if err != nil {
		return nil, err
	}
	return &gitv1.AddWorktreeResponse{
		Worktree: toWorktree(a.Worktree), CreatedBranch: a.CreatedBranch, TerminalId: a.TerminalID, Notes: a.Notes,
	}, nil
}

// RemoveWorktree removes a worktree.
func (s *Service) RemoveWorktree(ctx context.Context, r *gitv1.RemoveWorktreeRequest) (*gitv1.RemoveWorktreeResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	ctx, err := s.confine(ctx)
	if err != nil {
		return nil, err
	}
	rm, err := s.m.Remove(ctx, worktree.RemoveSpec{
		Repository: r.GetRepository(), CallerDir: r.GetCallerDirectory(),
		Path: r.GetPath(), Force: r.GetForce(), DeleteBranch: r.GetDeleteBranch(),
	})
	if err != nil {
		return nil, err
	}
	return &gitv1.RemoveWorktreeResponse{
		Path: rm.Path, Branch: rm.Branch, BranchDeleted: rm.BranchDeleted, BranchKeptReason: rm.BranchKeptReason,
	}, nil
}

// TidyWorktrees reports what needs tidying and runs the actions asked for.
func (s *Service) TidyWorktrees(ctx context.Context, r *gitv1.TidyWorktreesRequest) (*gitv1.TidyWorktreesResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	ctx, err := s.confine(ctx)
	if err != nil {
		return nil, err
	}
	t, err := s.m.Tidy(ctx, worktree.TidySpec{
		Repository: r.GetRepository(), CallerDir: r.GetCallerDirectory(),
		Actions: fromActions(r.GetActions()), DryRun: r.GetDryRun(), Force: r.GetForce(),
	})
	if err != nil {
		return nil, err
	}
	return &gitv1.TidyWorktreesResponse{
		Report: toReport(t.Report), Results: toResults(t.Results), WorktreeFolder: t.Folder, Notes: t.Notes,
	}, nil
}
