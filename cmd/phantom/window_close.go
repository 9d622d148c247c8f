package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// windowCloseCmd is `phantom window close WINDOW`, tmux's kill-window
// for a whole window of tabs. The last window is refused (Phantom always
// keeps one); inside a Phantom tab, as renaming, it is refused: windows
// are the human's.
func windowCloseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "close WINDOW",
		Short: "Close a window and every tab in it (not the last window)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				w, err := newTargets(ctx, tc).Window(args[0])
				if err != nil {
					return err
				}
				resp, err := tc.CloseWindow(ctx, &terminalv1.CloseWindowRequest{WindowId: w.GetId()})
				if err == nil {
					n := len(resp.GetClosedTerminalIds())
					tabs := plural(n, "its tab", fmt.Sprintf("its %d tabs", n))
					if n == 0 {
						tabs = "no tab"
					}
					fmt.Printf("closed window %s (%s) and %s\n", resp.GetWindow().GetName(), resp.GetWindow().GetId(), tabs)
				}
				return err
			})
		},
	}
}

// windowMoveCmd is `phantom window move TAB WINDOW`: the tab (named as
// every command names tabs) becomes the last tab of WINDOW, keeping its
// id, processes and scrollback.
func windowMoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "move TAB WINDOW",
		Short: "Move a tab to another window (it keeps its id, processes and scrollback)",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTargets(args[0], func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error {
				w, err := r.Window(args[1])
				if err != nil {
					return err
				}
				_, err = tc.MoveTerminal(ctx, &terminalv1.MoveTerminalRequest{TerminalId: tab, WindowId: w.GetId()})
				return err
			})
		},
	}
}
