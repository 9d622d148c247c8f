package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/authz"
	"github.com/phantom-dev/phantom/editord"
	"github.com/phantom-dev/phantom/gateway"
	"github.com/phantom-dev/phantom/gitd"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/lspd"
	"github.com/phantom-dev/phantom/terminald"
)

// runners are the daemons this binary can be.
var runners = map[string]func(ctx context.Context, addr string, l paths.Layout, log *slog.Logger) error{
	"terminald": terminald.Run,
	"authz":     authz.Run,
	"gateway":   gateway.Run,
	"gitd":      gitd.Run,
	"lspd":      lspd.Run,
	"editord":   editord.Run,
}

func daemonCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:    "daemon NAME",
		Short:  "Run one daemon in the foreground (phantom up does this for you)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			run, ok := runners[args[0]]
			if !ok {
				return fmt.Errorf("unknown daemon %q", args[0])
			}
			l, err := paths.Default()
			if err != nil {
				return err
			}
			if listen == "" {
				listen = l.DaemonAddr(args[0])
			}
			if err := refuseInside(l, "run a Phantom daemon"); err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
			// The daemon of this instance (on its own address, not a copy
			// run by hand elsewhere) states that it serves by writing its
			// pid file itself, once it listens: up never writes one on its
			// behalf, so a pid file never names a process that lost the race
			// for the socket or died starting.
			if listen == l.DaemonAddr(args[0]) {
				if err := paths.EnsurePrivateDir(l.Runtime); err != nil {
					return err
				}
				pidFile := l.PIDFile(args[0])
				daemon.WritePIDFileWhenServing(pidFile, func(err error) {
					logger.Error("pid file not written: phantom down cannot stop this daemon", "err", err)
				})
				defer daemon.RemoveOwnPIDFile(pidFile)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			// A daemon must outlive the terminal that started it. Catch
			// SIGHUP rather than ignore it: an ignored signal stays ignored
			// across exec, so every tab's processes would survive hang-ups.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
			return run(ctx, listen, l, logger)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "listen address: unix:///path or tcp://host:port (default: the runtime directory's socket)")
	return cmd
}

// refuseInside refuses what must not run inside the Phantom instance of l:
// a daemon started there would be a descendant of terminald, an agent's
// process, and no client would trust it.
func refuseInside(l paths.Layout, what string) error {
	p, err := lineage.Instance(l).Locate(os.Getpid())
	if err != nil {
		return fmt.Errorf("cannot tell whether this process runs inside Phantom, so it will not %s: %w", what, err)
	}
	if p.Inside {
		return fmt.Errorf("this process runs inside Phantom (under terminald, pid %d): it will not %s from here; do it from a terminal outside Phantom", p.Terminald.PID, what)
	}
	return nil
}
