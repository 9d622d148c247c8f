package terminald

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/reaper"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/holder"
	"github.com/phantom-dev/phantom/terminald/sandbox"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// HandoverSignal asks terminald to leave its tabs to the holder and exit
// (phantom upgrade): nothing is hung up, and the next terminald takes the
// tabs back. SIGUSR2's default action is to terminate, so even a terminald
// that predates hand-over ends on it, and with a holder its tabs survive
// that too.
const HandoverSignal = syscall.SIGUSR2

// Run serves terminald on addr until ctx is done, then hangs up every tab
// — or, on HandoverSignal, leaves them to the holder for the next
// terminald.
//
// The tabs' programs are started by the instance's holder
// (terminald/holder), started here when none runs, so that they outlive
// this process. Where no holder can be had, terminald starts the programs
// itself, as a child subreaper, and its tabs end with it.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	defer startCPUProfile(logger)()
	cfg, err := config.Load(layout.Config)
	if err != nil {
		return err
	}
	// The address first: a second terminald of the instance stops here,
	// before it could take the tabs from the holder (and, exiting, hang
	// them up).
	lis, err := daemon.Listen(addr)
	if err != nil {
		return err
	}
	defer lis.Close()
	// The holder is connected (or started) before terminald could become
	// a subreaper: a holder started by a subreaper terminald would be
	// re-parented to it, and would die with it as its descendant.
	exe, _ := os.Executable()
	hc, herr := holder.Connect(holder.ConnectOptions{
		Socket: holder.Socket(layout.Runtime), Lock: holder.LockFile(layout.Runtime), TerminaldAddr: addr,
		Exe: exe, Log: holder.LogFile(layout.Logs), Logger: logger,
	})
	opts := workspace.Options{Config: cfg, Layout: layout, Logger: logger, SandboxLauncher: sandbox.SelfLauncher(),
		Env: tabEnviron(os.Environ(), exe)} // tabpath.go: `phantom` in a tab is this one
	stopped := ctx // done when terminald is told to stop (phantom down)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan error, 1)
	if herr != nil && !errors.Is(herr, holder.ErrNoHolder) {
		return fmt.Errorf("the holder of this instance's tabs: %w", herr)
	}
	if herr != nil {
		logger.Warn("running without a holder: tabs will not survive a terminald crash or upgrade", "err", herr)
		// A child subreaper: whatever a tab's processes fork stays
		// terminald's descendant, which is how Phantom tells who is
		// inside it.
		rp, err := reaper.New()
		if err != nil {
			return err
		}
		defer rp.Close()
		defer rp.KillOrphans(2 * time.Second) // after the tabs were hung up
		opts.Spawner = rp
	} else {
		pid, _ := hc.Process()
		logger.Info("tabs are held by the holder", "pid", pid)
		defer hc.Close()
		opts.Holder = hc
		opts.OnHolderLost = func(err error) {
			lost <- err
			cancel()
		}
	}
	ws, err := workspace.New(opts)
	if err != nil {
		return err
	}
	// Tabs are hung up only when terminald is told to stop, or when they
	// cannot outlive it. Any other way out (an error) leaves them to the
	// holder for the next terminald.
	defer func() {
		if hc == nil || stopped.Err() != nil {
			ws.Shutdown()
		} else {
			_ = ws.Detach()
		}
	}()
	srv, stop, err := NewServer(ws, layout, logger)
	if err != nil {
		return err
	}
	defer stop()
	handover := make(chan os.Signal, 1)
	signal.Notify(handover, HandoverSignal)
	defer signal.Stop(handover)
	// Hang up the tabs before the server drains, so that open watch
	// streams end and the graceful stop does not wait for them. On a
	// hand-over, detach instead: the streams end the same way.
	go func() {
		select {
		case <-handover:
			logger.Info("handing the tabs over to the next terminald")
			if err := ws.Detach(); err != nil {
				logger.Error("hand-over", "err", err)
			}
			cancel()
		case <-stopped.Done():
			ws.Shutdown()
		case <-ctx.Done():
		}
	}()
	err = srv.Serve(ctx, lis)
	select {
	case lerr := <-lost:
		return errors.Join(err, fmt.Errorf("lost the holder, and with it every tab: %w", lerr))
	default:
	}
	if hc != nil && stopped.Err() != nil && !ws.Detached() {
		// phantom down: the tabs were hung up; the holder kills what is
		// left of them and exits.
		ws.Shutdown()
		if serr := hc.Shutdown(); serr != nil {
			logger.Warn("holder shutdown", "err", serr)
		}
	}
	return err
}

// NewServer builds terminald's gRPC server over ws: the shared daemon chain,
// the peer identity of every Unix-socket connection, the guard that puts
// calls from inside tabs to authz, and the watcher that brings authz's
// permission sheets to attach, and the follower of config.json
// (reload.go). Call stop after the server has stopped.
func NewServer(ws *workspace.Workspace, layout paths.Layout, logger *slog.Logger) (srv *daemon.Server, stop func(), err error) {
	svc := NewService(ws)
	g := guard.New(terminalv1.File_phantom_terminal_v1_terminal_proto, guard.Options{
		Locate:    svc.locate,
		TabOf:     func(_ context.Context, _ int, p lineage.Place) (string, error) { return svc.TabOf(p), nil },
		AuthzAddr: layout.DaemonAddr("authz"),
		// ReloadConfig only re-reads config.json, which terminald follows
		// anyway (reload.go): calling it from a tab gives no power that
		// writing the file would not (the human's `phantom reload` runs
		// in a tab, too).
		// ListEntries tells which tabs share a status-line entry, for
		// the CLI's positions (entries.go).
		Open: []string{terminalv1.ConfigService_ReloadConfig_FullMethodName, terminalv1.TerminalService_ListEntries_FullMethodName},
		Refuse: map[string]string{
			terminalv1.TerminalService_Attach_FullMethodName:        "attach is refused inside Phantom: attach from a terminal outside Phantom",
			terminalv1.TerminalService_SetAgentState_FullMethodName: "only the gateway reports agent state",
			// What runs as the human at the next `phantom up` is the
			// human's to choose (workspace/persist.go).
			terminalv1.TerminalService_KeepCommand_FullMethodName:    "marking a command to run again at restore is for the human: run phantom keep-command in a terminal outside Phantom",
			terminalv1.TerminalService_RestoreSession_FullMethodName: "only phantom up, outside Phantom, restores the saved session",
			terminalv1.TerminalService_CloseWindow_FullMethodName:    "windows are the human's: closing one is refused inside Phantom (the human closes it from outside, or in attach)",
			terminalv1.TerminalService_MoveTerminal_FullMethodName:   "windows are the human's: moving a tab to another window is refused inside Phantom (the human moves it from outside, or in attach)",
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
	svc.SetGrants(grantsRelay{az: sheets.az, auditPath: filepath.Join(layout.State, audit.FileName)})
	svc.SetEventRecorder(sheets.az, logger)
	terminalv1.RegisterTerminalServiceServer(srv.GRPC, svc)
	reloader := newConfigReloader(layout.Config, ws, logger)
	svc.live = reloader.live
	terminalv1.RegisterConfigServiceServer(srv.GRPC, reloader)
	watchCtx, stopWatch := context.WithCancel(context.Background())
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		reloader.watch(watchCtx)
	}()
	stopAttention := svc.startAttention(sheets) // attention.go
	return srv, func() { stopWatch(); <-watchDone; stopAttention(); sheets.stop(); g.Close() }, nil
}
