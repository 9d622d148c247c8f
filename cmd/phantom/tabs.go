package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

func newCmd() *cobra.Command {
	var req terminalv1.CreateTerminalRequest
	cmd := &cobra.Command{
		Use:   "new [flags] [-- COMMAND [ARG...]]",
		Short: "Open a tab and print its id",
		Long: `Open a tab running your shell (or an agent, or COMMAND) and print its id.
The tab starts in --dir, by default the current directory. A tab with an
agent, or with --sandbox, runs sandboxed where the kernel allows it (see
phantom status).`,
		RunE: func(_ *cobra.Command, args []string) error {
			req.Command = args
			if req.Directory == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				req.Directory = wd
			}
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				resp, err := tc.CreateTerminal(ctx, &req)
				if err == nil {
					fmt.Println(resp.GetTerminal().GetId())
				}
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Directory, "dir", "", "directory to start in (default: the current directory)")
	f.StringVar(&req.GroupId, "group", "", "group id to put the tab in")
	f.StringVar(&req.Name, "name", "", "the tab's name")
	f.StringVar(&req.Agent, "agent", "", "a configured agent to run (claude, codex, gemini, ...); its tab is sandboxed")
	f.BoolVar(&req.Sandbox, "sandbox", false, "run the tab sandboxed (Landlock): writes only in its directory, temporary directories and the agent's own; no signals beyond the tab; no sudo")
	f.StringVar(&req.WindowId, "window", "", "window id (default: the first window)")
	return cmd
}

func lsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the tabs",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var resp *terminalv1.ListTerminalsResponse
			err := withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) (err error) {
				resp, err = tc.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(resp)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTITLE\tDIRECTORY\tPROCESS\tSTATE\tPORTS\tGROUP\tWINDOW\tWORKTREE\tAGENT")
			for _, t := range resp.GetTerminals() {
				id := t.GetId()
				if t.GetFocused() {
					id += "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, t.GetTitle(), t.GetDirectory(),
					t.GetForegroundProcess().GetName(), tabState(t), ports(t.GetDevServerPorts()),
					dash(t.GetGroupId()), t.GetWindowId(), dash(t.GetWorktree()), agentState(t))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (the list_terminals fields)")
	return cmd
}

func tabState(t *terminalv1.Terminal) string {
	switch {
	case t.GetExited():
		return "exited " + strconv.Itoa(int(t.GetExitCode()))
	case t.GetEditor():
		return "editor"
	case t.GetIdle():
		return "idle"
	default:
		return "busy"
	}
}

func agentState(t *terminalv1.Terminal) string {
	if t.GetAgentState() == terminalv1.AgentState_AGENT_STATE_UNSPECIFIED {
		return "-"
	}
	s := strings.ToLower(strings.TrimPrefix(t.GetAgentState().String(), "AGENT_STATE_"))
	return t.GetAgentClient() + ":" + s
}

func ports(ps []uint32) string {
	if len(ps) == 0 {
		return "-"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func readCmd() *cobra.Command {
	var n int32
	cmd := &cobra.Command{
		Use:   "read TAB",
		Short: "Print the last lines of a tab as plain text",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				resp, err := tc.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: args[0], Lines: &n})
				for _, l := range resp.GetLines() {
					fmt.Println(l)
				}
				return err
			})
		},
	}
	cmd.Flags().Int32VarP(&n, "lines", "n", 100, "how many of the last lines")
	return cmd
}

func closeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "close TAB",
		Short: "Close a tab, hanging up its processes",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				_, err := tc.CloseTerminal(ctx, &terminalv1.CloseTerminalRequest{TerminalId: args[0]})
				return err
			})
		},
	}
}
