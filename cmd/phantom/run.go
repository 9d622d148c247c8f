package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald"
)

// runStillRunning is `phantom run --wait`'s exit status when the command
// outlived the wait, as timeout(1)'s.
const runStillRunning = 124

func runCmd() *cobra.Command {
	var wait int32
	var keep bool
	cmd := &cobra.Command{
		Use:   "run TAB [--wait[=SECONDS]] -- COMMAND...",
		Short: "Type a command into an idle tab; with --wait, print its output and exit with its status",
		Long: `run types COMMAND (its words joined with spaces, as one command line) into
the idle tab TAB and presses Enter, as an agent's run_command does.

With --wait (600 seconds unless given) it waits for the command to end,
prints exactly the lines the command printed (not the prompt, not what the
tab showed before) and exits with the command's exit status. If the command
is still running when the time is up, it prints what came so far and exits
124; read the rest with "phantom read TAB --since CURSOR" (the cursor is
printed on stderr). In a tab without shell integration (sh) the end is the
shell taking the terminal back, and the exit status is unknown: run exits 0
and says so.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			if c.ArgsLenAtDash() != 1 {
				return usageError("the command must come after --", "phantom run TAB [--wait[=SECONDS]] -- COMMAND...")
			}
			line := strings.Join(args[1:], " ")
			return withTargetsWaiting(args[0], time.Duration(wait)*time.Second, func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error {
				if keep {
					// Marked first: refused inside Phantom, before
					// anything runs.
					if err := keepLine(ctx, tc, tab, line); err != nil {
						return err
					}
				}
				if wait == 0 {
					// Without --wait, run answers at once, unless a
					// permission sheet holds it.
					defer waitNotice(func() string { return fmt.Sprintf("running %q in tab %s", line, r.Describe(tab)) })()
				}
				code, err := runInTab(ctx, tc, os.Stdout, os.Stderr, tab, line, wait)
				if err != nil {
					return err
				}
				if code != 0 {
					os.Exit(code)
				}
				return nil
			})
		},
	}
	cmd.Flags().Int32Var(&wait, "wait", 0, "wait up to SECONDS (at most 600) for the command to end; print its output and exit with its status")
	cmd.Flags().Lookup("wait").NoOptDefVal = "600"
	cmd.Flags().BoolVar(&keep, "keep", false, "also run COMMAND again in TAB when phantom up restores the session (phantom keep-command)")
	return cmd
}

// runInTab runs line in tab and, with wait, prints its output to w exactly
// and returns the status to exit with.
func runInTab(ctx context.Context, tc terminalv1.TerminalServiceClient, w, errw io.Writer, tab, line string, wait int32) (int, error) {
	maxBytes := int32(cliReadBytes)
	resp, err := tc.RunCommand(ctx, &terminalv1.RunCommandRequest{TerminalId: tab, Command: line, WaitSeconds: wait, MaxBytes: optBytes(wait, maxBytes)})
	if err != nil {
		return 0, err
	}
	if wait == 0 {
		return 0, nil
	}
	res := resp.GetResult()
	// The result's output is compacted for agents: read the exact lines.
	if err := copyLines(ctx, tc, w, tab, res.GetOutputCursor(), res.GetTotalLines()); err != nil {
		return 0, err
	}
	switch {
	case resp.GetStillRunning():
		fmt.Fprintf(errw, "phantom run: %q is still running in tab %s after %d s; continue with: phantom read %s --since %s\n",
			line, tab, wait, tab, resp.GetNextCursor())
		return runStillRunning, nil
	case res.ExitCode == nil:
		fmt.Fprintf(errw, "phantom run: tab %s has no shell integration, so the exit status of %q is unknown\n", tab, line)
		return 0, nil
	}
	return int(res.GetExitCode()), nil
}

// optBytes is the max_bytes to send: only with a wait.
func optBytes(wait, n int32) *int32 {
	if wait == 0 {
		return nil
	}
	return &n
}

// copyLines prints the total lines from cursor on, exactly, one per line
// (a line longer than a page comes in parts and is joined back).
func copyLines(ctx context.Context, tc terminalv1.TerminalServiceClient, w io.Writer, tab, cursor string, total uint64) error {
	maxBytes := int32(cliReadBytes)
	var pages []*terminalv1.ReadOutputResponse
	for left := total; left > 0 && cursor != ""; {
		n := int32(min(left, 100000))
		resp, err := tc.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: tab, Cursor: cursor, Lines: &n, MaxBytes: &maxBytes})
		if err != nil {
			return err
		}
		if len(resp.GetLines()) == 0 {
			break
		}
		pages = append(pages, resp)
		whole := uint64(len(resp.GetLines()))
		if resp.GetLastLineCut() {
			whole--
		}
		left -= min(left, whole+resp.GetTrimmedLines())
		cursor = resp.GetNextCursor()
	}
	return printPages(w, io.Discard, pages)
}

// readOpts are `phantom read`'s incremental options.
type readOpts struct {
	since   string // a cursor to read after
	waitFor string // a pattern, or "idle"
	wait    int32  // seconds for waitFor; 0 for the default
	lines   *int32 // without since: where the search starts (the last lines)
}

// waitBudget is how long the read may wait on its own: --wait (terminald's
// default when not given) with --wait-for, else nothing.
func (o readOpts) waitBudget() time.Duration {
	switch {
	case o.waitFor == "":
		return 0
	case o.wait > 0:
		return time.Duration(o.wait) * time.Second
	}
	return terminald.DefaultWaitSeconds * time.Second
}

// readSince prints what tab printed after o.since (waiting first for
// o.waitFor when set), following next_cursor while more is ready. It
// returns the cursor to continue from and whether the wait matched.
func readSince(ctx context.Context, tc terminalv1.TerminalServiceClient, w, errw io.Writer, tab string, o readOpts) (string, bool, error) {
	maxBytes := int32(cliReadBytes)
	req := &terminalv1.ReadOutputRequest{TerminalId: tab, Cursor: o.since, MaxBytes: &maxBytes, WaitFor: o.waitFor}
	if o.since == "" {
		req.Lines = o.lines
	}
	if o.wait > 0 {
		req.WaitSeconds = &o.wait
	}
	matched := true
	var pages []*terminalv1.ReadOutputResponse
	for {
		resp, err := tc.ReadOutput(ctx, req)
		if err != nil {
			return "", false, err
		}
		if req.WaitFor != "" {
			matched = resp.GetWaitMatched()
			if !matched {
				fmt.Fprintf(errw, "phantom read: nothing matched %q in time\n", o.waitFor)
			}
		}
		pages = append(pages, resp)
		if !resp.GetMore() {
			break
		}
		req = &terminalv1.ReadOutputRequest{TerminalId: tab, Cursor: resp.GetNextCursor(), MaxBytes: &maxBytes}
	}
	if err := printPages(w, errw, pages); err != nil {
		return "", false, err
	}
	return pages[len(pages)-1].GetNextCursor(), matched, nil
}

// readLastCommand prints the last finished command's output exactly and
// returns its exit status.
func readLastCommand(ctx context.Context, tc terminalv1.TerminalServiceClient, w, errw io.Writer, tab string) (int, error) {
	resp, err := tc.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: tab, LastCommand: true})
	if err != nil {
		return 0, err
	}
	res := resp.GetLastCommand()
	if res.GetFinishedAt() == "" || res.GetStartedAt() == "" {
		fmt.Fprintf(errw, "phantom read: %q finished with exit status %d; when it ran is not known (terminald restarted before it kept the times)\n",
			res.GetCommand(), res.GetExitCode())
	} else {
		fmt.Fprintf(errw, "phantom read: %q finished at %s, exit status %d, in %d ms\n",
			res.GetCommand(), res.GetFinishedAt(), res.GetExitCode(), res.GetDurationMs())
	}
	if err := copyLines(ctx, tc, w, tab, res.GetOutputCursor(), res.GetTotalLines()); err != nil {
		return 0, err
	}
	return int(res.GetExitCode()), nil
}
