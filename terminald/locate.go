package terminald

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/procfs"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/holder"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// LocateProcess says whether a process runs inside this Phantom and in
// which tab, from the process tree: the holder (or, without one,
// terminald) is its ancestor, and the tab is the one whose program is the
// ancestor just below it. A process
// that double-forked out of its tab's tree is inside but in no tab.
func (s *Service) LocateProcess(_ context.Context, r *terminalv1.LocateProcessRequest) (*terminalv1.LocateProcessResponse, error) {
	place, err := s.locate(int(r.GetPid()))
	if errors.Is(err, lineage.ErrNotFound) {
		return nil, fmt.Errorf("process %d does not exist: %w", r.GetPid(), errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if want := r.GetStartTime(); want != 0 && want != place.Self.StartTime {
		return nil, fmt.Errorf("process %d started at tick %d, not %d: its pid was reused: %w",
			r.GetPid(), place.Self.StartTime, want, errdefs.ErrNotFound)
	}
	resp := &terminalv1.LocateProcessResponse{Inside: place.Inside, StartTime: place.Self.StartTime}
	if place.Inside {
		resp.TabId, _ = s.ws.TabOfLeader(place.Top.PID, place.Top.StartTime)
	}
	return resp, nil
}

// DescribeSandbox says how a tab's programs are confined, as the rule
// flags of the sandbox launcher, for the daemons that start programs for
// calls from that tab.
func (s *Service) DescribeSandbox(_ context.Context, r *terminalv1.DescribeSandboxRequest) (*terminalv1.DescribeSandboxResponse, error) {
	rules, sandboxed, err := s.ws.SandboxOf(r.GetTabId())
	if err != nil {
		return nil, err
	}
	resp := &terminalv1.DescribeSandboxResponse{Sandboxed: sandboxed}
	if sandboxed {
		resp.Flags = rules.Flags()
	}
	return resp, nil
}

// TabOf returns the tab a located process runs in: "" when it runs outside
// Phantom or left its tab's tree.
func (s *Service) TabOf(p lineage.Place) string {
	if !p.Inside {
		return ""
	}
	id, _ := s.ws.TabOfLeader(p.Top.PID, p.Top.StartTime)
	return id
}

// selfLocator places processes with the calling process as terminald and,
// when hc is not nil, with hc's holder as the anchor of the tabs: the
// holder is the parent and subreaper of every tab's program, so a tab's
// leader is the process just below it. The instance's other daemons, found
// beside addr (terminald's own address), are anchors too: what they start
// is inside Phantom (lineage.DaemonsByCommandLine). Where a /proc entry
// cannot be read, every placement fails, and every decision that needs one
// fails closed.
func selfLocator(hc *holder.Client, addr string) func(pid int) (lineage.Place, error) {
	pid := os.Getpid()
	st, err := procfs.Default.Stat(pid)
	if err != nil {
		return func(int) (lineage.Place, error) {
			return lineage.Place{}, fmt.Errorf("terminald cannot read its own process (%v), so it cannot tell who is inside it", err)
		}
	}
	anchor := lineage.Either(lineage.Self(pid, st.StartTime), lineage.DaemonsByCommandLine(addr))
	if hc != nil {
		hpid, hstart := hc.Process()
		anchor = lineage.Either(lineage.Self(hpid, hstart), anchor)
	}
	return lineage.Tree{FS: procfs.Default, IsTerminald: anchor}.Locate
}

// forAgent reports whether the call in ctx is an agent's: from a process
// inside Phantom, or made for an agent by the gateway.
func forAgent(ctx context.Context) bool {
	c, _ := guard.CallerFrom(ctx)
	return c.ForAgent
}

// callerSandboxed reports whether the call in ctx comes from a sandboxed
// place, so that a tab it opens is sandboxed too and typing into that tab
// (run_command) does not escape the sandbox: an agent whose tab is
// sandboxed (directly, through the gateway, or through gitd or editord
// opening a tab for it), or an agent inside Phantom that left its tab,
// whose tab nobody can tell any more.
func (s *Service) callerSandboxed(ctx context.Context) bool {
	c, _ := guard.CallerFrom(ctx)
	if !c.ForAgent {
		return false
	}
	if c.TabID == "" {
		return c.Inside || c.LeftTab
	}
	t, err := s.ws.Get(c.TabID)
	return err == nil && t.Sandboxed
}

// callerRules is the sandbox of the sandboxed agent the call in ctx is
// made for, which a tab it opens may write no more than; nil when the
// caller is not sandboxed. An agent that left its tab, whose sandbox
// nobody can tell any more, gets one that writes nothing.
func (s *Service) callerRules(ctx context.Context) *sandbox.Rules {
	if !s.callerSandboxed(ctx) {
		return nil
	}
	c, _ := guard.CallerFrom(ctx)
	if c.TabID == "" {
		return &sandbox.Rules{}
	}
	rules, sandboxed, err := s.ws.SandboxOf(c.TabID)
	if err != nil || !sandboxed {
		return &sandbox.Rules{}
	}
	return &rules
}

// callerDirectory is where a tab an agent opens without naming a
// directory starts: the agent's tab's current directory, as
// list_terminals shows it to the agent (its shell's, from OSC 7, else
// /proc). The tab's programs can claim any directory with OSC 7, which
// widens nothing: the new tab of a sandboxed agent writes no more than
// the agent wherever it starts (CreateSpec.Within), and an agent may name
// any directory anyway. "" for the human and an agent in no tab (the
// workspace's default, the home directory); an error when the caller's
// directory cannot be used, rather than opening somewhere else.
func (s *Service) callerDirectory(ctx context.Context) (string, error) {
	tab := callerTab(ctx)
	if tab == "" {
		return "", nil
	}
	t, err := s.ws.Get(tab)
	if err != nil {
		return "", nil // the caller's tab is gone: as for a caller in no tab
	}
	dir := t.Directory
	if fi, err := os.Stat(dir); dir == "" || !filepath.IsAbs(dir) || err != nil || !fi.IsDir() {
		return "", fmt.Errorf("directory was not given, and the caller's tab %s has no directory a tab can start in (%q): "+
			"give directory (or worktree): %w", tab, dir, errdefs.ErrFailedPrecondition)
	}
	return dir, nil
}

// callerTab is the tab of the agent the call in ctx is made for; "" for
// the human, or an agent that left its tab.
func callerTab(ctx context.Context) string {
	c, _ := guard.CallerFrom(ctx)
	if !c.ForAgent {
		return ""
	}
	return c.TabID
}

// callerClient is the client name of the agent the call in ctx is made
// for, as its tab records it (SetAgentState), so that a tab opened for an
// agent (create_terminal, add_worktree's open_terminal, the editor's tab)
// carries its name in list_terminals; "" for the human, or when the
// agent's tab records none.
func (s *Service) callerClient(ctx context.Context) string {
	c, _ := guard.CallerFrom(ctx)
	if !c.ForAgent || c.TabID == "" {
		return ""
	}
	t, err := s.ws.Get(c.TabID)
	if err != nil {
		return ""
	}
	return t.AgentClient
}
