package terminald

import (
	"context"
	"fmt"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/keys"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// SendKeys types keys into a tab as the human's keyboard would, whether
// the tab is busy or idle: key names and text, read by internal/keys (the
// parser `phantom send` uses too). It is the send_keys tool: a call from
// inside Phantom was put to authz by the guard before it gets here, and
// the gateway's by the gateway (free into a tab the caller opened, a
// sheet that spells the keys otherwise); the human's own terminal types
// at once.
func (s *Service) SendKeys(ctx context.Context, r *terminalv1.SendKeysRequest) (*terminalv1.SendKeysResponse, error) {
	id := r.GetTerminalId()
	b, err := keys.Parse(r.GetKeys(), r.GetLiteral())
	if err != nil {
		return nil, fmt.Errorf("argument keys: %v: %w", err, errdefs.ErrInvalidArgument)
	}
	input := s.ws.Input
	if forAgent(ctx) {
		input = s.ws.AgentInput
	}
	if err := input(id, b); err != nil {
		s.recordKeysNotTyped(ctx, id, err)
		return nil, err
	}
	t, err := s.ws.Get(id)
	if err != nil {
		return nil, err
	}
	return &terminalv1.SendKeysResponse{Terminal: s.terminalFor(ctx, t, false), Typed: keys.Spell(b)}, nil
}

// UpdateWindow renames a window.
func (s *Service) UpdateWindow(_ context.Context, r *terminalv1.UpdateWindowRequest) (*terminalv1.UpdateWindowResponse, error) {
	w, err := s.ws.RenameWindow(r.GetWindowId(), r.GetName())
	if err != nil {
		return nil, err
	}
	return &terminalv1.UpdateWindowResponse{Window: toWindow(w)}, nil
}
