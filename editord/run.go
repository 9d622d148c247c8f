package editord

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/editord/editor"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/paths"
	editorv1 "github.com/phantom-dev/phantom/proto/phantom/editor/v1"
)

// Run serves editord on addr until ctx is done. The editors it started
// keep running in their tabs: they are the human's, and a restarted
// editord finds them again on their sockets.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	tabs := newTerminals(layout.DaemonAddr("terminald"))
	defer tabs.Close()
	m := editor.NewManager(editor.Options{Socket: layout.EditorSocket, SandboxedSocket: layout.SandboxedEditorSocket, Terminals: tabs})
	defer m.Close()
	// Calls from inside tabs (grpcurl from an agent's shell) are placed by
	// the kernel and checked as the gateway's would be.
	g, err := guard.ForInstance(layout, editorv1.File_phantom_editor_v1_editor_proto, guard.Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	srv, err := NewServer(m, logger, g.ServerOptions()...)
	if err != nil {
		return err
	}
	lis, err := daemon.Listen(addr)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, lis)
}

// NewServer builds editord's gRPC server over m with the shared daemon
// chain and any extra server options (the guard).
func NewServer(m *editor.Manager, logger *slog.Logger, opts ...grpc.ServerOption) (*daemon.Server, error) {
	srv, err := daemon.New("editord", logger, opts...)
	if err != nil {
		return nil, err
	}
	editorv1.RegisterEditorServiceServer(srv.GRPC, NewService(m))
	return srv, nil
}
