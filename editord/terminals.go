package editord

import (
	"context"
	"fmt"

	"github.com/phantom-dev/phantom/editord/editor"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// terminals is editor.Terminals over terminald's gRPC API, dialled on
// first use so that editord starts while terminald is down.
type terminals struct {
	*daemon.Lazy[terminalv1.TerminalServiceClient]
}

// newTerminals reaches terminald at addr.
func newTerminals(addr string) terminals {
	return terminals{daemon.NewLazy(addr, terminalv1.NewTerminalServiceClient)}
}

// Tab returns the window and directory of tab id.
func (t terminals) Tab(ctx context.Context, id string) (editor.TabInfo, error) {
	c, err := t.Get()
	if err != nil {
		return editor.TabInfo{}, err
	}
	resp, err := c.ListTerminals(ctx, &terminalv1.ListTerminalsRequest{})
	if err != nil {
		return editor.TabInfo{}, fmt.Errorf("list tabs at %s: %w", t.Addr(), err)
	}
	for _, tm := range resp.GetTerminals() {
		if tm.GetId() == id {
			return editor.TabInfo{Window: tm.GetWindowId(), Dir: tm.GetDirectory(), Sandboxed: tm.GetSandboxed()}, nil
		}
	}
	return editor.TabInfo{}, fmt.Errorf("tab %s is gone: %w", id, errdefs.ErrNotFound)
}

// Locate names the tab process pid runs in, as terminald sees it.
func (t terminals) Locate(ctx context.Context, pid int, start uint64) (string, error) {
	c, err := t.Get()
	if err != nil {
		return "", err
	}
	resp, err := c.LocateProcess(ctx, &terminalv1.LocateProcessRequest{Pid: int32(pid), StartTime: start})
	if err != nil {
		return "", fmt.Errorf("locate process %d at %s: %w", pid, t.Addr(), err)
	}
	return resp.GetTabId(), nil
}

// Launch opens a tab named "editor" as l says. editord runs outside
// Phantom, so terminald lets it name a command and the editor's socket, as
// the human's CLI.
func (t terminals) Launch(ctx context.Context, l editor.Launch) (string, error) {
	c, err := t.Get()
	if err != nil {
		return "", err
	}
	// The editor opened for an agent is the agent's: terminald runs
	// Neovim in the agent's sandbox and marks the tab as the agent's. A
	// sandboxed tab's editor asks for the sandbox itself too, so that it
	// is sandboxed even when the human's own tools asked for it.
	if caller, ok := guard.CallerFrom(ctx); ok {
		ctx = guard.ForAgentCaller(ctx, caller)
	}
	resp, err := c.CreateTerminal(ctx, &terminalv1.CreateTerminalRequest{
		WindowId: l.Window, Directory: l.Dir, Name: "editor", Command: l.Argv,
		Sandbox: l.Sandbox, EditorSocket: l.Socket,
	})
	if err != nil {
		return "", fmt.Errorf("open a tab at %s: %w", t.Addr(), err)
	}
	return resp.GetTerminal().GetId(), nil
}
