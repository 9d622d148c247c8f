package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

func attachCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "attach [TAB|WINDOW]",
		Short: "Show a window in this terminal; type into its tabs",
		Long: `Show a window's focused tab (or the named tab) in this terminal, with a
status line of the window's tabs. Keys go to the tab, except after the
prefix (Ctrl-\ unless config.json sets "prefix"):
  n / p   next / previous tab        1-9  tab by number
  c       new tab here               x    close the tab
  ,       rename the tab             [    scrollback (PgUp/PgDn, k/j, q)
  s       the waiting permission sheet
  d       detach (everything keeps running)
The prefix pressed twice sends it to the tab.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			target := ""
			if len(args) == 1 {
				target = args[0]
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
	tc, done, err := dialTerminald()
	if err != nil {
		return 1, err
	}
	defer done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := tc.Attach(ctx)
	if err != nil {
		return 1, rpcError(err)
	}
	wd, _ := os.Getwd()
	if err := stream.Send(&terminalv1.AttachRequest{Msg: &terminalv1.AttachRequest_Hello{Hello: &terminalv1.AttachHello{
		Target: target, Size: &terminalv1.AttachSize{Cols: int32(cols), Rows: int32(rows)},
		Term: os.Getenv("TERM"), Colorterm: os.Getenv("COLORTERM"), Directory: wd,
	}}}); err != nil && !errors.Is(err, io.EOF) {
		return 1, rpcError(err)
	}
	// The first answer says whether the server took the hello; only then
	// take over the terminal, so that a refusal prints plainly. (A Send
	// that found the stream ended, io.EOF, means the server refused before
	// reading the hello: Recv returns its reason.)
	first, err := stream.Recv()
	if err != nil {
		return 1, rpcError(err)
	}
	old, err := term.MakeRaw(in)
	if err != nil {
		return 1, fmt.Errorf("put the terminal in raw mode: %w", err)
	}
	os.Stdout.WriteString(attach.EnterClient)
	exit, err := attachLoop(stream, first, in, out)
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

// attachLoop copies keys and size changes to terminald and frames to the
// terminal until the session's exit message.
func attachLoop(stream terminalv1.TerminalService_AttachClient, first *terminalv1.AttachResponse, in, out int) (*terminalv1.AttachExit, error) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	// One goroutine sends (gRPC allows one sender at a time): keys and
	// resizes.
	keys := make(chan []byte, 16)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				keys <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(keys)
				return
			}
		}
	}()
	go func() {
		for {
			var req *terminalv1.AttachRequest
			select {
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
			if _, err := os.Stdout.Write(m.Output); err != nil {
				return nil, fmt.Errorf("write to the terminal: %w", err)
			}
		case *terminalv1.AttachResponse_Exit:
			return m.Exit, nil
		}
		var err error
		resp, err = stream.Recv()
		if err == io.EOF {
			return nil, errors.New("terminald ended the session without saying why")
		}
		if err != nil {
			return nil, fmt.Errorf("lost terminald: %w", rpcError(err))
		}
	}
}
