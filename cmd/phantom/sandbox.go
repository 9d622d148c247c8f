package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// sandboxCmd is the launcher terminald starts a sandboxed tab's program
// through: it confines itself with Landlock and execs the program, so the
// process terminald started stays the tab's leader (see terminald/sandbox
// for why a launcher at all). Its arguments come from terminald, so it
// parses them itself, strictly, instead of through cobra's flags.
func sandboxCmd() *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.Command + " --write=DIR... -- PROGRAM [ARG...]",
		Short:              "Run PROGRAM confined by Landlock (terminald starts sandboxed tabs with this)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			rules, argv, err := sandbox.ParseArgs(args)
			if err != nil {
				return err
			}
			return sandbox.Exec(rules, argv, os.Environ())
		},
	}
}
