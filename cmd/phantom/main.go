// Command phantom is Phantom's one user-facing binary: it starts and stops
// the daemons (up, down, status), works with tabs from the shell (new, ls,
// read, close) and runs each daemon as its own process (daemon NAME).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := protectProcess(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "phantom:", err)
		os.Exit(1)
	}
	// Before anything can start a process: see closeInheritedFDs. Every
	// command, not only up and daemon: any phantom process may start
	// others (the sandbox launcher execs a tab's program, edit an editor).
	if err := closeInheritedFDs(); err != nil {
		fmt.Fprintln(os.Stderr, "phantom:", err)
		os.Exit(1)
	}
	if err := rootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "phantom:", err)
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "phantom",
		Short: "A terminal workspace for people who run coding agents",
		Long: `Phantom owns your terminals, like tmux: attach to them from any terminal,
locally or over SSH. Agents running in its tabs reach it through an MCP
server on a Unix socket, and do nothing sensitive until you allow it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(upCmd(), downCmd(), statusCmd(), newCmd(), lsCmd(), readCmd(), closeCmd(), attachCmd(), sheetCmd(), grantsCmd(), daemonCmd(), mcpServerCmd(), mcpCmd(), sandboxCmd(), editCmd())
	root.AddCommand(certsCmd(), healthCmd()) // deploy/: certificates for daemons over TCP, health probe
	root.AddCommand(auditCmd())              // authz's audit log
	// Tabs that outlive terminald (terminald/holder).
	root.AddCommand(holderCmd(), upgradeCmd())
	root.AddCommand(runCmd()) // type a command into a tab, --wait for its result (issue 15)
	return root
}
