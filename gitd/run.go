package gitd

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/gitd/worktree"
	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/reaper"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// Run serves gitd on addr until ctx is done.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	cfg, err := config.Load(layout.Config)
	if err != nil {
		return err
	}
	// A child subreaper: what git runs for a call (hooks, filters) stays
	// gitd's descendant however it forks, so it is never taken for the
	// human (internal/lineage), and it ends when gitd does.
	rp, err := reaper.New()
	if err != nil {
		return err
	}
	defer rp.Close()
	defer rp.KillOrphans(2 * time.Second)
	tabs := newTerminals(layout.DaemonAddr("terminald"))
	defer tabs.Close()
	m, err := worktree.New(worktree.Options{WorktreeRoot: cfg.WorktreeRoot, Tabs: tabs, Reaper: rp})
	if err != nil {
		return err
	}
	// Calls from inside tabs go to authz as the gateway's would: the
	// worktree capability guards every tool here.
	g, err := guard.ForInstance(layout, gitv1.File_phantom_git_v1_git_proto, guard.Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	svc := NewSandboxingService(m, tabs.Sandbox, sandbox.SelfLauncher())
	srv, err := newServer(svc, logger, g.ServerOptions()...)
	if err != nil {
		return err
	}
	lis, err := daemon.Listen(addr)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, lis)
}

// NewServer builds gitd's gRPC server over m with the shared daemon chain
// and any extra server options (the guard), running git unconfined (for
// tests; Run sandboxes the git of sandboxed callers).
func NewServer(m *worktree.Manager, logger *slog.Logger, opts ...grpc.ServerOption) (*daemon.Server, error) {
	return newServer(NewService(m), logger, opts...)
}

// newServer builds gitd's gRPC server serving svc.
func newServer(svc *Service, logger *slog.Logger, opts ...grpc.ServerOption) (*daemon.Server, error) {
	srv, err := daemon.New("gitd", logger, opts...)
	if err != nil {
		return nil, err
	}
	gitv1.RegisterGitServiceServer(srv.GRPC, svc)
	return srv, nil
}
