package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
)

// healthCmd asks one daemon's grpc.health.v1 service whether it serves:
// the compose stack's health probe, so the image needs no grpc_health_probe
// (over TCP it presents the certificate $PHANTOM_TLS_NAME names).
func healthCmd() *cobra.Command {
	var (
		addr    string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:    "health NAME",
		Short:  "Exit 0 when the named daemon reports SERVING (a container health probe)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if addr == "" {
				l, err := paths.Default()
				if err != nil {
					return err
				}
				addr = l.DaemonAddr(args[0])
			}
			cc, err := daemon.Dial(addr)
			if err != nil {
				return err
			}
			defer cc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
			if err != nil {
				return fmt.Errorf("%s at %s: health check failed: %w", args[0], addr, err)
			}
			if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				return fmt.Errorf("%s at %s reports %s", args[0], addr, resp.GetStatus())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s at %s: SERVING\n", args[0], addr)
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "the daemon's address (default: PHANTOM_<NAME>_ADDR or its socket)")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait for the answer")
	return cmd
}
