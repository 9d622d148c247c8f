package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// windowCmd is `phantom window new|ls|rename|close|move`.
func windowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "window",
		Short: "Create, list, rename and close windows; move tabs between them",
		RunE:  subcommandsOnly,
	}
	cmd.AddCommand(windowNewCmd(), windowLsCmd(), windowRenameCmd(), windowCloseCmd(), windowMoveCmd())
	return cmd
}

func windowNewCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "new [NAME]",
		Short: "Create a window and print its id (open tabs in it with phantom new --window)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				resp, err := tc.CreateWindow(ctx, &terminalv1.CreateWindowRequest{Name: name})
				if err == nil {
					fmt.Println(resp.GetWindow().GetId())
				}
				return err
			})
		},
	}
}

func windowLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the windows",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				resp, err := tc.ListWindows(ctx, &terminalv1.ListWindowsRequest{})
				if err != nil {
					return err
				}
				var rows []string
				for _, w := range resp.GetWindows() {
					rows = append(rows, strings.Join([]string{w.GetId(), w.GetName(), dash(strings.Join(w.GetTerminalIds(), ",")),
						dash(w.GetFocusedTerminalId()), dash(strings.Join(w.GetGroupIds(), ","))}, "\t"))
				}
				return printList(resp, asJSON, "ID\tNAME\tTABS\tFOCUSED\tGROUPS", rows)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func windowRenameCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rename WINDOW NAME",
		Short: "Rename a window",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				w, err := newTargets(ctx, tc).Window(args[0])
				if err != nil {
					return err
				}
				_, err = tc.UpdateWindow(ctx, &terminalv1.UpdateWindowRequest{WindowId: w.GetId(), Name: args[1]})
				return err
			})
		},
	}
}

// renameCmd is `phantom rename TAB NAME`, attach's prefix , from the shell.
func renameCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rename TAB NAME",
		Short: "Rename a tab",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTab(args[0], func(ctx context.Context, tc terminalv1.TerminalServiceClient, tab string) error {
				_, err := tc.UpdateTerminal(ctx, &terminalv1.UpdateTerminalRequest{TerminalId: tab, Name: &args[1]})
				return err
			})
		},
	}
}

// focusCmd is `phantom focus TAB`: the tab its window's attach shows.
// From inside a Phantom tab it is an agent's focus_terminal: a client
// whose human is typing only gets a notice, and the command says so.
func focusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "focus TAB",
		Short: "Bring a tab forward in its window (from inside a tab: not while the human types)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTab(args[0], func(ctx context.Context, tc terminalv1.TerminalServiceClient, tab string) error {
				resp, err := tc.FocusTerminal(ctx, &terminalv1.FocusTerminalRequest{TerminalId: tab})
				if err == nil && resp.GetOutcome() != terminalv1.FocusTerminalResponse_OUTCOME_MOVED {
					fmt.Println(resp.GetNote())
				}
				return err
			})
		},
	}
}
