package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// Sessions that come back (terminald/workspace/persist.go): terminald
// saves the session as it changes, `phantom up` asks it to restore the
// saved one, and `phantom keep-command` marks the command a tab runs
// again then.

func keepCommandCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keep-command [TAB [on COMMAND... | off]]",
		Short: "Mark the command a tab runs again when phantom up restores the session",
		Long: `When Phantom comes back after phantom down or a reboot, each tab comes
back as a new shell in its directory; a tab's command runs again only when
you marked it here. "on" records COMMAND (its words joined with spaces, as
phantom run does) and the directory the tab's shell is in now: phantom up
types it at the restored shell's first prompt, there. "off" removes the
mark. With TAB alone it prints the tab's mark; with nothing, every tab's.
phantom new --keep and phantom run --keep mark the command they start.

Marking is refused inside a Phantom tab: an agent must not choose what runs
as you at the next phantom up.`,
		Example: `  phantom keep-command build on make watch
  phantom keep-command 2 on -- npm run dev -- --port 3000
  phantom keep-command build off
  phantom keep-command`,
		Args: cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			tab, line, err := keepArgs(args)
			switch {
			case err != nil:
				return err
			case tab == "":
				return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
					return listKept(ctx, tc, os.Stdout)
				})
			}
			return withTab(tab, func(ctx context.Context, tc terminalv1.TerminalServiceClient, tab string) error {
				resp, err := tc.KeepCommand(ctx, &terminalv1.KeepCommandRequest{TerminalId: tab, Command: line})
				if err != nil {
					return err
				}
				printKept(os.Stdout, tab, resp)
				return nil
			})
		},
	}
	// Everything after TAB on is the command, flags included.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// keepArgs reads keep-command's arguments: the tab ("" for every tab's
// mark) and the line to keep (nil: only show it; "": remove it).
func keepArgs(args []string) (tab string, line *string, err error) {
	if len(args) > 2 && args[2] == "--" {
		args = slices.Delete(slices.Clone(args), 2, 3) // on -- COMMAND...
	}
	switch {
	case len(args) == 0:
		return "", nil, nil
	case len(args) == 1:
		return args[0], nil, nil
	case args[1] == "on" && len(args) > 2:
		l := strings.Join(args[2:], " ")
		return args[0], &l, nil
	case args[1] == "off" && len(args) == 2:
		l := ""
		return args[0], &l, nil
	case args[1] == "on":
		return "", nil, usageError("no command to keep", "phantom keep-command TAB on COMMAND...")
	}
	return "", nil, usageError(fmt.Sprintf("%q is neither on nor off", strings.Join(args[1:], " ")),
		"phantom keep-command TAB on COMMAND..., or phantom keep-command TAB off")
}

// printKept says what a tab keeps.
func printKept(w io.Writer, tab string, resp *terminalv1.KeepCommandResponse) {
	if resp.GetCommand() == "" {
		fmt.Fprintf(w, "%s keeps no command: it comes back as a shell\n", tab)
		return
	}
	// The directory is where the tab's shell was: an agent's to name.
	fmt.Fprintf(w, "%s runs again when restored: %s (in %s)\n", tab, resp.GetCommand(), printable(resp.GetDirectory()))
}

// listKept prints every tab's kept command.
func listKept(ctx context.Context, tc terminalv1.TerminalServiceClient, w io.Writer) error {
	list, err := tc.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	n := 0
	for _, t := range list.GetTerminals() {
		if !t.GetKeepsCommand() {
			continue
		}
		resp, err := tc.KeepCommand(ctx, &terminalv1.KeepCommandRequest{TerminalId: t.GetId()})
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintln(tw, "ID\tTITLE\tCOMMAND\tDIRECTORY")
		}
		n++
		// A title and a directory are an agent's to choose (a tab's
		// name, its shell's cd): escaped, as ls does.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.GetId(), printable(t.GetTitle()), resp.GetCommand(), printable(resp.GetDirectory()))
	}
	if n == 0 {
		fmt.Fprintln(w, "no tab keeps a command: every tab comes back as a shell")
	}
	return tw.Flush()
}

// keepLine marks line as tab's kept command; for new --keep and run
// --keep.
func keepLine(ctx context.Context, tc terminalv1.TerminalServiceClient, tab, line string) error {
	_, err := tc.KeepCommand(ctx, &terminalv1.KeepCommandRequest{TerminalId: tab, Command: &line})
	if err != nil {
		return fmt.Errorf("mark tab %s's command to run again when restored: %w", tab, err)
	}
	return nil
}

// restoreSession asks the terminald this up started to restore the saved
// session, and says what came back; false when nothing did (the first
// tab is then up's to open).
func restoreSession() bool {
	var resp *terminalv1.RestoreSessionResponse
	err := withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) (err error) {
		resp, err = tc.RestoreSession(ctx, &terminalv1.RestoreSessionRequest{})
		return err
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "phantom: warning: the saved session was not restored: %v\n", rpcError(err))
		return false
	}
	// The report's lines name tabs and directories, which agents choose
	// (a tab's name, the directory its shell is in): escaped, so that
	// none drives the human's terminal.
	for _, w := range resp.GetWarnings() {
		fmt.Fprintln(os.Stderr, "phantom: warning:", printable(w))
	}
	if resp.GetTabs() == 0 {
		return false
	}
	fmt.Printf("restored %d tabs in %d windows from %s\n", resp.GetTabs(), resp.GetWindows(), resp.GetFile())
	for _, r := range resp.GetReran() {
		fmt.Println("running again, as you marked it:", printable(r))
	}
	return true
}

// keepMark is ls's KEEP column: whether the tab runs a command again when
// restored.
func keepMark(t *terminalv1.Terminal) string {
	if t.GetKeepsCommand() {
		return "cmd"
	}
	return "-"
}
