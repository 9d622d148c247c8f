// Package terminald is the terminal daemon: a thin gRPC adapter
// (TerminalService) over package workspace, which owns the PTYs, screens,
// tabs, groups and windows. Domain errors from the workspace are translated
// to gRPC codes by the shared server chain (internal/daemon).
package terminald

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/lineage"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// DefaultReadLines is how many lines ReadOutput returns when not told.
const DefaultReadLines = 100

// Service implements terminalv1.TerminalServiceServer.
type Service struct {
	terminalv1.UnimplementedTerminalServiceServer
	ws *workspace.Workspace
	// sheets are the permission sheets waiting for the human, shown and
	// answered in attach; nil when there is no authz to ask.
	sheets attach.Sheets
	// grants are authz's grants and audit log for attach's grants view;
	// nil when there is no authz to ask.
	grants attach.Grants
	// live are config.json's attach settings as reloaded (reload.go); nil
	// without a reloader: attach then reads the prefix once.
	live *attach.Live
	// locate places a process in the process tree (lineage.Tree.Locate
	// with terminald itself as the root).
	locate func(pid int) (lineage.Place, error)
	// terms are the tabs' wire messages as last listed, wire their
	// encodings (cost_list.go).
	terms termCache
	wire  wireCache
	// cmdTerms are those messages with the tabs' last commands (read.go).
	cmdTerms cmdTerms
	// focuses brings agents' focus requests to the attached clients, and
	// events records what they did in authz's audit log (focus.go).
	focuses *attach.Focuses
	// buffers are the paste buffers every attached client shares.
	buffers *attach.Buffers
	// attention finds new sheets and agents that wait or finished, and
	// rings the attached clients and the desktop; nil without (tests).
	attention *attach.Attention
	events    EventRecorder
	logger    *slog.Logger
}

// NewService serves ws. It locates processes with itself as terminald.
func NewService(ws *workspace.Workspace) *Service {
	return &Service{ws: ws, locate: selfLocator(ws.Holder(), ws.Layout().DaemonAddr("terminald")),
		focuses: attach.NewFocuses(), buffers: attach.NewBuffers(), logger: slog.New(slog.DiscardHandler)}
}

// ListTerminals lists every tab, or the one terminal_id names (the
// gateway's way to learn a caller's directory without listing them all).
// An agent sees in full only the tabs it may read for free (redact.go).
func (s *Service) ListTerminals(ctx context.Context, r *terminalv1.ListTerminalsRequest) (*terminalv1.ListTerminalsResponse, error) {
	if id := r.GetTerminalId(); id != "" {
		t, err := s.ws.Get(id)
		if err != nil {
			return nil, err
		}
		return &terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{s.terminalFor(ctx, t, false)}}, nil
	}
	ts := s.ws.List()
	full := viewerOf(ctx).sees(ts)
	return s.wire.response(s.withLastCommands(s.terms.convert(ts, full), full)), nil
}

// CreateTerminal opens a tab; an agent's, without a directory or
// worktree, in its own tab's directory (callerDirectory).
func (s *Service) CreateTerminal(ctx context.Context, r *terminalv1.CreateTerminalRequest) (*terminalv1.CreateTerminalResponse, error) {
	dir := r.GetDirectory()
	if dir == "" && r.GetWorktree() == "" {
		var err error
		if dir, err = s.callerDirectory(ctx); err != nil {
			return nil, err
		}
	}
	t, err := s.ws.Create(workspace.CreateSpec{
		Directory: dir, Worktree: r.GetWorktree(), GroupID: r.GetGroupId(),
		Agent: r.GetAgent(), Name: r.GetName(), WindowID: s.callerWindow(ctx, r), Command: r.GetCommand(),
		Cols: int(r.GetCols()), Rows: int(r.GetRows()), ByAgent: forAgent(ctx),
		Sandbox: r.GetSandbox() || s.callerSandboxed(ctx), Within: s.callerRules(ctx), EditorSocket: r.GetEditorSocket(),
		AgentClient: s.callerClient(ctx), OpenedBy: callerTab(ctx),
	})
	if err != nil {
		return nil, err
	}
	return &terminalv1.CreateTerminalResponse{Terminal: s.terminalFor(ctx, t, false)}, nil
}

// RunCommand types one line into an idle tab; with wait_seconds it waits
// for the command to end and returns its result (see the proto).
func (s *Service) RunCommand(ctx context.Context, r *terminalv1.RunCommandRequest) (*terminalv1.RunCommandResponse, error) {
	id := r.GetTerminalId()
	if !forAgent(ctx) {
		s.ws.Adopt(id) // the human's command: the tab is the human's now
	}
	if r.GetWaitSeconds() == 0 {
		if r.MaxLines != nil || r.MaxBytes != nil {
			return nil, fmt.Errorf("max_lines and max_bytes bound the output that wait_seconds returns; set wait_seconds too: %w", errdefs.ErrInvalidArgument)
		}
		var next string
		if err := s.ws.ReadScreen(id, func(scr *screen.Screen, epoch int64) {
			next = readCursor{tab: id, epoch: epoch, pos: scr.HistoryEnd()}.String()
		}); err != nil {
			return nil, err
		}
		t, err := s.ws.RunCommand(id, r.GetCommand())
		if err != nil {
			s.recordNotTyped(ctx, id, r.GetCommand(), err)
			return nil, err
		}
		return &terminalv1.RunCommandResponse{Terminal: s.terminalFor(ctx, t, false), NextCursor: next}, nil
	}
	c, err := s.ws.RunAndWait(ctx, id, r.GetCommand(), time.Duration(r.GetWaitSeconds())*time.Second)
	if err != nil {
		s.recordNotTyped(ctx, id, r.GetCommand(), err)
		return nil, err
	}
	maxLines, maxBytes := outputLimits(r.MaxLines, r.MaxBytes)
	res, next, err := s.commandResult(id, c, maxLines, maxBytes)
	if err != nil {
		return nil, err
	}
	t, err := s.ws.Get(id)
	if err != nil {
		return nil, err
	}
	resp := &terminalv1.RunCommandResponse{Terminal: s.terminalFor(ctx, t, true), Result: res, StillRunning: !c.Finished, NextCursor: next, EndedBy: c.EndedBy}
	if !c.Finished {
		res.Note = strings.TrimSpace(fmt.Sprintf("The command was still running after %d s; output holds what it printed so far. "+
			"read_output with cursor=next_cursor returns what it prints next; add wait_for \"idle\" to wait for it to end. %s",
			r.GetWaitSeconds(), res.GetNote()))
	}
	return resp, nil
}

// UpdateTerminal changes a tab's name, icon or colour.
func (s *Service) UpdateTerminal(ctx context.Context, r *terminalv1.UpdateTerminalRequest) (*terminalv1.UpdateTerminalResponse, error) {
	t, err := s.ws.Update(r.GetTerminalId(), workspace.Update{Name: r.Name, Icon: r.Icon, Color: r.Color, ByAgent: forAgent(ctx)})
	if err != nil {
		return nil, err
	}
	return &terminalv1.UpdateTerminalResponse{Terminal: s.terminalFor(ctx, t, false)}, nil
}

// CloseTerminal closes a tab and hangs up what runs in it (the
// close_terminal tool, put to authz before it gets here, as SendKeys is),
// and says what it closed.
func (s *Service) CloseTerminal(ctx context.Context, r *terminalv1.CloseTerminalRequest) (*terminalv1.CloseTerminalResponse, error) {
	id := r.GetTerminalId()
	t, err := s.ws.Get(id)
	if err != nil {
		return nil, err
	}
	before := s.terminalFor(ctx, t, false)
	if err := s.ws.Close(id); err != nil {
		return nil, err
	}
	return &terminalv1.CloseTerminalResponse{Terminal: before, Closed: closedText(before)}, nil
}

// closedText says what closing tab t ended, from what the caller may see
// of it.
func closedText(t *terminalv1.Terminal) string {
	s := "closed tab " + t.GetId()
	if t.GetTitle() != "" {
		s += " (" + t.GetTitle() + ")"
	}
	switch fg := t.GetForegroundProcess().GetName(); {
	case t.GetExited():
		return s + "; its program had already ended"
	case fg != "":
		return s + " and hung up what ran in it (" + fg + " in the foreground)"
	}
	return s + " and hung up what ran in it"
}

// ResizeTerminal resizes a tab.
func (s *Service) ResizeTerminal(ctx context.Context, r *terminalv1.ResizeTerminalRequest) (*terminalv1.ResizeTerminalResponse, error) {
	t, err := s.ws.Resize(r.GetTerminalId(), int(r.GetCols()), int(r.GetRows()))
	if err != nil {
		return nil, err
	}
	return &terminalv1.ResizeTerminalResponse{Terminal: s.terminalFor(ctx, t, false)}, nil
}

// WatchTerminals streams changes until the client goes away or terminald
// stops.
func (s *Service) WatchTerminals(_ *terminalv1.WatchTerminalsRequest, stream terminalv1.TerminalService_WatchTerminalsServer) error {
	wt := s.ws.Watch()
	defer wt.Stop()
	for {
		select {
		case ev, ok := <-wt.Events():
			if !ok {
				return wt.Err()
			}
			if err := stream.Send(toEvent(ev, s.terminalFor(stream.Context(), ev.Terminal, false))); err != nil {
				return err
			}
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
}

// ListGroups lists every group.
func (s *Service) ListGroups(context.Context, *terminalv1.ListGroupsRequest) (*terminalv1.ListGroupsResponse, error) {
	resp := &terminalv1.ListGroupsResponse{}
	for _, g := range s.ws.Groups() {
		resp.Groups = append(resp.Groups, toGroup(g))
	}
	return resp, nil
}

// CreateGroup makes a group.
func (s *Service) CreateGroup(_ context.Context, r *terminalv1.CreateGroupRequest) (*terminalv1.CreateGroupResponse, error) {
	g, err := s.ws.CreateGroup(r.GetName(), r.GetColor(), r.GetWindowId())
	if err != nil {
		return nil, err
	}
	return &terminalv1.CreateGroupResponse{Group: toGroup(g)}, nil
}

// UpdateGroup renames or recolours a group.
func (s *Service) UpdateGroup(_ context.Context, r *terminalv1.UpdateGroupRequest) (*terminalv1.UpdateGroupResponse, error) {
	g, err := s.ws.UpdateGroup(r.GetGroupId(), r.Name, r.Color)
	if err != nil {
		return nil, err
	}
	return &terminalv1.UpdateGroupResponse{Group: toGroup(g)}, nil
}

// MoveToGroup moves a tab into or out of a group.
func (s *Service) MoveToGroup(ctx context.Context, r *terminalv1.MoveToGroupRequest) (*terminalv1.MoveToGroupResponse, error) {
	t, err := s.ws.MoveToGroup(r.GetTerminalId(), r.GetGroupId(), forAgent(ctx))
	if err != nil {
		return nil, err
	}
	return &terminalv1.MoveToGroupResponse{Terminal: s.terminalFor(ctx, t, false)}, nil
}

// ListThemeColors lists the palette.
func (s *Service) ListThemeColors(context.Context, *terminalv1.ListThemeColorsRequest) (*terminalv1.ListThemeColorsResponse, error) {
	resp := &terminalv1.ListThemeColorsResponse{}
	for _, c := range workspace.Palette {
		resp.Colors = append(resp.Colors, &terminalv1.ThemeColor{Name: c.Name, Hex: c.Hex, Ansi256: int32(c.ANSI256)})
	}
	return resp, nil
}

// ListWindows lists the windows.
func (s *Service) ListWindows(context.Context, *terminalv1.ListWindowsRequest) (*terminalv1.ListWindowsResponse, error) {
	resp := &terminalv1.ListWindowsResponse{}
	for _, w := range s.ws.Windows() {
		resp.Windows = append(resp.Windows, toWindow(w))
	}
	return resp, nil
}

// CreateWindow adds a window.
func (s *Service) CreateWindow(_ context.Context, r *terminalv1.CreateWindowRequest) (*terminalv1.CreateWindowResponse, error) {
	return &terminalv1.CreateWindowResponse{Window: toWindow(s.ws.CreateWindow(r.GetName()))}, nil
}

// SetAgentState records an agent client's state in a tab.
func (s *Service) SetAgentState(ctx context.Context, r *terminalv1.SetAgentStateRequest) (*terminalv1.SetAgentStateResponse, error) {
	t, err := s.ws.SetAgent(r.GetTerminalId(), r.GetClient(), workspace.AgentState(r.GetState()))
	if err != nil {
		return nil, err
	}
	return &terminalv1.SetAgentStateResponse{Terminal: s.terminalFor(ctx, t, false)}, nil
}
