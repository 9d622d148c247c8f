package lspd

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/reaper"
	"github.com/phantom-dev/phantom/lspd/servers"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// StateFile is where configure_language_server's changes are kept, inside
// the state directory.
const StateFile = "lspd.json"

// Run serves lspd on addr until ctx is done; every language server it
// started is stopped before it returns.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	cfg, err := config.Load(layout.Config)
	if err != nil {
		return err
	}
	// A child subreaper: whatever a language server starts stays lspd's
	// descendant however it forks, so it is never taken for the human
	// (internal/lineage), and it ends when lspd does.
	rp, err := reaper.New()
	if err != nil {
		return err
	}
	defer rp.Close()
	defer rp.KillOrphans(2 * time.Second)
	reg, err := servers.New(servers.Options{
		Configs:   fromSettings(cfg.LanguageServers),
		StatePath: filepath.Join(layout.State, StateFile),
		Logger:    logger,
		Reaper:    rp,
		// lspd runs as `phantom daemon lspd`: its own executable is the
		// sandbox launcher.
		Launcher: sandbox.SelfLauncher(),
	})
	if err != nil {
		return err
	}
	defer reg.Close()
	// Calls from inside tabs go to authz as the gateway's would:
	// configure_language_server needs the configure capability.
	g, err := guard.ForInstance(layout, lspv1.File_phantom_lsp_v1_lsp_proto, guard.Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	// terminald says how a caller's tab is sandboxed (DescribeSandbox),
	// so that its language servers run in that sandbox.
	tcc, err := daemon.Dial(layout.DaemonAddr("terminald"))
	if err != nil {
		return err
	}
	defer tcc.Close()
	srv, err := NewServer(reg, DescribeWith(terminalv1.NewTerminalServiceClient(tcc)), machineOf(layout, sandbox.SelfLauncher(), logger), logger, g.ServerOptions()...)
	if err != nil {
		return err
	}
	lis, err := daemon.Listen(addr)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, lis)
}

// NewServer builds lspd's gRPC server over reg with the shared daemon
// chain and any extra server options (the guard); describe and machine
// are as for NewService.
func NewServer(reg *servers.Registry, describe DescribeFunc, machine func() servers.Machine, logger *slog.Logger, opts ...grpc.ServerOption) (*daemon.Server, error) {
	srv, err := daemon.New("lspd", logger, opts...)
	if err != nil {
		return nil, err
	}
	lspv1.RegisterLanguageServerServiceServer(srv.GRPC, NewService(reg, describe, machine))
	return srv, nil
}
