package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/toolreg"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// withAuthz runs one call against authz (see withDaemon).
func withAuthz(call func(context.Context, authzv1.AuthzServiceClient) error) error {
	return withDaemon("authz", authzv1.NewAuthzServiceClient, call)
}

func grantsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "grants",
		Short: "List the permissions you gave agents (standing and once grants)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var resp *authzv1.ListGrantsResponse
			err := withAuthz(func(ctx context.Context, ac authzv1.AuthzServiceClient) (err error) {
				resp, err = ac.ListGrants(ctx, &authzv1.ListGrantsRequest{})
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(resp)
			}
			if len(resp.GetGrants()) == 0 {
				fmt.Println("No grants: agents are asked before anything sensitive.")
				return nil
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCLIENT\tPROGRAM\tCAPABILITY\tSCOPE\tPROJECT\tKIND\tCREATED")
			for _, g := range resp.GetGrants() {
				kind := "always"
				switch {
				case g.GetPending():
					kind = "always, PENDING: added to the file by hand; phantom grants accept " + g.GetId() + " puts it in force"
				case g.GetAlways() && g.GetProgram() == "":
					kind = "always, but for no program (written before grants named one): covers nothing; revoke it"
				case !g.GetAlways():
					kind = "once: only " + printable(g.GetCall()) + " (connection " + g.GetConnectionId() + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.GetId(), printable(g.GetClient()), dash(printable(g.GetProgram())),
					toolreg.CapabilityName(g.GetCapability()), scopeName(g.GetScope()), dash(printable(g.GetProject())), kind, g.GetCreated())
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(&cobra.Command{
		Use:   "accept ID",
		Short: "Put in force a pending grant (one added to grants.json by hand while authz ran)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withAuthz(func(ctx context.Context, ac authzv1.AuthzServiceClient) error {
				resp, err := ac.AcceptGrant(ctx, &authzv1.AcceptGrantRequest{GrantId: args[0]})
				if err == nil {
					g := resp.GetGrant()
					fmt.Printf("accepted %s: %s may %s, scope %s, in %s\n", g.GetId(), printable(g.GetClient()),
						toolreg.CapabilityName(g.GetCapability()), scopeName(g.GetScope()), dash(printable(g.GetProject())))
				}
				return err
			})
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a grant",
		Long: "Revoke a grant. It takes effect at once, even when the grants file cannot be updated (a full disk):\n" +
			"the command then says so and fails, and authz keeps trying to write the file.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withAuthz(func(ctx context.Context, ac authzv1.AuthzServiceClient) error {
				resp, err := ac.RevokeGrant(ctx, &authzv1.RevokeGrantRequest{GrantId: args[0]})
				if err != nil {
					return err
				}
				if resp.GetFileError() == "" {
					fmt.Printf("revoked %s\n", args[0])
					return nil
				}
				fmt.Printf("revoked %s in memory: it is refused from now on\n", args[0])
				return fmt.Errorf("but the grants file could not be updated: %s; authz keeps trying to write it, and "+
					"until it succeeds a restart of authz would bring the grant back (phantom status shows when it is written)",
					resp.GetFileError())
			})
		},
	})
	return cmd
}

// scopeName is "tab" for SCOPE_TAB.
func scopeName(s authzv1.Scope) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "SCOPE_"))
}

// printable escapes control characters in text an agent chose (its client
// name, a tab title, a command), so it cannot drive the human's terminal,
// and the bidi controls, so it cannot reorder what a line shows after it
// (a right-to-left override turning "ok" into "ko", or a path around).
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		case attach.BidiControl(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
