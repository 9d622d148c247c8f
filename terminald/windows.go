package terminald

import (
	"context"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// CloseWindow closes a window and its tabs; the last window is refused.
// Not a tool: the guard refuses it inside Phantom (windows are the
// human's, as their names are).
func (s *Service) CloseWindow(_ context.Context, r *terminalv1.CloseWindowRequest) (*terminalv1.CloseWindowResponse, error) {
	w, closed, err := s.ws.CloseWindow(r.GetWindowId())
	if err != nil {
		return nil, err
	}
	return &terminalv1.CloseWindowResponse{Window: toWindow(w), ClosedTerminalIds: closed}, nil
}

// MoveTerminal moves a tab to another window. Not a tool, as CloseWindow.
func (s *Service) MoveTerminal(ctx context.Context, r *terminalv1.MoveTerminalRequest) (*terminalv1.MoveTerminalResponse, error) {
	t, err := s.ws.MoveTab(r.GetTerminalId(), r.GetWindowId())
	if err != nil {
		return nil, err
	}
	return &terminalv1.MoveTerminalResponse{Terminal: s.terminalFor(ctx, t, false)}, nil
}

// callerWindow is the window a tab opened for the call in ctx lands in
// when the call names neither a window nor a group: the window of the
// agent's tab (`phantom new` in a tab of window ci opens in ci, and so
// does create_terminal); "" (the first window) for the human outside
// Phantom and for an agent in no tab.
func (s *Service) callerWindow(ctx context.Context, r *terminalv1.CreateTerminalRequest) string {
	if r.GetWindowId() != "" || r.GetGroupId() != "" {
		return r.GetWindowId()
	}
	tab := callerTab(ctx)
	if tab == "" {
		return ""
	}
	t, err := s.ws.Get(tab)
	if err != nil {
		return "" // the caller's tab is gone
	}
	return t.WindowID
}
