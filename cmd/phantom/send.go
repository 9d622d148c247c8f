package main

// phantom send: tmux's send-keys. Each argument is a key name (Enter,
// C-c, Up, …) or, when it is not one, text typed as it is; nothing is
// put between arguments, so `phantom send t1 "make test" Enter` types the
// line and presses Enter.

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/keys"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

func sendCmd() *cobra.Command {
	var literal bool
	cmd := &cobra.Command{
		Use:   "send TAB KEYS...",
		Short: "Type text and keys into a tab (like tmux send-keys)",
		Long: `send types into TAB what the human's keyboard would: each argument is a
key name, or text typed as it is when it is not one. Nothing is added
between arguments. Key names, as tmux spells them:
  Enter Tab BTab Escape Space BSpace Up Down Left Right Home End
  PageUp (PPage) PageDown (NPage) Insert (IC) Delete (DC) F1..F12
  C-x (Ctrl), M-x (Alt), S-x (Shift), combined as C-M-x; ^x is C-x.
An argument shaped like a key name that names none (C-Foo, F13, Ctrl-C)
is refused. --literal (-l) types every argument as text. Unlike run,
send types into a busy tab too (C-c stops what runs). From inside a
Phantom tab it is the send_keys tool: free into a tab the agent there
opened, the human's permission for any other tab.`,
		Example: `  phantom send 2 "make test" Enter
  phantom send main:build C-c
  phantom send -l t3 Enter        # types the word Enter`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			// Checked here for a usage error before any tab is looked up;
			// terminald reads the same keys with the same parser.
			if _, err := keys.Parse(args[1:], literal); err != nil {
				return usageError(err.Error(), "")
			}
			return withTargets(args[0], func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error {
				defer waitNotice(func() string { return "typing into tab " + r.Describe(tab) })()
				_, err := tc.SendKeys(ctx, &terminalv1.SendKeysRequest{TerminalId: tab, Keys: args[1:], Literal: literal})
				return err
			})
		},
	}
	cmd.Flags().BoolVarP(&literal, "literal", "l", false, "type every argument as text, none as a key name")
	return cmd
}
