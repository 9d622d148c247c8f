package terminald

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/peercred"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// Attach runs a human's attach session (package attach) over the stream:
// the first request is the hello, later ones carry keys and resizes.
func (s *Service) Attach(stream terminalv1.TerminalService_AttachServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	h := first.GetHello()
	if h == nil {
		return status.Error(codes.InvalidArgument, "attach: the first message must be a hello")
	}
	prefix, err := attach.ParsePrefix(s.ws.Config().Prefix)
	if err != nil { // config.Load checked it; a workspace built by hand may not be
		return status.Errorf(codes.FailedPrecondition, "attach: settings: %v", err)
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	in := make(chan attach.Msg, 16)
	go func() {
		defer close(in)
		for {
			r, err := stream.Recv()
			if err != nil {
				return
			}
			var m attach.Msg
			switch {
			case r.GetHello() != nil:
				continue
			case r.GetResize() != nil:
				m.Cols, m.Rows = int(r.GetResize().GetCols()), int(r.GetResize().GetRows())
			case r.GetClipboard() != nil:
				m.Clipboard = attachClipboard(r.GetClipboard())
			case r.GetTerminal() != nil:
				m.TrueColor = r.GetTerminal().GetTruecolor()
			default:
				m.Input = r.GetInput()
			}
			select {
			case in <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	creds, _ := peercred.FromContext(stream.Context()) // who answers sheets here, for authz's audit log
	window := func(id string) error {
		return stream.Send(&terminalv1.AttachResponse{Msg: &terminalv1.AttachResponse_WindowId{WindowId: id}})
	}
	exit, err := attach.Run(ctx, attach.Options{Workspace: s.ws, Prefix: prefix, Sheets: s.sheets, ClientPID: creds.PID, Live: s.live, Focus: s.focuses,
		Grants: s.grants, Buffers: s.buffers, Window: window, Attention: s.attention},
		attach.Hello{
			Target: h.GetTarget(), Cols: int(h.GetSize().GetCols()), Rows: int(h.GetSize().GetRows()),
			Term: h.GetTerm(), ColorTerm: h.GetColorterm(), Directory: h.GetDirectory(),
		}, in, func(b []byte) error {
			return stream.Send(&terminalv1.AttachResponse{Msg: &terminalv1.AttachResponse_Output{Output: b}})
		})
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	return stream.Send(&terminalv1.AttachResponse{Msg: &terminalv1.AttachResponse_Exit{
		Exit: &terminalv1.AttachExit{Message: exit.Message, Ok: exit.OK}}})
}

// SetSheets installs the permission sheets waiting for the human, which
// attach marks on its status line and opens with prefix+s. Call it before
// serving.
func (s *Service) SetSheets(sh attach.Sheets) { s.sheets = sh }

// SetGrants installs authz's grants and audit log, which attach's grants
// view (prefix g) lists and revokes. Call it before serving.
func (s *Service) SetGrants(g attach.Grants) { s.grants = g }
