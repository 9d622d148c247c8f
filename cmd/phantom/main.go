// Command phantom is Phantom's one user-facing binary: it starts and stops
// the daemons (up, down, status), works with tabs, windows and groups from
// the shell (new, ls, read, run, send, close, rename, focus, window,
// group) and runs each daemon as its own process (daemon NAME). Failures
// are worded and given exit statuses in one place, clierr.go.
package main

import (
	"fmt"
	"io"
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
	os.Exit(execute(rootCmd(), os.Stderr))
}

// execute runs the command line and returns the status to exit with,
// having worded any failure once, in the shared format (clierr.go).
func execute(root *cobra.Command, stderr io.Writer) int {
	// A failure before any command's PersistentPreRun (an unknown
	// command or flag, a wrong number of arguments) is a usage error.
	started := false
	// Run the root's hook even for subcommands with hooks of their own.
	cobra.EnableTraverseRunHooks = true
	preE, pre := root.PersistentPreRunE, root.PersistentPreRun
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		started = true
		switch {
		case preE != nil:
			return preE(c, args)
		case pre != nil:
			pre(c, args)
		}
		return nil
	}
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	msg, code := explain(err, cmd, !started)
	fmt.Fprintln(stderr, "phantom:", msg)
	return code
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "phantom",
		Short: "A terminal workspace for people who run coding agents",
		Long: `Phantom owns your terminals, like tmux: attach to them from any terminal,
locally or over SSH. Agents running in its tabs reach it through an MCP
server on a Unix socket, and do nothing sensitive until you allow it.

Tabs and windows are named by id (t3, w1), by name, or by their place on
attach's status line: 2 is the second tab of your window (the window of
the tab you run in, or the only one), main:2 the second tab of window
main.

` + exitHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(upCmd(), downCmd(), statusCmd(), newCmd(), lsCmd(), readCmd(), closeCmd(), attachCmd(), sheetCmd(), grantsCmd(), daemonCmd(), mcpServerCmd(), mcpCmd(), sandboxCmd(), editCmd())
	root.AddCommand(certsCmd(), healthCmd()) // deploy/: certificates for daemons over TCP, health probe
	root.AddCommand(auditCmd())              // authz's audit log
	// Tabs that outlive terminald (terminald/holder).
	root.AddCommand(holderCmd(), upgradeCmd())
	root.AddCommand(runCmd()) // type a command into a tab, --wait for its result (issue 15)
	addVersion(root)          // phantom --version and phantom version (version.go)
	// The CLI at tmux level (issue 16): keys, names, groups and windows.
	root.AddCommand(sendCmd(), renameCmd(), focusCmd(), groupCmd(), windowCmd())
	root.AddCommand(configCmd(), reloadCmd()) // config.json: check, path, show; apply it now
	root.AddCommand(keepCommandCmd())         // sessions that come back: restore.go
	return root
}
