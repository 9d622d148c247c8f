package terminald

import (
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// Converters between the workspace's types and the wire types.

// toTerminal is t's message, in full. Handlers send tabs through
// Service.terminalFor or termCache.convert, which redact what a caller
// may not see (redact.go); nothing else calls it.
func toTerminal(t workspace.Terminal) *terminalv1.Terminal {
	out := &terminalv1.Terminal{
		Id:          t.ID,
		Title:       t.Title,
		Name:        t.Name,
		Directory:   t.Directory,
		Idle:        t.Idle,
		GroupId:     t.GroupID,
		WindowId:    t.WindowID,
		Focused:     t.Focused,
		Worktree:    t.Worktree,
		AgentState:  terminalv1.AgentState(t.AgentState),
		AgentClient: t.AgentClient,
		Color:       t.Color,
		Icon:        t.Icon,
		Exited:      t.Exited,
		ExitCode:    int32(t.ExitCode),
		Cols:        int32(t.Cols),
		Rows:        int32(t.Rows),

		GroupSetByAgent: t.GroupSetByAgent,
		NameSetByAgent:  t.NameSetByAgent,
		Sandboxed:       t.Sandboxed,
		Editor:          t.Editor,

		UnsandboxedAgent: t.UnsandboxedAgent,
		OpenedBy:         t.OpenedBy,
		Project:          t.Project,
		KeepsCommand:     t.KeepsCommand,
	}
	if t.ForegroundPID > 0 {
		out.ForegroundProcess = &terminalv1.Process{Name: t.ForegroundName, Pid: int32(t.ForegroundPID)}
	}
	for _, p := range t.DevServerPorts {
		out.DevServerPorts = append(out.DevServerPorts, uint32(p))
	}
	return out
}

func toGroup(g workspace.Group) *terminalv1.Group {
	return &terminalv1.Group{Id: g.ID, Name: g.Name, Color: g.Color, WindowId: g.WindowID, TerminalIds: g.TabIDs}
}

func toWindow(w workspace.Window) *terminalv1.Window {
	return &terminalv1.Window{Id: w.ID, Name: w.Name, TerminalIds: w.TabIDs, GroupIds: w.GroupIDs, FocusedTerminalId: w.FocusedTab}
}

var eventKinds = map[workspace.EventKind]terminalv1.WatchTerminalsResponse_Kind{
	workspace.EventCreated:     terminalv1.WatchTerminalsResponse_KIND_CREATED,
	workspace.EventUpdated:     terminalv1.WatchTerminalsResponse_KIND_UPDATED,
	workspace.EventIdleChanged: terminalv1.WatchTerminalsResponse_KIND_IDLE_CHANGED,
	workspace.EventClosed:      terminalv1.WatchTerminalsResponse_KIND_CLOSED,
}

// toEvent is ev with its tab as tm, the message the watcher may see
// (Service.terminalFor).
func toEvent(ev workspace.Event, tm *terminalv1.Terminal) *terminalv1.WatchTerminalsResponse {
	return &terminalv1.WatchTerminalsResponse{Kind: eventKinds[ev.Kind], Terminal: tm}
}
