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
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
)

// gcPercent is the gateway process's GOGC, unless the environment sets
// one. Its live heap is a few MiB, while every tool call leaves about
// 100 KiB of garbage, most of it the MCP SDK's (a 32 KiB buffer for each
// of its JSON decodes): at Go's default of 100 it collected every few
// dozen calls, and those collections were most of the calls' p99 (at 400
// they still showed in it). At 800 it collects every few hundred calls,
// for a heap of some tens of MiB.
const gcPercent = 800

// tune sets the runtime for the gateway, unless the environment already
// does (GOGC, GOMAXPROCS), and returns what undoes it. Besides gcPercent,
// it runs the gateway on one P: the SDK hands each request through three
// goroutines (reader, queue, handler), and with a second P every hand-off
// wakes another thread to steal the new goroutine, which spins on the CPU
// the client and the daemon are waiting for. On one P they run back to
// back; a call is under 100 µs of CPU, so one core still serves thousands
// of calls a second, far more than agents make.
func tune() (undo func()) {
	var undos []func()
	if _, set := os.LookupEnv("GOGC"); !set {
		old := debug.SetGCPercent(gcPercent)
		undos = append(undos, func() { debug.SetGCPercent(old) })
	}
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
		undos = append(undos, runtime.SetDefaultGOMAXPROCS)
	}
	return func() {
		for _, u := range undos {
			u()
		}
	}
}

// BackendHealthService is the name under which the gateway's health
// service reports whether the gateway sees the named daemon serving: SERVING
// once its health watch over the gateway's connection says so, NOT_SERVING
// after it saw the daemon go, NOT_FOUND before it heard anything.
// `phantom up` waits for it, so that a tool call right after up returns
// never finds a daemon "not running".
func BackendHealthService(daemon string) string { return "phantom.gateway.backend." + daemon }

// ProgressEveryEnv overrides how often a waiting call sends
// notifications/progress (a Go duration, e.g. "5s"; tests shorten it).
const ProgressEveryEnv = "PHANTOM_GATEWAY_PROGRESS_EVERY"

// Run serves the MCP socket of layout, and the gateway's own gRPC health
// service on addr, until ctx is done.
func Run(ctx context.Context, addr string, layout paths.Layout, logger *slog.Logger) error {
	defer tune()()
	mcpLis, err := daemon.Listen("unix://" + layout.MCPSocket)
	if err != nil {
		return err
	}
	srv, err := daemon.New("gateway", logger)
	if err != nil {
		mcpLis.Close()
		return err
	}
	s, err := NewServer(Options{
		TabStateDir: layout.TabStateDir(),
		Addr:        layout.DaemonAddr,
		Logger:      logger.With("daemon", "gateway"),
		BackendHealth: func(name string, serving bool) {
			st := healthpb.HealthCheckResponse_NOT_SERVING
			if serving {
				st = healthpb.HealthCheckResponse_SERVING
			}
			srv.Health.SetServingStatus(BackendHealthService(name), st)
		},
	})
	if err != nil {
		mcpLis.Close()
		return err
	}
	if v := os.Getenv(ProgressEveryEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Millisecond {
			mcpLis.Close()
			return fmt.Errorf("%s=%q: want a duration of at least 10ms, such as 5s", ProgressEveryEnv, v)
		}
		s.progressEvery = d
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
