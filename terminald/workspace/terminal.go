package workspace

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/procfs"
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
}

// equal reports whether a and b show the same.
func (a Terminal) equal(b Terminal) bool {
	pa, pb := a.DevServerPorts, b.DevServerPorts
	a.DevServerPorts, b.DevServerPorts = nil, nil
	return reflect.DeepEqual(a, b) && slices.Equal(pa, pb)
}

// infoLocked snapshots e; DevServerPorts is filled by withPorts.
func (w *Workspace) infoLocked(e *tabEntry) Terminal {
	st := e.status()
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
		Sandboxed: e.sandboxed,
		Editor:    w.isEditor(e.windowID, st.listen),
	}
}

// withPorts fills in the TCP ports each tab's processes listen on. It runs
// without w.mu: the tracker walks /proc only when the set of listening
// sockets changed, but that walk can take milliseconds.
func (w *Workspace) withPorts(ts []Terminal, leaders map[string]int) []Terminal {
	byTab, err := w.portsOf(leaders)
	if err != nil {
		w.opts.Logger.Warn("listening ports unavailable", "err", err)
		return ts
	}
	for i := range ts {
		ts[i].DevServerPorts = append(ts[i].DevServerPorts, byTab[ts[i].ID]...)
	}
	return ts
}

// portsFresh is how long one look at the listening sockets is reused for
// the same tabs: agents may poll list_terminals many times a second, and
// each look is a netlink round trip.
const portsFresh = 250 * time.Millisecond

// portsOf returns the tabs' listening ports, from the last look if it is
// fresh and was for the same tabs.
func (w *Workspace) portsOf(leaders map[string]int) (map[string][]uint16, error) {
	w.portsMu.Lock()
	defer w.portsMu.Unlock()
	if time.Since(w.portsAt) < portsFresh && maps.Equal(leaders, w.portsFor) {
		return w.portsLast, nil
	}
	byTab, err := w.ports.Ports(leaders)
	if err != nil {
		return nil, err
	}
	w.portsAt, w.portsFor, w.portsLast = time.Now(), leaders, byTab
	return byTab, nil
}

// List returns every tab, window by window, in tab order.
func (w *Workspace) List() []Terminal {
	w.mu.Lock()
	var out []Terminal
	leaders := make(map[string]int, len(w.tabs))
	for _, win := range w.windows {
		for _, id := range win.tabs {
			e := w.tabs[id]
			out = append(out, w.infoLocked(e))
			if !out[len(out)-1].Exited {
				leaders[id] = e.leaderPID
			}
		}
	}
	w.mu.Unlock()
	return w.withPorts(out, leaders)
}

// Get returns one tab.
func (w *Workspace) Get(id string) (Terminal, error) {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	info := w.infoLocked(e)
	w.mu.Unlock()
	return w.withPorts([]Terminal{info}, map[string]int{id: e.leaderPID})[0], nil
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
		return Terminal{}, err
	}
	return w.Get(id)
}

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
	win.focused = id
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
	return w.windowInfoLocked(win)
}

// Input sends raw bytes to a tab as if typed, keystrokes and all: the
// human's keyboard (attach), never an agent's path, which is RunCommand.
func (w *Workspace) Input(id string, p []byte) error {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case e.input <- append([]byte(nil), p...):
		return nil
	case <-e.stop:
		return fmt.Errorf("tab %s is closed: %w", id, errdefs.ErrFailedPrecondition)
	}
}
