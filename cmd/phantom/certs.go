package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
)

// certsCmd makes the certificates daemons use over TCP (the compose
// stack): a fresh CA, one certificate per daemon and one per human client.
func certsCmd() *cobra.Command {
	var (
		dir     string
		clients []string
		hosts   []string
	)
	cmd := &cobra.Command{
		Use:   "certs --dir DIR [--client NAME]... [--host NAME]...",
		Short: "Make the CA and certificates daemons need over TCP (mutual TLS)",
		Long: `Makes a fresh CA in DIR and signs one certificate per daemon (` + fmt.Sprint(paths.Daemons) + `)
and one per client (default: human). Daemon certificates name the daemon,
localhost and the loopback addresses, plus every --host. The CA's key is not
kept: run it again to renew or add an identity, which retires the old set.

Each daemon reads DIR/ca.crt and DIR/<name>/tls.{crt,key}, where $` + daemon.TLSDirEnv + ` is DIR
and $` + daemon.TLSNameEnv + ` is <name>. The human's CLI uses the same variables
(the name defaults to human). Mount each container only its own folder.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("say where the certificates go with --dir")
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return fmt.Errorf("certificate folder %q: %w", dir, err)
			}
			if err := daemon.WriteCerts(daemon.CertRequest{Dir: abs, Daemons: paths.Daemons, Clients: clients, Hosts: hosts}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "certificates for %v and %v written to %s\n", paths.Daemons, clients, abs)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "folder that receives ca.crt and NAME/tls.{crt,key}")
	cmd.Flags().StringSliceVar(&clients, "client", []string{daemon.HumanIdentity}, "client identities to certify")
	cmd.Flags().StringSliceVar(&hosts, "host", nil, "extra host names or IP addresses for the daemon certificates")
	return cmd
}
