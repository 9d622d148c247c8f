package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

func newCmd() *cobra.Command {
	var req terminalv1.CreateTerminalRequest
	var keep bool
	cmd := &cobra.Command{
		Use:   "new [flags] [-- COMMAND [ARG...]]",
		Short: "Open a tab and print its id",
		Long: `Open a tab running your shell (or an agent, or COMMAND) and print its id.
The tab starts in --dir, by default the current directory; a relative
--dir is taken from the current directory, and ~ is your home. A tab with an
agent, or with --sandbox, runs sandboxed where the kernel allows it (see
phantom status).`,
		RunE: func(_ *cobra.Command, args []string) error {
			req.Command = args
			if keep && len(args) == 0 {
				return usageError("--keep: no command to keep", "phantom new --keep -- COMMAND...")
			}
			dir, err := absDir(req.Directory)
			if err != nil {
				return err
			}
			req.Directory = dir
			return withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) error {
				r := newTargets(ctx, tc)
				if req.WindowId != "" {
					w, err := r.Window(req.WindowId)
					if err != nil {
						return err
					}
					req.WindowId = w.GetId()
				}
				if req.GroupId != "" {
					if req.GroupId, err = r.Group(req.GroupId); err != nil {
						return err
					}
				}
				resp, err := tc.CreateTerminal(ctx, &req)
				if err != nil {
					return err
				}
				fmt.Println(resp.GetTerminal().GetId())
				if keep {
					return keepLine(ctx, tc, resp.GetTerminal().GetId(), strings.Join(args, " "))
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Directory, "dir", "", "directory to start in (default: the current directory)")
	f.StringVar(&req.GroupId, "group", "", "group (id or name) to put the tab in")
	f.StringVar(&req.Name, "name", "", "the tab's name")
	f.StringVar(&req.Agent, "agent", "", "a configured agent to run (claude, codex, gemini, ...); its tab is sandboxed")
	f.BoolVar(&req.Sandbox, "sandbox", false, "run the tab sandboxed (Landlock): writes only in its directory, temporary directories and the agent's own; no signals beyond the tab; no sudo")
	f.StringVar(&req.WindowId, "window", "", "window (id or name) to open the tab in (default: the first window)")
	f.BoolVar(&keep, "keep", false, "run COMMAND again (at a shell prompt, in this directory) when phantom up restores the session; see phantom keep-command")
	return cmd
}

// absDir is dir as the tab's absolute start directory: "" is the current
// directory, "~" and "~/…" are in $HOME, a relative path is taken from the
// current directory. Whether it exists is terminald's to say.
func absDir(dir string) (string, error) {
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", usageError(fmt.Sprintf("--dir %s: cannot tell your home directory: $HOME is not set", dir), "give an absolute directory")
		}
		return filepath.Join(home, dir[1:]), nil
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("--dir %q: cannot tell the current directory: %w", dir, err)
	}
	return filepath.Join(wd, dir), nil
}

// groupLabel is how ls shows group id: its label, else the id.
func groupLabel(labels map[string]string, id string) string {
	if l, ok := labels[id]; ok {
		return l
	}
	return id
}

func lsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the tabs",
		Long: `ls lists the tabs. WINDOW is where attach's status line shows a tab,
as commands take it: main:2 is the second tab of window main.

Run inside a Phantom tab, ls shows the tabs as list_terminals shows them
to an agent there: of every tab but its own and those opened for it, no
last command, no title a program set (its name, else its foreground
program) and its shell's directory as the kernel reports it, not OSC 7.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var (
				resp   *terminalv1.ListTerminalsResponse
				places map[string]string
				groups map[string]string
			)
			err := withTerminald(func(ctx context.Context, tc terminalv1.TerminalServiceClient) (err error) {
				if asJSON {
					resp, err = tc.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
					return err
				}
				r := newTargets(ctx, tc)
				places, err = r.Places()
				resp = &terminalv1.ListTerminalsResponse{Terminals: r.tabs}
				groups = r.GroupLabels()
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(resp)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTITLE\tDIRECTORY\tPROCESS\tSTATE\tPORTS\tGROUP\tWINDOW\tWORKTREE\tAGENT\tKEEP")
			for _, t := range resp.GetTerminals() {
				id := t.GetId()
				if t.GetFocused() {
					id += "*"
				}
				// A title (a tab's name, a program's title), a directory
				// and a process name (its comm, which a program sets) are
				// agents' to choose: escaped, so that none drives the
				// human's terminal.
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, printable(t.GetTitle()), printable(t.GetDirectory()),
					printable(t.GetForegroundProcess().GetName()), tabState(t), ports(t.GetDevServerPorts()),
					dash(groupLabel(groups, t.GetGroupId())), places[t.GetId()], dash(printable(t.GetWorktree())), printable(agentState(t)), keepMark(t))
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

// agentState is the AGENT column: the agent client and what it does, and
// a warning when it runs outside any sandbox.
func agentState(t *terminalv1.Terminal) string {
	s := "-"
	if t.GetAgentState() != terminalv1.AgentState_AGENT_STATE_UNSPECIFIED {
		s = t.GetAgentClient() + ":" + strings.ToLower(strings.TrimPrefix(t.GetAgentState().String(), "AGENT_STATE_"))
	} else if t.GetUnsandboxedAgent() {
		s = t.GetForegroundProcess().GetName()
	}
	if t.GetUnsandboxedAgent() {
		s += " UNSANDBOXED"
	}
	return s
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
	var (
		n           int32
		o           readOpts
		showCursor  bool
		lastCommand bool
	)
	cmd := &cobra.Command{
		Use: "read TAB",
		Example: `  phantom read t3          # tab t3
  phantom read 2 -n 1000   # the second tab of your window, last 1000 lines
  phantom read main:build  # the tab called build in window main`,
		Short: "Print the last lines of a tab as plain text",
		Long: `read prints the last lines of a tab as plain text.

--since CURSOR prints only what the tab printed after an earlier read's
cursor (--show-cursor prints the cursor to continue from on stderr, as
"cursor: ..."). --last-command prints the last command the shell finished
(bash, zsh and fish tabs) with its own output, exactly, and exits with its
status. --wait-for waits (up to --wait seconds, 30 by default) until a line
matches a regular expression, or until the tab is idle with "idle", and
prints from the matching line on; it exits 124 if the time runs out.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("lines") {
				o.lines = &n
			}
			return withTargetsWaiting(args[0], o.waitBudget(), func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error {
				if o.waitFor == "" {
					// Without --wait-for a read answers at once, unless
					// a permission sheet holds it.
					defer waitNotice(func() string { return "reading tab " + r.Describe(tab) })()
				}
				if lastCommand {
					code, err := readLastCommand(ctx, tc, os.Stdout, os.Stderr, tab)
					if err == nil && code != 0 {
						os.Exit(code)
					}
					return err
				}
				if o.since == "" && o.waitFor == "" {
					pages, err := readTail(ctx, tc, tab, n)
					if err != nil {
						return err
					}
					if showCursor && len(pages) > 0 {
						fmt.Fprintln(os.Stderr, "cursor:", pages[len(pages)-1].GetNextCursor())
					}
					return printPages(os.Stdout, os.Stderr, pages)
				}
				next, matched, err := readSince(ctx, tc, os.Stdout, os.Stderr, tab, o)
				if err != nil {
					return err
				}
				if showCursor {
					fmt.Fprintln(os.Stderr, "cursor:", next)
				}
				if !matched {
					os.Exit(runStillRunning)
				}
				return nil
			})
		},
	}
	cmd.Flags().Int32VarP(&n, "lines", "n", 100, "how many of the last lines (at most 100000)")
	cmd.Flags().StringVar(&o.since, "since", "", "print only what came after this cursor (from --show-cursor or phantom run)")
	cmd.Flags().BoolVar(&showCursor, "show-cursor", false, "print the cursor to continue from on stderr")
	cmd.Flags().BoolVar(&lastCommand, "last-command", false, "print the last finished command's output and exit with its status")
	cmd.Flags().StringVar(&o.waitFor, "wait-for", "", `wait for a line matching this regular expression, or "idle" for the prompt`)
	cmd.Flags().Int32Var(&o.wait, "wait", 0, "with --wait-for: how many seconds to wait (default 30, at most 600)")
	return cmd
}

// cliReadBytes is the page size `phantom read` asks for: the largest
// terminald serves (1 MiB of text), as few round trips as possible.
const cliReadBytes = 1 << 20

// readTail reads the last n lines of a tab page by page, newest page
// first, following older_cursor until the lines asked for are all read.
// It returns the pages oldest first.
func readTail(ctx context.Context, tc terminalv1.TerminalServiceClient, tab string, n int32) ([]*terminalv1.ReadOutputResponse, error) {
	maxBytes := int32(cliReadBytes)
	req := &terminalv1.ReadOutputRequest{TerminalId: tab, Lines: &n, MaxBytes: &maxBytes}
	var pages []*terminalv1.ReadOutputResponse
	for {
		resp, err := tc.ReadOutput(ctx, req)
		if err != nil {
			return nil, err
		}
		pages = append(pages, resp)
		if resp.GetOlderCursor() == "" || resp.GetAlternateScreen() {
			break
		}
		req = &terminalv1.ReadOutputRequest{TerminalId: tab, Cursor: resp.GetOlderCursor(), MaxBytes: &maxBytes}
	}
	slices.Reverse(pages)
	return pages, nil
}

// printPages prints pages, oldest first, one line per line: the parts of
// a line longer than a page are joined back. What could not be read (lines
// already dropped from the scrollback) is said on errw.
func printPages(w, errw io.Writer, pages []*terminalv1.ReadOutputResponse) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var trimmed uint64
	for _, p := range pages {
		trimmed = max(trimmed, p.GetTrimmedLines())
		lines := p.GetLines()
		for i, l := range lines {
			bw.WriteString(l)
			if i < len(lines)-1 || !p.GetLastLineCut() {
				bw.WriteByte('\n')
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("print the lines: %w", err)
	}
	if trimmed > 0 {
		fmt.Fprintf(errw, "phantom read: %d of the lines asked for were already dropped from the scrollback\n", trimmed)
	}
	if len(pages) > 0 && pages[0].GetAlternateScreen() {
		fmt.Fprintln(errw, "phantom read: a full-screen program runs in this tab; these are the rows it shows")
	}
	return nil
}

func closeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "close TAB",
		Short: "Close a tab, hanging up its processes",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withTab(args[0], func(ctx context.Context, tc terminalv1.TerminalServiceClient, tab string) error {
				// From inside a tab it is close_terminal, which may wait
				// for the human.
				defer waitNotice(func() string { return "closing tab " + tab })()
				_, err := tc.CloseTerminal(ctx, &terminalv1.CloseTerminalRequest{TerminalId: tab})
				return err
			})
		},
	}
}
