package terminald

import (
	"context"
	"log/slog"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/reaper"
	"github.com/phantom-dev/phantom/terminald/sandbox"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// Run serves terminald on addr until ctx is done, then hangs up every tab.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	cfg, err := config.Load(layout.Config)
	if err != nil {
		return err
	}
	// A child subreaper: whatever a tab's processes fork stays terminald's
	// descendant, which is how Phantom tells who is inside it.
	rp, err := reaper.New()
	if err != nil {
		return err
	}
	defer rp.Close()
	ws, err := workspace.New(workspace.Options{Config: cfg, Layout: layout, Logger: logger, Spawner: rp, SandboxLauncher: sandbox.SelfLauncher()})
	if err != nil {
		return err
	}
	defer rp.KillOrphans(2 * time.Second) // after the tabs were hung up
	defer ws.Shutdown()
	srv, stop, err := NewServer(ws, layout, logger)
	if err != nil {
		return err
	}
	defer stop()
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

// NewServer builds terminald's gRPC server over ws: the shared daemon chain,
// the peer identity of every Unix-socket connection, the guard that puts
// calls from inside tabs to authz, and the watcher that brings authz's
// permission sheets to attach. Call stop after the server has stopped.
func NewServer(ws *workspace.Workspace, layout paths.Layout, logger *slog.Logger) (srv *daemon.Server, stop func(), err error) {
	svc := NewService(ws)
	g := guard.New(terminalv1.File_phantom_terminal_v1_terminal_proto, guard.Options{
		Locate:    svc.locate,
		TabOf:     func(_ context.Context, _ int, p lineage.Place) (string, error) { return svc.TabOf(p), nil },
		AuthzAddr: layout.DaemonAddr("authz"),
		Refuse: map[string]string{
			terminalv1.TerminalService_Attach_FullMethodName:        "attach is refused inside Phantom: attach from a terminal outside Phantom",
			terminalv1.TerminalService_SetAgentState_FullMethodName: "only the gateway reports agent state",
		},
		ClientName: func(tabID string) string {
			t, _ := ws.Get(tabID)
			return t.AgentClient
		},
	})
	srv, err = daemon.New("terminald", logger, g.ServerOptions()...)
	if err != nil {
		return nil, nil, err
	}
	sheets, err := startSheetWatcher(layout.DaemonAddr("authz"), logger)
	if err != nil {
		return nil, nil, err
	}
	svc.SetSheets(sheets)
	terminalv1.RegisterTerminalServiceServer(srv.GRPC, svc)
	return srv, func() { sheets.stop(); g.Close() }, nil
}
