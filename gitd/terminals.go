package gitd

import (
	"context"
	"fmt"

	"github.com/phantom-dev/phantom/gitd/worktree"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/guard"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/sandbox"
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
	// A tab opened for an agent is the agent's: terminald sandboxes it as
	// the agent's tab is and marks its name and group as the agent's.
	if caller, ok := guard.CallerFrom(ctx); ok {
		ctx = guard.ForAgentCaller(ctx, caller)
	}
	resp, err := c.CreateTerminal(ctx, &terminalv1.CreateTerminalRequest{
		Worktree: s.Worktree, GroupId: s.GroupID, WindowId: s.WindowID, Name: s.Name,
	})
	if err != nil {
		return "", fmt.Errorf("open a tab at %s: %w", t.Addr(), err)
	}
	return resp.GetTerminal().GetId(), nil
}

// Sandbox tells how tab's programs are confined, from terminald: the
// rules git must run under for a call from that tab.
func (t terminals) Sandbox(ctx context.Context, tab string) (sandbox.Rules, bool, error) {
	c, err := t.Get()
	if err != nil {
		return sandbox.Rules{}, false, err
	}
	resp, err := c.DescribeSandbox(ctx, &terminalv1.DescribeSandboxRequest{TabId: tab})
	if err != nil {
		return sandbox.Rules{}, false, fmt.Errorf("describe the sandbox of tab %s at %s: %w", tab, t.Addr(), err)
	}
	if !resp.GetSandboxed() {
		return sandbox.Rules{}, false, nil
	}
	r, err := sandbox.ParseFlags(resp.GetFlags())
	if err != nil {
		return sandbox.Rules{}, false, fmt.Errorf("the sandbox of tab %s, as terminald at %s describes it: %w", tab, t.Addr(), err)
	}
	return r, true, nil
}
