package gitd

import (
	"context"
	"fmt"
	"sync"

	"github.com/phantom-dev/phantom/gitd/worktree"
	"github.com/phantom-dev/phantom/internal/daemon"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// terminals is worktree.Tabs over terminald's gRPC API, dialled on first
// use so that gitd starts (and lists worktrees) while terminald is down.
type terminals struct {
	addr string

	once sync.Once
	conn interface{ Close() error }
	cc   terminalv1.TerminalServiceClient
	err  error
}

// newTerminals reaches terminald at addr.
func newTerminals(addr string) *terminals { return &terminals{addr: addr} }

func (t *terminals) client() (terminalv1.TerminalServiceClient, error) {
	t.once.Do(func() {
		cc, err := daemon.Dial(t.addr)
		if err != nil {
			t.err = err
			return
		}
		t.conn, t.cc = cc, terminalv1.NewTerminalServiceClient(cc)
	})
	if t.cc == nil && t.err == nil {
		return nil, fmt.Errorf("terminald client for %s is closed", t.addr)
	}
	return t.cc, t.err
}

// close hangs up on terminald, if dialled; call it once no call is left.
func (t *terminals) close() {
	t.once.Do(func() {}) // a later client() must not dial
	if t.conn != nil {
		t.conn.Close()
	}
}

// List returns every tab.
func (t *terminals) List(ctx context.Context) ([]worktree.Tab, error) {
	c, err := t.client()
	if err != nil {
		return nil, err
	}
	resp, err := c.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
	if err != nil {
		return nil, fmt.Errorf("list tabs at %s: %w", t.addr, err)
	}
	out := make([]worktree.Tab, len(resp.GetTerminals()))
	for i, tm := range resp.GetTerminals() {
		out[i] = worktree.Tab{ID: tm.GetId(), Directory: tm.GetDirectory(), Worktree: tm.GetWorktree(),
			GroupID: tm.GetGroupId(), WindowID: tm.GetWindowId()}
	}
	return out, nil
}

// Open opens a tab.
func (t *terminals) Open(ctx context.Context, s worktree.TabSpec) (string, error) {
	c, err := t.client()
	if err != nil {
		return "", err
	}
	resp, err := c.CreateTerminal(ctx, &terminalv1.CreateTerminalRequest{
		Worktree: s.Worktree, GroupId: s.GroupID, WindowId: s.WindowID, Name: s.Name,
	})
	if err != nil {
		return "", fmt.Errorf("open a tab at %s: %w", t.addr, err)
	}
	return resp.GetTerminal().GetId(), nil
}
