// Package gateway is Phantom's MCP gateway: the one process agents talk to.
// It listens on the MCP socket (~/.cache/phantom/<bundle id>.sock), checks
// each connection's hello against the socket's peer credentials and places
// the caller in the process tree (its tab comes from the kernel), and
// serves MCP (revisions 2025-06-18, 2025-11-25 and 2026-07-28) on the
// official Go SDK over newline-delimited JSON-RPC.
// Its tool table is every gRPC method carrying the phantom.mcp.v1.tool
// option; a tool call is checked by authz, then made as one gRPC call to
// the daemon that serves it. The gateway holds no business logic.
package gateway

import (
	"context"
	"errors"
	"log/slog"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
)

// Run serves the MCP socket of layout, and the gateway's own gRPC health
// service on addr, until ctx is done.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	mcpLis, err := daemon.Listen("unix://" + layout.MCPSocket)
	if err != nil {
		return err
	}
	s, err := NewServer(Options{
		TabStateDir: layout.TabStateDir(),
		Addr:        layout.DaemonAddr,
		Logger:      logger.With("daemon", "gateway"),
	})
	if err != nil {
		mcpLis.Close()
		return err
	}
	srv, err := daemon.New("gateway", logger)
	if err != nil {
		mcpLis.Close()
		return err
	}
	lis, err := daemon.Listen(addr)
	if err != nil {
		mcpLis.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mcpErr := make(chan error, 1)
	go func() {
		err := s.Serve(ctx, mcpLis)
		cancel() // the health service must not outlive the MCP socket
		mcpErr <- err
	}()
	logger.Info("MCP socket listening", "daemon", "gateway", "path", layout.MCPSocket)
	err = srv.Serve(ctx, lis)
	cancel()
	return errors.Join(err, <-mcpErr)
}
