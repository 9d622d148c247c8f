package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/paths"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

func attachCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "attach [TAB|WINDOW]",
		Short: "Show a window in this terminal; type into its tabs",
		Long: `Show a window's focused tab (or the named tab) in this terminal, with a
status line of the window's entries: each entry (tmux's window) is a
layout of panes, each pane a tab (tmux's pane). Keys go to the tab,
except after the prefix (Ctrl-\ unless config.json sets "prefix"):
  n / p   next / previous entry      1-9  entry by number (' NUM: past 9)
  c       new tab, a new entry       x    close the pane's tab (asks y/n)
  ,       rename the tab             [    copy mode (scroll, / search, v, y)
  % / "   split this entry           z    zoom the pane
  !       break the pane out into an entry of its own
  s       the waiting permission sheet
  d       detach (everything keeps running)
  ?       every key: splits, copy mode, the mouse
The prefix pressed twice sends it to the tab. Entries belong to the
window: every client of it shows them, and they stay after detaching. Copies go
to the terminal's clipboard (OSC 52) when the terminal announces it takes
them; PHANTOM_CLIPBOARD=on or off forces it either way. PHANTOM_MOUSE=off
leaves the mouse to the terminal.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			target := ""
			if len(args) == 1 {
				var err error
				if target, err = attachTarget(args[0]); err != nil {
					return err
				}
			}
			code, err := runAttach(target)
			if err != nil {
				return err
			}
			if code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
}

// runAttach attaches this terminal to target until the session ends, and
// returns the exit status.
func runAttach(target string) (int, error) {
	if id := os.Getenv("PHANTOM_TAB_ID"); id != "" {
		return 1, fmt.Errorf("refusing to attach from inside Phantom tab %s: it would show itself; detach first or use another terminal", id)
	}
	in, out := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	if !term.IsTerminal(in) || !term.IsTerminal(out) {
		return 1, errors.New("attach needs a terminal on stdin and stdout")
	}
	cols, rows, err := term.GetSize(out)
	if err != nil {
		return 1, fmt.Errorf("read the terminal size: %w", err)
	}
	// target0 is what a reconnection asks for: the window the session
	// last said it shows (prefix ( and ) switch it), else the target.
	target0 := target
	stream, first, closeStream, err := openAttach(target0, cols, rows)
	if err != nil {
		return 1, err
	}
	old, err := term.MakeRaw(in)
	if err != nil {
		closeStream()
		return 1, fmt.Errorf("put the terminal in raw mode: %w", err)
	}
	stopSignals := restoreOnSignals(in, old) // attach_terminal.go
	os.Stdout.WriteString(attach.EnterClient)
	probe := newClipboardProbe(os.Stdout) // attach_probe.go
	keys := readTerminal(probe)
	var exit *terminalv1.AttachExit
	var typed []byte // keys typed while reconnecting
	for {
		exit, err = attachLoop(stream, first, typed, keys, out, probe, &target0)
		closeStream()
		// terminald went away: killed (the stream broke) or upgraded
		// (it said it is shutting down). With a holder its tabs live on
		// and a new terminald takes them back: reattach to the same
		// target, as the human left it.
		wait := reconnectAfterError
		switch {
		case err != nil && lostTerminald(err):
		case err == nil && !exit.GetOk() && exit.GetMessage() == "terminald is shutting down":
			wait = reconnectAfterShutdown
		default:
			wait = 0
		}
		if wait == 0 {
			break
		}
		why := "terminald went away"
		if err != nil {
			why = err.Error()
		}
		cols, rows, _ := term.GetSize(out)
		var rerr error
		stream, first, closeStream, typed, rerr = reattach(target0, cols, rows, wait, why, keys)
		if errors.Is(rerr, errNoHolder) {
			break // no tab outlives this terminald: end as before
		}
		if err = rerr; err != nil {
			break
		}
	}
	stopSignals()
	os.Stdout.WriteString(attach.RestoreClient)
	term.Restore(in, old)
	if err != nil {
		return 1, err
	}
	fmt.Printf("[%s]\n", exit.GetMessage())
	if !exit.GetOk() {
		return 1, nil
	}
	return 0, nil
}

// How long attach keeps trying to reattach: after the stream broke (a
// killed terminald, which someone has to start again with `phantom up`),
// and after terminald said it is shutting down (an upgrade brings it back
// within a second or two; after `phantom down` nothing does).
const (
	reconnectAfterError    = 60 * time.Second
	reconnectAfterShutdown = 5 * time.Second
)

// openAttach dials terminald and starts a session on target: the hello,
// and the first answer, which says whether terminald took it.
func openAttach(target string, cols, rows int) (terminalv1.TerminalService_AttachClient, *terminalv1.AttachResponse, func(), error) {
	tc, done, err := dialTerminald()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	closeAll := func() { cancel(); done() }
	stream, err := tc.Attach(ctx)
	if err != nil {
		closeAll()
		return nil, nil, nil, rpcError(err)
	}
	wd, _ := os.Getwd()
	if err := stream.Send(&terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Hello{Hello: &terminalv1.AttachHello{
		Target: target, Size: &terminalv1.AttachSize{Cols: int32(cols), Rows: int32(rows)},
		Term: os.Getenv("TERM"), Colorterm: os.Getenv("COLORTERM"), Directory: wd,
	}}}); err != nil && !errors.Is(err, io.EOF) {
		closeAll()
		return nil, nil, nil, rpcError(err)
	}
	// The first answer says whether the server took the hello; only then
	// take over the terminal, so that a refusal prints plainly. (A Send
	// that found the stream ended, io.EOF, means the server refused before
	// reading the hello: Recv returns its reason.)
	first, err := stream.Recv()
	if err != nil {
		closeAll()
		return nil, nil, nil, rpcError(err)
	}
	return stream, first, closeAll, nil
}

// maxTyped bounds the keys kept while reconnecting.
const maxTyped = 4 << 10

// reattach tries to open a new session until one opens or wait has
// passed, saying on the bottom line what it waits for. Ctrl-C gives up;
// other keys are kept (up to maxTyped) and returned, for the new session:
// what the human typed was meant for the tab.
func reattach(target string, cols, rows int, wait time.Duration, why string, keys <-chan []byte) (_ terminalv1.TerminalService_AttachClient, _ *terminalv1.AttachResponse, _ func(), typed []byte, _ error) {
	fmt.Printf("\x1b[%d;1H\x1b[2K\x1b[7m[phantom: %s; reconnecting (Ctrl-C gives up)…]\x1b[m", max(rows, 1), oneLine(why, max(cols-45, 20)))
	deadline := time.Now().Add(wait)
	backoff := 50 * time.Millisecond
	var last error
	l, lerr := paths.Default()
	for time.Now().Before(deadline) {
		// Without a holder nothing brings these tabs back (phantom down,
		// or a terminald that ran without one): do not wait for it.
		if lerr != nil || len(instanceProcesses(l, lineage.HolderByCommandLine(l.DaemonAddr("terminald")))) == 0 {
			return nil, nil, nil, nil, errNoHolder
		}
		stream, first, closeStream, err := openAttach(target, cols, rows)
		if err == nil {
			return stream, first, closeStream, typed, nil
		}
		last = err
		timer := time.NewTimer(backoff)
	wait:
		for {
			select {
			case b, ok := <-keys:
				if !ok || bytes.IndexByte(b, 3) >= 0 {
					timer.Stop()
					return nil, nil, nil, nil, fmt.Errorf("gave up reconnecting to terminald: %w", err)
				}
				typed = append(typed, b[:min(len(b), maxTyped-len(typed))]...)
			case <-timer.C:
				break wait
			}
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
	return nil, nil, nil, nil, fmt.Errorf("lost terminald and could not reconnect within %s: %w", wait, last)
}

// lostTerminald reports whether a session error means terminald went away
// (the connection broke), not that it refused something.
func lostTerminald(err error) bool {
	if errors.Is(err, errSessionEnded) {
		return true
	}
	code := status.Code(errors.Unwrap(err))
	return code == codes.Unavailable || code == codes.Canceled
}

// errNoHolder is a lost terminald whose tabs no holder keeps.
var errNoHolder = errors.New("no holder keeps the tabs")

// errSessionEnded is a stream that ended without an exit message.
var errSessionEnded = errors.New("terminald ended the session without saying why")

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n-1] + "…"
	}
	return s
}

// readTerminal reads the terminal for as long as attach runs, across
// sessions: a reader per session would leave one blocked in Read. The
// terminal's replies to the clipboard probe are taken out.
func readTerminal(probe *clipboardProbe) <-chan []byte {
	keys := make(chan []byte, 16)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := os.Stdin.Read(buf)
			if b := probe.keys(buf[:n]); len(b) > 0 {
				keys <- append([]byte(nil), b...)
			}
			if err != nil {
				close(keys)
				return
			}
		}
	}()
	return keys
}

// attachLoop copies keys and size changes to terminald and frames to the
// terminal until the session's exit message.
func attachLoop(stream terminalv1.TerminalService_AttachClient, first *terminalv1.AttachResponse, typed []byte, keys <-chan []byte, out int, probe *clipboardProbe, window *string) (*terminalv1.AttachExit, error) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	// One goroutine sends (gRPC allows one sender at a time): keys typed
	// while reconnecting, then keys and resizes.
	go func() {
		if len(typed) > 0 && stream.Send(&terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Input{Input: typed}}) != nil {
			return
		}
		// Where copies go, as far as the probe knows: terminald says it
		// when one is made.
		clipboard := func() *terminalv1.AttachRequest {
			return &terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Clipboard{Clipboard: &terminalv1.AttachClipboard{State: probe.State()}}}
		}
		if probe.State() != terminalv1.AttachClipboard_STATE_UNSPECIFIED && stream.Send(clipboard()) != nil {
			return
		}
		// 24-bit colour, once the terminal announces it (attach_probe.go).
		rgb := probe.TrueColor()
		for {
			var req *terminalv1.AttachRequest
			select {
			case <-probe.Changed():
				req = clipboard()
			case <-rgb:
				rgb = nil // said once per stream
				req = &terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Terminal{Terminal: &terminalv1.AttachTerminal{Truecolor: true}}}
			case b, ok := <-keys:
				if !ok {
					stream.CloseSend()
					return
				}
				req = &terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Input{Input: b}}
			case <-winch:
				cols, rows, err := term.GetSize(out)
				if err != nil {
					continue
				}
				req = &terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Resize{Resize: &terminalv1.AttachSize{Cols: int32(cols), Rows: int32(rows)}}}
			case <-stream.Context().Done():
				return
			}
			if stream.Send(req) != nil {
				return
			}
		}
	}()
	resp := first
	for {
		switch m := resp.GetMsg().(type) {
		case *terminalv1.AttachResponse_Output:
			if _, err := os.Stdout.Write(filterOutput(m.Output, probe.writes(), probe.Notify())); err != nil {
				return nil, fmt.Errorf("write to the terminal: %w", err)
			}
		case *terminalv1.AttachResponse_Exit:
			return m.Exit, nil
		case *terminalv1.AttachResponse_WindowId:
			*window = m.WindowId
		}
		var err error
		resp, err = stream.Recv()
		if err == io.EOF {
			return nil, errSessionEnded
		}
		if err != nil {
			return nil, fmt.Errorf("lost terminald: %s: %w", rpcError(err), err)
		}
	}
}
