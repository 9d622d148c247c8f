package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// groupCmd is `phantom group new|ls|rename|move`: tab groups, as agents'
// create_group, list_groups, update_group and move_to_group see them.
func groupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "Create, list, rename tab groups and move tabs into them",
		RunE:  subcommandsOnly,
	}
	cmd.AddCommand(groupNewCmd(), groupLsCmd(), groupRenameCmd(), groupMoveCmd())
	return cmd
}

func groupNewCmd() *cobra.Command {
	var req terminalv1.CreateGroupRequest
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Create a group and print its id",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			req.Name = args[0]
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				if req.WindowId != "" {
					w, err := newTargets(ctx, tc).Window(req.WindowId)
					if err != nil {
						return err
					}
					req.WindowId = w.GetId()
				}
				resp, err := tc.CreateGroup(ctx, &req)
				if err == nil {
					fmt.Println(resp.GetGroup().GetId())
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&req.Color, "color", "", "a colour name (default: one is picked)")
	cmd.Flags().StringVar(&req.WindowId, "window", "", "window (id or name) to create it in (default: the first window)")
	return cmd
}

func groupLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the groups",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				resp, err := tc.ListGroups(ctx, &terminalv1.ListGroupsRequest{})
				if err != nil {
					return err
				}
				var rows []string
				for _, g := range resp.GetGroups() {
					// An agent names its groups (create_group): escaped.
					rows = append(rows, strings.Join([]string{g.GetId(), printable(g.GetName()), dash(g.GetColor()), g.GetWindowId(),
						dash(strings.Join(g.GetTerminalIds(), ","))}, "\t"))
				}
				return printList(resp, asJSON, "ID\tNAME\tCOLOR\tWINDOW\tTABS", rows)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (the list_groups fields)")
	return cmd
}

func groupRenameCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rename GROUP NAME",
		Short: "Rename a group",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				id, err := newTargets(ctx, tc).Group(args[0])
				if err != nil {
					return err
				}
				_, err = tc.UpdateGroup(ctx, &terminalv1.UpdateGroupRequest{GroupId: id, Name: &args[1]})
				return err
			})
		},
	}
}

func groupMoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "move TAB [GROUP]",
		Short: "Move a tab into a group, or out of its group without GROUP",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTargets(args[0], func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error {
				group := ""
				if len(args) == 2 {
					var err error
					if group, err = r.Group(args[1]); err != nil {
						return err
					}
				}
				_, err := tc.MoveToGroup(ctx, &terminalv1.MoveToGroupRequest{TerminalId: tab, GroupId: group})
				return err
			})
		},
	}
}

// subcommandsOnly is the RunE of a command that only groups others
// (group, window): alone it shows its help; anything else is a usage
// error, not help with status 0.
func subcommandsOnly(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath()), "see "+c.CommandPath()+" --help")
	}
	return c.Help()
}
