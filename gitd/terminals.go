package gitd

import (
	"context"
	"fmt"

	"github.com/phantom-dev/phantom/gitd/worktree"
	"github.com/phantom-dev/phantom/internal/daemon"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// terminals is worktree.Tabs over terminald's gRPC API, dialled on first
// use so that gitd starts (and lists worktrees) while terminald is down.
type terminals struct {
	*daemon.Lazy[terminalv1.TerminalServiceClient]
}

// newTerminals reaches terminald at addr.
func newTerminals(addr string) terminals {
	return terminals{daemon.NewLazy(addr, terminalv1.NewTerminalServiceClient)}
}

// List returns every tab.
func (t terminals) List(ctx context.Context) ([]worktree.Tab, error) {
	c, err := t.Get()
	if err != nil {
		return nil, err
	}
	resp, err := c.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
	if err != nil {
		return nil, fmt.Errorf("list tabs at %s: %w", t.Addr(), err)
	}
	out := make([]worktree.Tab, len(resp.GetTerminals()))
	for i, tm := range resp.GetTerminals() {
		out[i] = worktree.Tab{ID: tm.GetId(), Directory: tm.GetDirectory(), Worktree: tm.GetWorktree(),
			GroupID: tm.GetGroupId(), WindowID: tm.GetWindowId()}
	}
	return out, nil
}

// Open opens a tab.
func (t terminals) Open(ctx context.Context, s worktree.TabSpec) (string, error) {
	c, err := t.Get()
	if err != nil {
		return "", err
	}
	resp, err := c.CreateTerminal(ctx, &terminalv1.CreateTerminalRequest{
		Worktree: s.Worktree, GroupId: s.GroupID, WindowId: s.WindowID, Name: s.Name,
	})
	if err != nil {
		return "", fmt.Errorf("open a tab at %s: %w", t.Addr(), err)
	}
	return resp.GetTerminal().GetId(), nil
}
