package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabident"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

func sheetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sheet",
		Short: "Answer agents' permission requests (run it outside Phantom)",
		Long: `Show the permission sheet on screen and answer it with a key:
d deny, o allow once (for that connection), a allow always (written down),
s widen the scope (tab, group, all), q quit. Then the next sheet shows.

Answers from inside a Phantom tab are refused, since an agent there could
answer for itself: run this in a terminal outside Phantom.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return interactiveSheet() },
	}
	cmd.AddCommand(sheetListCmd(), sheetAnswerCmd())
	return cmd
}

func sheetListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the waiting sheets, the one on screen first",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var resp *authzv1.ListSheetsResponse
			err := withAuthz(func(ctx context.Context, ac authzv1.AuthzServiceClient) (err error) {
				resp, err = ac.ListSheets(ctx, &authzv1.ListSheetsRequest{})
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(resp)
			}
			if len(resp.GetSheets()) == 0 {
				fmt.Println("No sheet is waiting.")
				return nil
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCLIENT\tTAB\tCAPABILITY\tREACH\tTOOL\tSUBJECT\tLEFT")
			for _, s := range resp.GetSheets() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%ds\n", s.GetId(), printable(s.GetClient()), dash(s.GetTabId()),
					capabilityName(s.GetCapability()), scopeName(s.GetReach()), s.GetTool(), printable(s.GetSubject()), s.GetSecondsLeft())
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func sheetAnswerCmd() *cobra.Command {
	var deny, once, always bool
	var scope string
	cmd := &cobra.Command{
		Use:   "answer ID --deny|--once|--always [--scope tab|group|all]",
		Short: "Answer a sheet from a script",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			req := &authzv1.AnswerSheetRequest{SheetId: args[0]}
			switch {
			case deny && !once && !always:
				req.Decision = authzv1.Decision_DECISION_DENY
			case once && !deny && !always:
				req.Decision = authzv1.Decision_DECISION_ONCE
			case always && !deny && !once:
				req.Decision = authzv1.Decision_DECISION_ALWAYS
			default:
				return errors.New("give exactly one of --deny, --once, --always")
			}
			if scope != "" {
				v, ok := authzv1.Scope_value["SCOPE_"+strings.ToUpper(scope)]
				if !ok || v == 0 {
					return fmt.Errorf("--scope %q: want tab, group or all", scope)
				}
				req.Scope = authzv1.Scope(v)
			}
			return withAuthz(func(ctx context.Context, ac authzv1.AuthzServiceClient) error {
				resp, err := ac.AnswerSheet(ctx, req)
				if err == nil {
					fmt.Println(answered(req.GetSheetId(), resp.GetGrant()))
				}
				return err
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&deny, "deny", false, "refuse; the caller's tab is turned away for 60 s")
	f.BoolVar(&once, "once", false, "allow for the life of the agent's connection")
	f.BoolVar(&always, "always", false, "allow and write the grant down")
	f.StringVar(&scope, "scope", "", "the scope to grant: tab, group or all (default the request's reach)")
	return cmd
}

// answered says what an answer did.
func answered(id string, g *authzv1.Grant) string {
	if g == nil {
		return "denied " + id
	}
	kind := "once"
	if g.GetAlways() {
		kind = "always"
	}
	return fmt.Sprintf("allowed %s %s: grant %s (%s, scope %s)", id, kind, g.GetId(), capabilityName(g.GetCapability()), scopeName(g.GetScope()))
}

// interactiveSheet shows the sheet on screen and answers it with keys,
// until q, Ctrl-C or end of input.
func interactiveSheet() error {
	l, err := paths.Default()
	if err != nil {
		return err
	}
	if st, in, _ := tabident.Find(procfs.Default, l.TabStateDir(), os.Getpid()); in {
		return fmt.Errorf("phantom sheet refuses to run inside a Phantom tab (%s), where an agent could answer for itself; run it in a terminal outside Phantom", st.TabID)
	}
	cc, err := dialDaemon(l, "authz")
	if err != nil {
		return err
	}
	defer cc.Close()
	ac := authzv1.NewAuthzServiceClient(cc)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	stream, err := ac.WatchSheets(ctx, &authzv1.WatchSheetsRequest{})
	if err != nil {
		return rpcError(err)
	}
	events := make(chan *authzv1.WatchSheetsResponse)
	streamErr := make(chan error, 1)
	go func() {
		for {
			ev, err := stream.Recv()
			if err != nil {
				streamErr <- err
				return
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	if term.IsTerminal(int(os.Stdin.Fd())) {
		old, err := term.MakeRaw(int(os.Stdin.Fd()))
		if err != nil {
			return err
		}
		defer term.Restore(int(os.Stdin.Fd()), old)
	}
	keys := make(chan byte)
	go func() { // ends with the process: a blocked read of stdin cannot be cancelled
		b := make([]byte, 1)
		for {
			if n, err := os.Stdin.Read(b); err != nil || n == 0 {
				close(keys)
				return
			}
			keys <- b[0]
		}
	}()

	v := sheetView{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		v.draw()
		select {
		case ev := <-events:
			v.show(ev)
		case err := <-streamErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("authz stream ended: %w", rpcError(err))
		case <-tick.C:
		case <-ctx.Done():
			return nil
		case k, ok := <-keys:
			if !ok || k == 'q' || k == 3 || k == 4 {
				fmt.Print("\r\n")
				return nil
			}
			v.key(ctx, ac, k)
		}
	}
}

// sheetView is the interactive screen's state.
type sheetView struct {
	sheet    *authzv1.Sheet
	waiting  int32
	received time.Time
	scope    authzv1.Scope // the scope an allow would grant
	status   string        // the last answer's outcome
}

func (v *sheetView) show(ev *authzv1.WatchSheetsResponse) {
	if ev.GetSheet().GetId() != v.sheet.GetId() {
		v.scope = ev.GetSheet().GetReach()
	}
	v.sheet, v.waiting, v.received = ev.GetSheet(), ev.GetWaiting(), time.Now()
}

// key answers the sheet on screen, or widens the scope.
func (v *sheetView) key(ctx context.Context, ac authzv1.AuthzServiceClient, k byte) {
	if v.sheet == nil {
		return
	}
	var d authzv1.Decision
	switch k {
	case 'd':
		d = authzv1.Decision_DECISION_DENY
	case 'o':
		d = authzv1.Decision_DECISION_ONCE
	case 'a':
		d = authzv1.Decision_DECISION_ALWAYS
	case 's':
		v.scope++
		if v.scope > authzv1.Scope_SCOPE_ALL {
			v.scope = v.sheet.GetReach()
		}
		return
	default:
		return
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := ac.AnswerSheet(ctx, &authzv1.AnswerSheetRequest{SheetId: v.sheet.GetId(), Decision: d, Scope: v.scope})
	if err != nil {
		v.status = "error: " + rpcError(err).Error()
		return
	}
	v.status = answered(v.sheet.GetId(), resp.GetGrant())
}

// draw paints the screen; lines end in \r\n for a raw terminal.
func (v *sheetView) draw() {
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\r\n", args...) }
	line("Phantom permission sheets   (q quits)")
	line("")
	s := v.sheet
	if s == nil {
		line("No sheet is waiting. Agents that ask for a permission will show up here.")
	} else {
		left := int32(s.GetSecondsLeft()) - int32(time.Since(v.received)/time.Second)
		tab := "outside any Phantom tab"
		if s.GetTabId() != "" {
			tab = "tab " + s.GetTabId() + " (" + printable(s.GetTabTitle()) + ")"
		}
		line("Sheet %s  — %d more waiting, times out in %ds", s.GetId(), v.waiting-1, max(left, 0))
		line("")
		line("  who      %s, %s, pid %d", printable(s.GetClient()), tab, s.GetPid())
		line("  wants    %s (%s)", capabilityName(s.GetCapability()), s.GetTool())
		line("  reach    %s", scopeName(s.GetReach()))
		line("  subject  %s", printable(s.GetSubject()))
		line("  project  %s", dash(printable(s.GetProject())))
		line("")
		line("  d deny    o allow once    a allow always    s scope: %s", scopeName(v.scope))
	}
	if v.status != "" {
		line("")
		line("%s", printable(v.status))
	}
	fmt.Print(b.String())
}
