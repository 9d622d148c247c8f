package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// sandboxCmd is the launcher terminald starts a sandboxed tab's program
// through (sandbox.Run): it confines itself with Landlock and execs the
// program or, with --isolate, stays as the tab's leader and monitor of a
// second stage that builds the walls of a private mount namespace first
// (see terminald/sandbox). Its arguments come from Rules.Argv, so it
// parses them itself, strictly, instead of through cobra's flags.
func sandboxCmd() *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.Command + " [--isolate] --write=DIR... -- PROGRAM [ARG...]",
		Short:              "Run PROGRAM confined by Landlock and, with --isolate, a private mount namespace (terminald starts sandboxed tabs with this)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return sandbox.Run(args, os.Environ())
		},
	}
}
