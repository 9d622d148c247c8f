package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// configCmd is `phantom config`: check, locate and show config.json.
func configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check, locate and show your settings (config.json)",
		Long: `Phantom's settings live in config.json in your config directory
($XDG_CONFIG_HOME/phantom, usually ~/.config/phantom). Every setting has a
default, so the file is optional. A running Phantom applies a change as
soon as the file is saved (or on phantom reload); see phantom reload for
what needs a restart.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check [FILE]",
		Short: "Check config.json (or FILE) and say what is wrong in it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path, b, err := readSettings(args)
			if err != nil {
				return err
			}
			if _, err := config.Parse(path, b); err != nil {
				return err
			}
			if b == nil {
				fmt.Printf("%s: ok (no file: every setting has its default)\n", path)
				return nil
			}
			fmt.Printf("%s: ok\n", path)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "path",
		Short: "Print where config.json is (whether or not it exists)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			fmt.Println(config.Path(l.Config))
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "show [FILE]",
		Short: "Print the settings in effect: config.json (or FILE) with every default filled in",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path, b, err := readSettings(args)
			if err != nil {
				return err
			}
			c, err := config.Parse(path, b)
			if err != nil {
				return err
			}
			out, err := json.MarshalIndent(c, "", "  ")
			if err != nil {
				return err
			}
			fmt.Println(string(out))
			return nil
		},
	})
	return cmd
}

// readSettings reads FILE, or config.json when args is empty: a missing
// config.json is no settings (nil), a missing FILE an error.
func readSettings(args []string) (path string, b []byte, err error) {
	if len(args) == 1 {
		b, err := os.ReadFile(args[0])
		if err != nil {
			return "", nil, fmt.Errorf("read %s: %w", args[0], errors.Unwrap(err))
		}
		return args[0], b, nil
	}
	l, err := paths.Default()
	if err != nil {
		return "", nil, err
	}
	path = config.Path(l.Config)
	b, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return path, nil, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", path, errors.Unwrap(err))
	}
	return path, b, nil
}

// checkSettings is up's check of config.json before any daemon starts:
// an invalid file is reported with its cause, not as daemons that failed
// to start.
func checkSettings(l paths.Layout) (config.Config, error) {
	c, err := config.Load(l.Config)
	if err != nil {
		return c, &cliError{code: exitFailure, what: "up", why: err.Error(),
			todo: "fix the file (phantom config check), then run phantom up again"}
	}
	return c, nil
}

// prefixWords names the prefix config.json sets as a human reads it:
// Ctrl-\ by default, "Ctrl-a" for "C-a", "`" for "`".
func prefixWords(c config.Config) string {
	p, err := config.ParsePrefix(c.Prefix)
	if err != nil { // Load checked it
		p = config.DefaultPrefix
	}
	name := config.KeyName(string(rune(p)))
	if rest, ok := strings.CutPrefix(name, "C-"); ok {
		return "Ctrl-" + rest
	}
	return name
}

// upMessage is what phantom up prints once Phantom serves: how to see it
// (with the prefix config.json sets), list it, and connect agents.
func upMessage(c config.Config) string {
	return fmt.Sprintf("Phantom is up. See it: phantom attach (%s d detaches); list tabs: phantom ls; "+
		"connect your agents: phantom mcp install", prefixWords(c))
}

// reloadCmd is `phantom reload`: apply config.json now.
func reloadCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "reload",
		Short: "Apply config.json now, and say what needs a restart",
		Long: `Re-read config.json and apply it at once (a running Phantom also does
this by itself whenever the file is saved). The prefix, keys, status line
and agents apply at once, in every attached client; the shell, scrollback
and sandbox paths apply to tabs opened from then on. worktree_root and
language_servers are read by gitd and lspd at their start: they take
effect after phantom down && phantom up, which hangs up every tab.

An invalid file changes nothing: the settings in effect stay, and the
cause is printed here and shown on attached clients' status lines.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var resp *terminalv1.ReloadConfigResponse
			err := withDaemon("terminald", terminalv1.NewConfigServiceClient,
				func(ctx context.Context, c terminalv1.ConfigServiceClient) (err error) {
					resp, err = c.ReloadConfig(ctx, &terminalv1.ReloadConfigRequest{})
					return err
				})
			if err != nil {
				return err
			}
			printReload(resp)
			if resp.GetError() != "" {
				return &cliError{code: exitFailure, what: "reload", why: resp.GetError(),
					todo: "fix the file (phantom config check); the settings in effect stay until then"}
			}
			return nil
		},
	}
}

// printReload says what a reload applied and what waits for a restart.
func printReload(resp *terminalv1.ReloadConfigResponse) {
	switch {
	case resp.GetError() != "":
	case len(resp.GetApplied()) > 0:
		fmt.Printf("%s: applied %s\n", resp.GetPath(), strings.Join(resp.GetApplied(), ", "))
	default:
		fmt.Printf("%s: nothing changed\n", resp.GetPath())
	}
	if r := resp.GetNeedsRestart(); len(r) > 0 {
		fmt.Printf("needs a restart: %s (changed since Phantom started; run phantom down && phantom up, which hangs up every tab)\n",
			strings.Join(r, ", "))
	}
}
