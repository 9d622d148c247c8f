package workspace

import (
	"fmt"
	"slices"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

var procfsDefault = procfs.Default

// AgentState is what the agent client in a tab is doing, as the gateway
// reports it.
type AgentState int

// The agent states.
const (
	AgentNone AgentState = iota
	AgentIdle
	AgentWorking
	AgentWaitingForPermission
)

// Terminal is a tab as callers see it at one moment.
type Terminal struct {
	ID, Title, Name, Directory string
	ForegroundName             string
	ForegroundPID              int
	Idle                       bool
	DevServerPorts             []uint16
	GroupID, WindowID          string
	Focused                    bool
	Worktree                   string
	AgentState                 AgentState
	AgentClient                string
	Color, Icon                string
	Exited                     bool
	ExitCode                   int
	Cols, Rows                 int
	// GroupSetByAgent and NameSetByAgent say an agent, not the human, set
	// the tab's group or name.
	GroupSetByAgent, NameSetByAgent bool
	// Sandboxed is true when the tab's program runs under Landlock
	// (terminald/sandbox).
	Sandboxed bool
	// Editor is true when the tab runs its window's editor (editord).
	Editor bool
	// UnsandboxedAgent is true when an agent runs in the tab (its MCP
	// client connected from it, or its foreground program is a configured
	// agent's) and the tab is not sandboxed.
	UnsandboxedAgent bool
	// OpenedBy is the tab whose agent this one was opened for; "" for a
	// tab the human opened, or typed into since (Workspace.input).
	OpenedBy string
	// Project is the project the tab works in, as Phantom decides it (see
	// the proto's Terminal.project).
	Project string
	// KernelDirectory is the working directory of the tab's leader as the
	// kernel last reported it (/proc/PID/cwd), never OSC 7: what callers
	// that may not see what the tab's programs say are shown instead of
	// Directory. In a sandboxed tab the leader is the sandbox launcher,
	// which stays where the tab was opened.
	KernelDirectory string
	// KeepsCommand is true when the human marked a command to re-run in
	// the tab when the session is restored (persist.go).
	KeepsCommand bool
}

// equal reports whether a and b show the same.
func (a Terminal) equal(b Terminal) bool { return a.Equal(b) }

// Equal reports whether a and b show the same, field by field: callers
// that cache what they made of a Terminal (terminald's wire form) ask it
// for every tab on every list, where reflect.DeepEqual cost a microsecond
// a tab. A new field must be compared here; TestTerminalEqualSeesEveryField
// fails until it is.
func (a Terminal) Equal(b Terminal) bool {
	return a.ID == b.ID && a.Title == b.Title && a.Name == b.Name && a.Directory == b.Directory &&
		a.ForegroundName == b.ForegroundName && a.ForegroundPID == b.ForegroundPID && a.Idle == b.Idle &&
		slices.Equal(a.DevServerPorts, b.DevServerPorts) &&
		a.GroupID == b.GroupID && a.WindowID == b.WindowID && a.Focused == b.Focused && a.Worktree == b.Worktree &&
		a.AgentState == b.AgentState && a.AgentClient == b.AgentClient && a.Color == b.Color && a.Icon == b.Icon &&
		a.Exited == b.Exited && a.ExitCode == b.ExitCode && a.Cols == b.Cols && a.Rows == b.Rows &&
		a.GroupSetByAgent == b.GroupSetByAgent && a.NameSetByAgent == b.NameSetByAgent &&
		a.Sandboxed == b.Sandboxed && a.Editor == b.Editor && a.UnsandboxedAgent == b.UnsandboxedAgent &&
		a.OpenedBy == b.OpenedBy && a.Project == b.Project && a.KernelDirectory == b.KernelDirectory &&
		a.KeepsCommand == b.KeepsCommand
}

// infoLocked is e as callers see it, from e's status snapshot
// (snapshot_tab.go): no /proc read, so that listing tabs costs the same
// however many there are. DevServerPorts is filled by withPorts.
func (w *Workspace) infoLocked(e *tabEntry) Terminal {
	st := e.snapshot()
	win, _ := w.windowLocked(e.windowID)
	worktree := e.worktree
	if worktree == "" {
		worktree = st.worktree
	}
	title := e.name
	if title == "" {
		title = st.title
	}
	if title == "" {
		title = st.fgName
	}
	return Terminal{
		ID: e.id, Title: title, Name: e.name, Directory: st.directory,
		ForegroundName: st.fgName, ForegroundPID: st.fgPID, Idle: st.idle,
		GroupID: e.groupID, WindowID: e.windowID, Focused: win != nil && win.focused == e.id,
		Worktree: worktree, AgentState: e.agentState, AgentClient: e.agentClient,
		Color: e.color, Icon: e.icon, Exited: st.exited, ExitCode: st.exitCode,
		Cols: st.cols, Rows: st.rows,
		GroupSetByAgent: e.groupByAgent, NameSetByAgent: e.nameByAgent,
		Sandboxed:        e.sandboxed,
		Editor:           w.isEditor(e.windowID, st.listen),
		UnsandboxedAgent: !e.sandboxed && (e.agentClient != "" || w.config.Load().IsAgentProgram(st.fgName)),
		OpenedBy:         e.openedBy,
		Project:          e.projectOf(st),
		KernelDirectory:  st.kernelDir,
		KeepsCommand:     e.keep != nil,
	}
}

// projectOf is the project e works in, as Phantom decides it. A tab opened
// for an agent works in its opener's project, wherever its directory is:
// it is no more privileged than that agent. A sandboxed tab's is the one
// it was opened in, which its programs cannot move. Another tab's follows
// its shell's working directory as the kernel had it when the shell last
// waited at its prompt (tab.computeStatus), and until then is the one it
// was opened in.
func (e *tabEntry) projectOf(st status) string {
	if e.openedBy != "" || e.sandboxed || st.project == "" {
		return e.project
	}
	return st.project
}

// withPorts fills in the TCP ports each running tab's processes listen
// on, as the poll last saw them (lookPorts).
func (w *Workspace) withPorts(ts []Terminal) []Terminal {
	w.portsMu.Lock()
	byTab := w.portsLast
	w.portsMu.Unlock()
	for i := range ts {
		if !ts[i].Exited {
			ts[i].DevServerPorts = append(ts[i].DevServerPorts, byTab[ts[i].ID]...)
		}
	}
	return ts
}

// lookPorts looks at the listening sockets and attributes them to the
// tabs; the poll calls it, so that a port shows within PollInterval. Not
// per list_terminals: the look is a netlink round trip, and whenever the
// machine's set of listening sockets changed, a /proc walk over every
// tab's processes (milliseconds with 200 tabs, and on a busy machine
// that set changes all the time).
func (w *Workspace) lookPorts() {
	byTab, err := w.ports.Ports(w.leaders())
	if err != nil {
		w.opts.Logger.Warn("listening ports unavailable", "err", err)
		return
	}
	w.portsMu.Lock()
	w.portsLast = byTab
	w.portsMu.Unlock()
}

// leaders maps every running tab to its leader's pid. Whether a tab's
// program exited is read now, not from its snapshot: the tracker must not
// be given a pid that may have been reaped and reused.
func (w *Workspace) leaders() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.tabs))
	for id, e := range w.tabs {
		if exited, _ := e.exitStatus(); !exited {
			out[id] = e.leaderPID
		}
	}
	return out
}

// List returns every tab, window by window, in tab order, as their
// snapshots show them (snapshot_tab.go).
func (w *Workspace) List() []Terminal {
	w.mu.Lock()
	out := make([]Terminal, 0, len(w.tabs))
	for _, win := range w.windows {
		for _, id := range win.tabs {
			out = append(out, w.infoLocked(w.tabs[id]))
		}
	}
	w.mu.Unlock()
	return w.withPorts(out)
}

// Get returns one tab, its status computed now: a caller that just acted
// on the tab (RunCommand, Resize) sees the effect. That costs the same
// however many tabs there are.
func (w *Workspace) Get(id string) (Terminal, error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return Terminal{}, err
	}
	e.refresh()
	w.mu.Lock()
	if e, err = w.tabLocked(id); err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	info := w.infoLocked(e)
	w.mu.Unlock()
	return w.withPorts([]Terminal{info})[0], nil
}

// SandboxOf returns how tab id's program is confined: sandboxed, and by
// which rules.
func (w *Workspace) SandboxOf(id string) (sandbox.Rules, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, err := w.tabLocked(id)
	if err != nil {
		return sandbox.Rules{}, false, err
	}
	return e.rules, e.sandboxed, nil
}

// ReadOutput returns the last n rendered lines of a tab.
func (w *Workspace) ReadOutput(id string, n int) ([]string, error) {
	if n < 1 {
		return nil, invalid("lines", fmt.Sprintf("must be at least 1, got %d", n))
	}
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return e.lastLines(n), nil
}

// RunCommand types one line into an idle tab and presses Enter.
func (w *Workspace) RunCommand(id, line string) (Terminal, error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return Terminal{}, err
	}
	if err := e.runCommand(line); err != nil {
		return Terminal{}, &NotTyped{Err: err}
	}
	return w.Get(id)
}

// NotTyped is run_command's error when it typed nothing: the tab was busy
// or had exited, its command line held text, or the line would not fit;
// or when nothing ran: the shell waited for more of the line and Phantom
// cancelled it (continuation.go).
// The caller was allowed to type, so the audit log says it did not.
type NotTyped struct{ Err error }

func (e *NotTyped) Error() string { return e.Err.Error() }

// Unwrap is the reason.
func (e *NotTyped) Unwrap() error { return e.Err }

// Focus makes a tab its window's focused tab.
func (w *Workspace) Focus(id string) (Terminal, error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	win, _ := w.windowLocked(e.windowID)
	prev := win.focused
	// The entries learn each move, so that the entry left keeps its
	// focused pane for coming back.
	w.entriesLocked(win)
	win.focused = id
	w.entriesLocked(win)
	var changed []Terminal
	if prev != id {
		if p, ok := w.tabs[prev]; ok {
			changed = append(changed, w.infoLocked(p))
		}
	}
	info := w.infoLocked(e)
	w.mu.Unlock()
	for _, c := range append(changed, info) {
		w.publish(Event{Kind: EventUpdated, Terminal: c})
	}
	return info, nil
}

// Update is a change to a tab's looks; nil fields stay.
type Update struct {
	Name, Icon, Color *string
	// ByAgent is true when an agent, not the human, makes the change.
	ByAgent bool
}

// Update changes a tab's name, icon or colour.
func (w *Workspace) Update(id string, u Update) (Terminal, error) {
	if u.Color != nil {
		if err := checkColor("color", *u.Color); err != nil {
			return Terminal{}, err
		}
	}
	if u.Icon != nil && len([]rune(*u.Icon)) > 8 {
		return Terminal{}, invalid("icon", fmt.Sprintf("%q is longer than 8 characters", *u.Icon))
	}
	w.mu.Lock()
	e, err := w.tabLocked(id)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	if u.Name != nil {
		e.name = *u.Name
		e.nameByAgent = u.ByAgent && *u.Name != ""
	}
	if u.Icon != nil {
		e.icon = *u.Icon
	}
	if u.Color != nil {
		e.color = *u.Color
	}
	info := w.infoLocked(e)
	w.mu.Unlock()
	w.publish(Event{Kind: EventUpdated, Terminal: info})
	return info, nil
}

// Resize changes a tab's terminal size.
func (w *Workspace) Resize(id string, cols, rows int) (Terminal, error) {
	if cols < 2 || cols > 1000 || rows < 1 || rows > 1000 {
		return Terminal{}, invalid("cols", fmt.Sprintf("size %dx%d is outside 2..1000 x 1..1000", cols, rows))
	}
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return Terminal{}, err
	}
	if err := e.resize(cols, rows); err != nil {
		return Terminal{}, err
	}
	return w.Get(id)
}

// SetAgent records which agent client runs in a tab and what it is doing.
func (w *Workspace) SetAgent(id, client string, state AgentState) (Terminal, error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	e.agentClient, e.agentState = client, state
	info := w.infoLocked(e)
	w.mu.Unlock()
	w.publish(Event{Kind: EventUpdated, Terminal: info})
	return info, nil
}

// exitStatus reports whether the program ended, and how.
func (t *tab) exitStatus() (bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exited, t.exitCode
}

// Window is a window as callers see it.
type Window struct {
	ID, Name   string
	TabIDs     []string
	GroupIDs   []string
	FocusedTab string
}

// Windows lists the windows.
func (w *Workspace) Windows() []Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Window, 0, len(w.windows))
	for _, win := range w.windows {
		out = append(out, w.windowInfoLocked(win))
	}
	return out
}

func (w *Workspace) windowInfoLocked(win *windowEntry) Window {
	var groups []string
	for _, g := range w.groupsLocked() {
		if g.windowID == win.id {
			groups = append(groups, g.id)
		}
	}
	return Window{ID: win.id, Name: win.name, TabIDs: slices.Clone(win.tabs), GroupIDs: groups, FocusedTab: win.focused}
}

// CreateWindow adds a window.
func (w *Workspace) CreateWindow(name string) Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	win := &windowEntry{id: w.newID('w'), name: name}
	if win.name == "" {
		win.name = win.id
	}
	w.windows = append(w.windows, win)
	w.winChanged.fire()
	return w.windowInfoLocked(win)
}

// Input sends raw bytes to a tab as if typed, keystrokes and all: the
// human's keyboard (attach, the human's `phantom send`), never
// run_command. What it types is followed until the next Enter, so that
// run_command never joins it (prompt.go), nor AgentInput.
func (w *Workspace) Input(id string, p []byte) error {
	return w.input(id, p, false)
}

// AgentInput is Input for an agent's keys (send_keys, an agent's
// `phantom send`): refused while the human's keys are on the line, not
// entered (typeKeys).
func (w *Workspace) AgentInput(id string, p []byte) error {
	return w.input(id, p, true)
}

// input types p into tab id, for an agent or for the human, whose keys
// make the tab the human's (Adopt).
func (w *Workspace) input(id string, p []byte, agent bool) error {
	if !agent {
		w.Adopt(id)
	}
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return err
	}
	return e.typeKeys(p, agent)
}

// Adopt makes tab id, if it was opened for an agent, the human's: the
// human types or runs a command there (Input, the human's run_command).
// What the human does there — sudo, ssh, a password typed into a
// program — is not the agent's to drive for free, nor to see as its own:
// opened_by is what send_keys, close_terminal, reach and list_terminals'
// redaction follow.
func (w *Workspace) Adopt(id string) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	adopted := err == nil && e.openedBy != ""
	if adopted {
		e.openedBy = ""
	}
	w.mu.Unlock()
	if adopted {
		w.requestSave() // a terminald restarted next keeps it the human's
		w.tabChanged(e.tab)
	}
}
