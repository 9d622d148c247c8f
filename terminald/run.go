package terminald

import (
	"context"
	"log/slog"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// Run serves terminald on addr until ctx is done, then hangs up every tab.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	cfg, err := config.Load(layout.Config)
	if err != nil {
		return err
	}
	ws, err := workspace.New(workspace.Options{Config: cfg, Layout: layout, Logger: logger})
	if err != nil {
		return err
	}
	defer ws.Shutdown()
	srv, err := daemon.New("terminald", logger)
	if err != nil {
		return err
	}
	terminalv1.RegisterTerminalServiceServer(srv.GRPC, NewService(ws))
	lis, err := daemon.Listen(addr)
	if err != nil {
		return err
	}
	// Hang up the tabs before the server drains, so that open watch
	// streams end and the graceful stop does not wait for them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-ctx.Done(); ws.Shutdown() }()
	return srv.Serve(ctx, lis)
}
