package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/clipperhouse/displaywidth"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/toolreg"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

func sheetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sheet",
		Short: "Answer agents' permission requests (run it outside Phantom)",
		Long: `Show the permission sheet on screen and answer it with a key:
d deny, o allow once (exactly this call, for that connection), a allow
always (written down, for the client's program, in the scope), s widen the
scope of an always (tab, group, all), q quit. Then the next sheet shows.

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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%ds\n", s.GetId(), attach.Visible(s.GetClient()), dash(attach.Visible(s.GetTabId())),
					toolreg.CapabilityName(s.GetCapability()), scopeName(s.GetReach()), attach.Visible(s.GetTool()), attach.Visible(s.GetSubject()), s.GetSecondsLeft())
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
	f.BoolVar(&once, "once", false, "allow exactly the call on the sheet (same tool, target and command), for the agent's connection")
	f.BoolVar(&always, "always", false, "allow and write the grant down")
	f.StringVar(&scope, "scope", "", "with --always, the scope to grant: tab, group or all (default the request's reach)")
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
	return fmt.Sprintf("allowed %s %s: grant %s (%s, scope %s)", id, kind, g.GetId(), toolreg.CapabilityName(g.GetCapability()), scopeName(g.GetScope()))
}

// interactiveSheet shows the sheet on screen and answers it with keys,
// until q, Ctrl-C or end of input.
func interactiveSheet() error {
	l, err := paths.Default()
	if err != nil {
		return err
	}
	// authz refuses it too; saying so here spares drawing a screen first.
	if err := refuseInside(l, "answer permission sheets"); err != nil {
		return err
	}
	cc, err := dialDaemon(l, "authz")
	if err != nil {
		return err
	}
	defer cc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if term.IsTerminal(int(os.Stdin.Fd())) {
		old, err := term.MakeRaw(int(os.Stdin.Fd()))
		if err != nil {
			return err
		}
		defer term.Restore(int(os.Stdin.Fd()), old)
	}
	width := 0
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
		width = w
	}
	return sheetLoop(ctx, authzv1.NewAuthzServiceClient(cc), readKeys(os.Stdin), os.Stdout, width)
}

// readKeys delivers the bytes read from r, one at a time, and closes the
// channel at the end of input. The goroutine ends with the process: a
// blocked read of stdin cannot be cancelled.
func readKeys(r io.Reader) <-chan byte {
	keys := make(chan byte)
	go func() {
		defer close(keys)
		b := make([]byte, 1)
		for {
			if n, err := r.Read(b); err != nil || n == 0 {
				return
			}
			keys <- b[0]
		}
	}()
	return keys
}

// sheetLoop runs the interactive screen on out (width columns, 0 if
// unknown): it follows the sheet on screen and answers it with keys,
// until q, Ctrl-C, Ctrl-D, the end of keys or ctx.
func sheetLoop(ctx context.Context, ac authzv1.AuthzServiceClient, keys <-chan byte, out io.Writer, width int) error {
	ctx, cancel := context.WithCancel(ctx)
	var pump sync.WaitGroup
	defer func() {
		cancel() // ends the stream, and the pump with it
		pump.Wait()
	}()
	stream, err := ac.WatchSheets(ctx, &authzv1.WatchSheetsRequest{})
	if err != nil {
		return rpcError(err)
	}
	events, streamErr := make(chan *authzv1.WatchSheetsResponse), make(chan error, 1)
	pump.Go(func() {
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
	})

	v := sheetView{out: out, width: width}
	for {
		v.draw(time.Now())
		var arm <-chan time.Time
		if d := v.untilArmed(time.Now()); d > 0 {
			arm = time.After(d)
		}
		select {
		case ev := <-events:
			v.show(ev, time.Now())
		case err := <-streamErr:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("authz stream ended: %w", rpcError(err))
		case <-arm:
		case <-ctx.Done():
			return nil
		case k, ok := <-keys:
			if !ok || k == 'q' || k == 3 || k == 4 {
				fmt.Fprint(out, "\r\n")
				return nil
			}
			v.key(ctx, ac, k, time.Now())
		}
	}
}

// sheetArmDelay is how long a sheet shows before its answer keys work, so
// that a key meant for a sheet that was just withdrawn cannot answer the
// one that replaced it.
const sheetArmDelay = time.Second

// sheetView is the interactive screen's state.
type sheetView struct {
	out      io.Writer
	width    int // columns of out; 0 if unknown
	sheet    *authzv1.Sheet
	waiting  int32
	deadline time.Time     // when the sheet times out
	shownAt  time.Time     // when the sheet's content was first drawn; zero until then
	scope    authzv1.Scope // the scope an allow would grant
	status   string        // the last answer's outcome
	drawn    string        // what was drawn last
}

// show takes the sheet now on screen from authz. New content (another
// sheet, or the same one changed) is drawn anew and its keys arm again.
func (v *sheetView) show(ev *authzv1.WatchSheetsResponse, now time.Time) {
	next := ev.GetSheet()
	if !sameSheetContent(v.sheet, next) {
		v.shownAt = time.Time{}
		v.deadline = now.Add(time.Duration(next.GetSecondsLeft()) * time.Second)
		if next.GetId() != v.sheet.GetId() {
			v.scope = next.GetReach()
		}
	}
	v.sheet, v.waiting = next, ev.GetWaiting()
}

// sameSheetContent reports whether a and b ask the same thing in the same
// words; the countdown and the count of sheets behind do not count.
func sameSheetContent(a, b *authzv1.Sheet) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := proto.CloneOf(a), proto.CloneOf(b)
	x.SecondsLeft, y.SecondsLeft, x.WaitingBehind, y.WaitingBehind = 0, 0, 0, 0
	return proto.Equal(x, y)
}

// untilArmed is how long until the keys arm; 0 when they are armed or no
// sheet shows.
func (v *sheetView) untilArmed(now time.Time) time.Duration {
	if v.sheet == nil || v.shownAt.IsZero() {
		return 0
	}
	return max(v.shownAt.Add(sheetArmDelay).Sub(now), 0)
}

// armed reports whether the keys answer the sheet on screen: it has been
// drawn for sheetArmDelay.
func (v *sheetView) armed(now time.Time) bool {
	return v.sheet != nil && !v.shownAt.IsZero() && v.untilArmed(now) == 0
}

// key answers the sheet on screen, or widens the scope; before the keys
// arm, it does nothing.
func (v *sheetView) key(ctx context.Context, ac authzv1.AuthzServiceClient, k byte, now time.Time) {
	if !strings.ContainsRune("doas", rune(k)) || v.sheet == nil {
		return
	}
	if !v.armed(now) {
		v.status = "key ignored: the keys arm a second after a sheet shows"
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
	}
	scope := v.scope
	if d == authzv1.Decision_DECISION_ONCE {
		scope = authzv1.Scope_SCOPE_UNSPECIFIED // once is the call on the sheet: no scope
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := ac.AnswerSheet(ctx, &authzv1.AnswerSheetRequest{SheetId: v.sheet.GetId(), Decision: d, Scope: scope})
	if err != nil {
		v.status = "error: " + rpcError(err).Error()
		return
	}
	v.status = answered(v.sheet.GetId(), resp.GetGrant())
}

// draw paints the screen when what it shows changed; lines end in \r\n
// for a raw terminal. Every text an agent chose is shown whole, wrapped,
// with whatever could act on the terminal made visible.
func (v *sheetView) draw(now time.Time) {
	if v.sheet != nil && v.shownAt.IsZero() {
		v.shownAt = now
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\r\n", args...) }
	line("Phantom permission sheets   (q quits)")
	line("")
	if s := v.sheet; s == nil {
		line("No sheet is waiting. Agents that ask for a permission will show up here.")
	} else {
		tab := "outside Phantom"
		if s.GetInsideWithoutTab() {
			tab = "inside Phantom, but left its tab"
		}
		if s.GetTabId() != "" {
			tab = "tab " + attach.Visible(s.GetTabId()) + " (" + attach.Visible(s.GetTabTitle()) + ")"
		}
		line("Sheet %s  — %d more waiting, times out at %s", s.GetId(), max(v.waiting-1, 0), v.deadline.Format("15:04:05"))
		line("")
		field := func(name, value string) {
			for _, l := range wrapField(value, v.width-11) {
				line("  %-8s %s", name, l)
				name = ""
			}
		}
		field("who", fmt.Sprintf("%s, %s, pid %d", attach.Visible(s.GetClient()), tab, s.GetPid()))
		field("wants", fmt.Sprintf("%s (%s)", toolreg.CapabilityName(s.GetCapability()), attach.Visible(s.GetTool())))
		field("reach", scopeName(s.GetReach()))
		field("subject", attach.Visible(s.GetSubject()))
		field("program", dash(attach.Visible(s.GetProgram())))
		field("project", dash(attach.Visible(s.GetProject())))
		line("")
		if v.armed(now) {
			line("  d deny  o once: this call only  a always, scope %s  s wider", scopeName(v.scope))
		} else {
			line("  keys arm in a second — read the request")
		}
	}
	if v.status != "" {
		line("")
		line("%s", attach.Visible(v.status))
	}
	if out := b.String(); out != v.drawn {
		v.drawn = out
		fmt.Fprint(v.out, "\x1b[H\x1b[2J"+out)
	}
}

// wrapField cuts s into lines of at most width cells (no wrapping when
// width is too small to matter); nothing is dropped.
func wrapField(s string, width int) []string {
	if width < 20 {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	used := 0
	for _, r := range s {
		w := max(displaywidth.Rune(r), 0)
		if used+w > width {
			lines = append(lines, cur.String())
			cur.Reset()
			used = 0
		}
		cur.WriteRune(r)
		used += w
	}
	return append(lines, cur.String())
}
