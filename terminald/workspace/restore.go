package workspace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabstate"
	"github.com/phantom-dev/phantom/terminald/holder"
	"github.com/phantom-dev/phantom/terminald/sandbox"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// stateVersion is the version of the workspace state blob the holder
// keeps between terminalds. A terminald that cannot read the blob still
// restores every tab, with default places and names.
const stateVersion = 1

// saveInterval bounds how long a change no explicit save covers (a
// rename, a new group) may be lost with a crashed terminald.
const saveInterval = time.Second

// savedState is what a new terminald needs beyond the tabs' descriptors:
// the ids, places and names the human and agents see.
type savedState struct {
	Version int            `json:"version"`
	NextID  map[string]int `json:"next_id"`
	Windows []savedWindow  `json:"windows"`
	Groups  []savedGroup   `json:"groups"`
	Tabs    []savedTab     `json:"tabs"`
}

type savedWindow struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Tabs    []string `json:"tabs"`
	Focused string   `json:"focused,omitempty"`
	// Entries are the window's status-line entries and their panes
	// (entries.go).
	Entries []Entry `json:"entries,omitempty"`
	// Layout is the one layout of a window as older terminalds kept it;
	// read into Entries, never written.
	Layout *savedLayout `json:"layout,omitempty"`
}

type savedGroup struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Color    string `json:"color"`
	WindowID string `json:"window_id"`
}

type savedTab struct {
	ID           string     `json:"id"`
	Name         string     `json:"name,omitempty"`
	Icon         string     `json:"icon,omitempty"`
	Color        string     `json:"color,omitempty"`
	GroupID      string     `json:"group_id,omitempty"`
	WindowID     string     `json:"window_id"`
	Worktree     string     `json:"worktree,omitempty"`
	AgentState   AgentState `json:"agent_state,omitempty"`
	AgentClient  string     `json:"agent_client,omitempty"`
	GroupByAgent bool       `json:"group_by_agent,omitempty"`
	NameByAgent  bool       `json:"name_by_agent,omitempty"`
	Integrated   bool       `json:"integrated,omitempty"`
	Shell        bool       `json:"shell,omitempty"`
	Sandboxed    bool       `json:"sandboxed,omitempty"`
	Sandbox      []string   `json:"sandbox,omitempty"` // its rules, as sandbox.Rules.Flags
	OpenedBy     string     `json:"opened_by,omitempty"`
	Project      string     `json:"project,omitempty"`
	SawPrompt    bool       `json:"saw_prompt,omitempty"`
	PtsName      string     `json:"pts"`
	TTYNr        uint64     `json:"tty_nr,omitempty"`
	Dir          string     `json:"dir,omitempty"`
	Fg           string     `json:"fg,omitempty"`
	Started      time.Time  `json:"started"`
	// Commands are the times of its command log's commands
	// (cmd_times.go).
	Commands []savedCommand `json:"commands,omitempty"`
	// KernelDir is the leader's working directory as the kernel last had
	// it (at its prompt, for a shell), never OSC 7: where a session
	// restored from disk starts the tab again (persist.go).
	KernelDir string `json:"kernel_dir,omitempty"`
	// Keep is the command the human marked to re-run when the session is
	// restored from disk (persist.go); nil when none.
	Keep *KeptCommand `json:"keep,omitempty"`
}

// snapshotState is the workspace's state blob.
func (w *Workspace) snapshotState() []byte {
	b, _ := json.Marshal(w.snapshot())
	return b
}

// snapshot is the workspace's state, as the blob and the saved session
// (persist.go) hold it.
func (w *Workspace) snapshot() savedState {
	w.mu.Lock()
	st := savedState{Version: stateVersion, NextID: map[string]int{}}
	for p, n := range w.nextID {
		st.NextID[string(p)] = n
	}
	for _, win := range w.windows {
		st.Windows = append(st.Windows, savedWindow{ID: win.id, Name: win.name, Tabs: slices.Clone(win.tabs), Focused: win.focused,
			Entries: w.entriesLocked(win)})
	}
	for _, g := range w.groupsLocked() {
		st.Groups = append(st.Groups, savedGroup{ID: g.id, Name: g.name, Color: g.color, WindowID: g.windowID})
	}
	tabs := make([]*tabEntry, 0, len(w.tabs))
	for _, e := range w.tabs {
		tabs = append(tabs, e)
		st.Tabs = append(st.Tabs, savedTab{ID: e.id, Name: e.name, Icon: e.icon, Color: e.color, GroupID: e.groupID,
			WindowID: e.windowID, Worktree: e.worktree, AgentState: e.agentState, AgentClient: e.agentClient,
			GroupByAgent: e.groupByAgent, NameByAgent: e.nameByAgent, Integrated: e.integrated, Shell: e.shell,
			Sandboxed: e.sandboxed, Sandbox: e.rules.Flags(), OpenedBy: e.openedBy, Project: e.project, PtsName: e.ptsName, TTYNr: e.ttyNr, Started: e.started,
			Keep: e.keep})
	}
	w.mu.Unlock()
	// What the tabs last showed, read outside w.mu (each tab's own locks).
	for i, e := range tabs {
		e.mu.Lock()
		st.Tabs[i].SawPrompt = e.sawPrompt
		e.mu.Unlock()
		e.lastMu.Lock()
		st.Tabs[i].Dir, st.Tabs[i].Fg = e.lastDir, e.lastFg
		st.Tabs[i].KernelDir = cmp.Or(e.projectAt, e.tab.projectOf)
		e.lastMu.Unlock()
		st.Tabs[i].Commands = e.cmds.savedTimes()
	}
	slices.SortFunc(st.Tabs, func(a, b savedTab) int { return idNum(a.ID) - idNum(b.ID) })
	return st
}

// requestSave asks saveLoop to hand the state to the holder now.
func (w *Workspace) requestSave() {
	w.persistSoon() // and to disk (persist.go)
	if w.opts.Holder == nil {
		return
	}
	select {
	case w.saveNow <- struct{}{}:
	default:
	}
}

// saveLoop hands the state to the holder when asked and every
// saveInterval when it changed, until the workspace shuts down.
func (w *Workspace) saveLoop() {
	defer close(w.saveDone)
	tick := time.NewTicker(saveInterval)
	defer tick.Stop()
	var last []byte
	for {
		select {
		case <-w.stopPoll:
			return
		case <-w.saveNow:
		case <-tick.C:
		}
		b := w.snapshotState()
		if bytes.Equal(b, last) {
			continue
		}
		if err := w.opts.Holder.SaveState(b); err != nil {
			w.opts.Logger.Warn("workspace state not handed to the holder", "err", err)
			continue
		}
		last = b
	}
}

// restore takes back the tabs the holder kept from a previous terminald:
// same ids, names, groups and windows; each screen and its scrollback
// rebuilt from the tab's output ring.
func (w *Workspace) restore() error {
	hc := w.opts.Holder
	began := time.Now()
	held, blob, err := hc.Restore()
	if err != nil {
		return err
	}
	var st savedState
	if len(blob) > 0 {
		if err := json.Unmarshal(blob, &st); err != nil || st.Version != stateVersion {
			w.opts.Logger.Warn("workspace state from the holder unreadable; tabs get default places", "err", err, "version", st.Version)
			st = savedState{}
		}
	}
	meta := map[string]savedTab{}
	for _, t := range st.Tabs {
		meta[t.ID] = t
	}
	if len(held) > 0 || len(blob) > 0 {
		// Tabs of a previous terminald: the session on disk goes on
		// from them (persist.go).
		w.persist.armed.Store(true)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.takePlacesLocked(st)
	now := time.Now()
	for _, h := range held {
		// Ids are never reused, even when the state blob was lost.
		w.nextID['t'] = max(w.nextID['t'], idNum(h.ID))
		m, ok := meta[h.ID]
		if !ok {
			m = savedTab{ID: h.ID, Shell: true, Started: now}
		}
		win, err := w.windowLocked(m.WindowID)
		if err != nil {
			win = w.windows[0]
			m.WindowID, m.GroupID = win.id, ""
		}
		if _, ok := w.groups[m.GroupID]; !ok {
			m.GroupID = ""
		}
		t, err := restoreTab(h, hc, m, w.Config().ScrollbackLines, now, w.tabChanged)
		if err != nil {
			// Hanging up is all that can be done for a tab that cannot
			// be shown: the holder closes its copies, ours close here.
			w.opts.Logger.Error("a held tab could not be restored; hanging it up", "tab", h.ID, "err", err)
			_ = hc.Release(h.ID)
			h.Master.Close()
			_ = syscall.Kill(-h.PID, syscall.SIGHUP)
			continue
		}
		e := &tabEntry{tab: t, name: m.Name, icon: m.Icon, color: m.Color, groupID: m.GroupID, windowID: m.WindowID,
			worktree: m.Worktree, agentState: m.AgentState, agentClient: m.AgentClient,
			groupByAgent: m.GroupByAgent, nameByAgent: m.NameByAgent, openedBy: m.OpenedBy, project: m.Project, keep: m.Keep}
		w.tabs[h.ID] = e
		if !slices.Contains(win.tabs, h.ID) {
			win.tabs = append(win.tabs, h.ID)
		}
		if err := tabstate.Write(tabstate.Path(w.tabDir, h.ID), tabstate.State{
			Version: tabstate.Version, TabID: h.ID, WindowID: win.id, PTY: t.ptsName, TTYNr: t.ttyNr,
			Session: t.leaderPID, LeaderPID: t.leaderPID, LeaderStart: t.leaderStart, TerminaldPID: os.Getpid(),
		}); err != nil {
			w.opts.Logger.Warn("tab-state file not rewritten", "tab", h.ID, "err", err)
		}
	}
	w.pruneWindowsLocked()
	for _, e := range w.tabs {
		e.last = w.infoLocked(e)
	}
	if len(held) > 0 {
		w.opts.Logger.Info("took back the holder's tabs", "tabs", len(w.tabs), "held", len(held), "took", time.Since(began))
	}
	return nil
}

// takePlacesLocked takes the windows (their tabs in order, focus and
// layouts), groups and next ids of a saved state, from the holder's blob
// or the session on disk (persist.go). Called with w.mu held.
func (w *Workspace) takePlacesLocked(st savedState) {
	if len(st.Windows) > 0 {
		w.windows = nil
		for _, sw := range st.Windows {
			w.windows = append(w.windows, &windowEntry{id: sw.ID, name: sw.Name, tabs: sw.Tabs, focused: sw.Focused})
			// Tabs that did not come back are left out when read.
			es := sw.Entries
			if es == nil {
				es = entriesFromLayout(sw.Tabs, sw.Layout)
			}
			if es != nil {
				if w.entries.m == nil {
					w.entries.m = map[string][]Entry{}
				}
				w.entries.m[sw.ID] = es
			}
		}
	}
	for p, n := range st.NextID {
		if len(p) == 1 {
			w.nextID[p[0]] = max(w.nextID[p[0]], n)
		}
	}
	for _, g := range st.Groups {
		if _, err := w.windowLocked(g.WindowID); err == nil {
			w.groups[g.ID] = &groupEntry{id: g.ID, name: g.Name, color: g.Color, windowID: g.WindowID}
		}
	}
	for _, win := range w.windows {
		w.nextID['w'] = max(w.nextID['w'], idNum(win.id))
	}
	for id := range w.groups {
		w.nextID['g'] = max(w.nextID['g'], idNum(id))
	}
}

// pruneWindowsLocked makes windows list only tabs that came back, each
// once, with focus on one of them. Called with w.mu held.
func (w *Workspace) pruneWindowsLocked() {
	for _, win := range w.windows {
		seen := map[string]bool{}
		win.tabs = slices.DeleteFunc(win.tabs, func(id string) bool {
			e, ok := w.tabs[id]
			drop := !ok || seen[id] || e.windowID != win.id
			seen[id] = true
			return drop
		})
		if _, ok := w.tabs[win.focused]; !ok || !slices.Contains(win.tabs, win.focused) {
			win.focused = ""
			if len(win.tabs) > 0 {
				win.focused = win.tabs[0]
			}
		}
	}
}

// restoreTab rebuilds a tab the holder kept: a fresh screen fed with the
// ring's output, then the same loops as a new tab.
func restoreTab(h holder.HeldTab, hc *holder.Client, m savedTab, scrollback int, now time.Time, notify func(*tab)) (*tab, error) {
	cols, rows := winsize(h.Master)
	ring, rerr := holder.OpenRing(h.Ring)
	if rerr != nil {
		h.Ring.Close()
		ring = nil
	}
	var proc process
	if h.Exited {
		proc = exitedProc{leader: h.PID, code: h.Code}
	} else {
		proc = heldProc{leader: h.PID, start: h.Start, tab: h.ID, hc: hc}
	}
	t := &tab{
		id:          h.ID,
		proc:        proc,
		pty:         h.Master,
		ring:        ring,
		hc:          hc,
		ptsName:     m.PtsName,
		leaderPID:   h.PID,
		leaderStart: h.Start,
		ttyNr:       m.TTYNr,
		integrated:  m.Integrated,
		shell:       m.Shell,
		sandboxed:   m.Sandboxed,
		rules:       restoredRules(m.Sandbox),
		started:     m.Started,
		lastDir:     m.Dir,
		lastFg:      m.Fg,
		notify:      notify,
		inLock:      make(chan struct{}, 1),
		input:       make(chan []byte, 64),
		readDone:    make(chan struct{}),
		waitDone:    make(chan struct{}),
		stop:        make(chan struct{}),
	}
	// What was typed there before the restart is not known (prompt.go).
	t.keys.unknown = whyRestored
	if t.ptsName == "" {
		t.ptsName = ptsName(h.Master)
	}
	if t.ttyNr == 0 {
		if st, err := procfs.ReadStat(h.PID); err == nil {
			t.ttyNr = uint64(st.TTYNr)
		}
	}
	// Terminal queries in the replayed output were answered long ago:
	// answering them again would type into the program.
	replaying := true
	t.scr = screen.New(screen.Options{
		Cols:       cols,
		Rows:       rows,
		Scrollback: scrollback,
		Reply: func(b []byte) {
			if !replaying {
				t.reply(b)
			}
		},
		OnEvent: t.onEvent,
	})
	stamp := now.Format("15:04:05")
	switch {
	case ring == nil:
		t.scr.Write([]byte(fmt.Sprintf("\x1b[7m[phantom: terminald restarted at %s; this tab's earlier output could not be recovered (%v)]\x1b[m\r\n", stamp, rerr)))
	default:
		data, lost := ring.Contents()
		// More lines than the scrollback keeps would push the notice
		// below out of it: what would scroll away anyway counts as lost.
		keep := scrollback
		switch {
		case keep == 0:
			keep = screen.DefaultScrollback
		case keep < 0:
			keep = 0
		}
		data, cut := lastLines(data, keep+rows-1)
		lost += uint64(cut)
		if lost > 0 {
			t.scr.Write([]byte(fmt.Sprintf("\x1b[7m[phantom: terminald restarted at %s; output before this point was rebuilt from the last %s kept; %s before that is gone]\x1b[m\r\n",
				stamp, sizeText(uint64(len(data))), sizeText(lost))))
		}
		t.scr.Write(data)
		// A replay that started or ended inside an escape sequence or a
		// line must not leave the screen in a mode the program did not
		// choose for what follows: the program's next output is real.
		t.scr.Write([]byte("\x1b[m"))
	}
	replaying = false
	t.cmds.adoptTimes(m.Commands)
	t.sawPrompt = t.sawPrompt || m.SawPrompt
	if !h.Exited && t.scr.AltScreen() {
		// A full-screen program (an editor, a TUI) draws mostly by
		// updating what is on screen: the ring may not hold its last full
		// frame. SIGWINCH makes it redraw everything, as on a resize.
		if fg := t.foreground(); fg > 0 {
			_ = syscall.Kill(-fg, syscall.SIGWINCH)
		}
	}
	go t.readLoop()
	go t.writeLoop()
	go t.waitLoop()
	return t, nil
}

// lastLines is the end of data holding at most n line breaks, and how
// many bytes before it were cut.
func lastLines(data []byte, n int) ([]byte, int) {
	i := len(data)
	for range n + 1 {
		j := bytes.LastIndexByte(data[:i], '\n')
		if j < 0 {
			return data, 0
		}
		i = j
	}
	return data[i+1:], i + 1
}

// sizeText is a byte count for people.
func sizeText(n uint64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatUint(n>>10, 10) + " KiB"
	}
	return strconv.FormatUint(n, 10) + " bytes"
}

// winsize is a PTY's size; the default size when it cannot be read.
func winsize(master *os.File) (cols, rows int) {
	cols, rows = DefaultCols, DefaultRows
	sc, err := master.SyscallConn()
	if err != nil {
		return
	}
	_ = sc.Control(func(fd uintptr) {
		if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil && ws.Col > 0 && ws.Row > 0 {
			cols, rows = int(ws.Col), int(ws.Row)
		}
	})
	return
}

// ptsName is the slave's path of a PTY master (TIOCGPTN).
func ptsName(master *os.File) string {
	sc, err := master.SyscallConn()
	if err != nil {
		return ""
	}
	name := ""
	_ = sc.Control(func(fd uintptr) {
		if n, err := unix.IoctlGetInt(int(fd), unix.TIOCGPTN); err == nil {
			name = "/dev/pts/" + strconv.Itoa(n)
		}
	})
	return name
}

// restoredRules reads a saved tab's sandbox rules. Rules that do not parse
// come back empty, which for a sandboxed tab is the tightest sandbox:
// nothing started for it may write anywhere.
func restoredRules(flags []string) sandbox.Rules {
	r, err := sandbox.ParseFlags(flags)
	if err != nil {
		return sandbox.Rules{}
	}
	return r
}
