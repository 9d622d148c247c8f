// Package workspace is terminald's real work: the tabs (real PTYs with their
// rendered screens), the groups and windows that organise them, and the
// stream of changes watchers follow. The gRPC adapter in package terminald
// only converts to and from this package's types.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/project"
	"github.com/phantom-dev/phantom/internal/tabstate"
	"github.com/phantom-dev/phantom/terminald/holder"
	"github.com/phantom-dev/phantom/terminald/ports"
	"github.com/phantom-dev/phantom/terminald/sandbox"
	"github.com/phantom-dev/phantom/terminald/shell"
)

// MaxTabs bounds the number of open tabs.
const MaxTabs = 1000

// Default terminal size for a new tab.
const (
	DefaultCols = 80
	DefaultRows = 24
)

// Options configures a Workspace.
type Options struct {
	// Config is the user's settings (shell, scrollback, agents).
	Config config.Config
	// Layout gives the runtime directories (tab-state files, shell
	// integration scripts) and the MCP socket every tab exports.
	Layout paths.Layout
	// Env is the environment tabs inherit; os.Environ() if nil.
	Env []string
	// Logger receives operational messages.
	Logger *slog.Logger
	// PollInterval is how often tabs are checked for changes no output
	// reports (foreground program, ports); default one second.
	PollInterval time.Duration
	// Spawner starts the tabs' programs; plain exec when nil. terminald's
	// reaper (terminald/reaper) is one, so that it never reaps a tab's
	// program behind the tab's back.
	Spawner Spawner
	// SandboxLauncher is the phantom binary: sandboxed tabs (agent tabs,
	// CreateSpec.Sandbox) start their program through its hidden
	// +sandbox command, which confines itself with Landlock and execs the
	// program (terminald/sandbox). Empty: sandboxed tabs are refused.
	SandboxLauncher string
	// Holder, when set, starts the tabs' programs and keeps their PTYs,
	// output rings and the workspace state across terminald restarts
	// (terminald/holder); New takes back the tabs it holds. Spawner is
	// then unused.
	Holder *holder.Client
	// RingSize is each tab's output ring with a holder;
	// holder.DefaultRingSize if zero.
	RingSize int
	// OnHolderLost is called, once, when the connection to the holder
	// ends while the workspace runs: the tabs were hung up and killed
	// (their processes would otherwise run on outside Phantom), and
	// terminald should exit so that a new one starts a new holder.
	OnHolderLost func(error)
}

// Spawner starts a tab's program and learns when it has been waited for.
type Spawner interface {
	Start(cmd *exec.Cmd) error
	Done(pid int)
}

// plainSpawner starts programs with exec.Cmd.Start.
type plainSpawner struct{}

func (plainSpawner) Start(cmd *exec.Cmd) error { return cmd.Start() }
func (plainSpawner) Done(int)                  {}

// Workspace holds every tab, group and window. It is safe for concurrent
// use.
type Workspace struct {
	opts   Options
	config atomic.Pointer[config.Config] // the settings now; see SetConfig
	ports  *ports.Tracker
	tabDir string
	// landlockABI is the kernel's Landlock ABI, which decides whether
	// sandboxed tabs can be sandboxed.
	landlockABI int
	// wallsOnce probes, at the first sandboxed tab, whether the launcher
	// can build the walls of a private mount namespace on this machine;
	// wallsErr says why not.
	wallsOnce sync.Once
	wallsErr  error

	mu       sync.Mutex
	tabs     map[string]*tabEntry
	groups   map[string]*groupEntry
	windows  []*windowEntry // in creation order
	nextID   map[byte]int
	watchers map[*Watcher]struct{}
	bells    bells // the tabs' bells' subscribers (bell.go)
	closing  bool

	entries entryStore // the windows' entries and their layouts (entries.go)
	// winChanged signals changes to the windows (windows.go).
	winChanged signal

	// portsMu guards the last look at the listening sockets (lookPorts).
	portsMu   sync.Mutex
	portsLast map[string][]uint16

	stopPoll     chan struct{}
	pollDone     chan struct{}
	shutdownOnce sync.Once

	// With a holder: saveNow asks saveLoop to save the state at once;
	// saveDone is closed when it ends. detached is set by Detach: the
	// tabs are left to the holder for the next terminald.
	saveNow  chan struct{}
	saveDone chan struct{}
	detached bool

	persist persister // the session saved to disk (persist.go)
}

// tabEntry is a tab and its place in the workspace; guarded by Workspace.mu.
type tabEntry struct {
	*tab
	name, icon, color string
	groupID, windowID string
	worktree          string
	agentState        AgentState
	agentClient       string
	last              Terminal // what watchers last saw
	// groupByAgent and nameByAgent are true when an agent, not the
	// human, set the tab's group or name: such a group never widens a
	// grant's reach, and such a name is marked on permission sheets.
	groupByAgent, nameByAgent bool
	// openedBy is the tab whose agent this one was opened for.
	openedBy string
	// project is, for a sandboxed tab, the project of the directory it
	// was opened in (see projectOf).
	project string
	// keep is the command the human marked to re-run when the session is
	// restored (persist.go); nil when none.
	keep *KeptCommand
}

type groupEntry struct {
	id, name, color, windowID string
}

type windowEntry struct {
	id, name string
	tabs     []string // tab ids in order
	focused  string
}

// New makes a workspace with one window, "w1".
func New(opts Options) (*Workspace, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Spawner == nil {
		opts.Spawner = plainSpawner{}
	}
	w := &Workspace{
		opts:     opts,
		ports:    ports.NewTracker(procfsDefault),
		tabDir:   opts.Layout.TabStateDir(),
		tabs:     map[string]*tabEntry{},
		groups:   map[string]*groupEntry{},
		nextID:   map[byte]int{},
		watchers: map[*Watcher]struct{}{},
		stopPoll: make(chan struct{}),
		pollDone: make(chan struct{}),
		saveNow:  make(chan struct{}, 1),
		saveDone: make(chan struct{}),
		persist:  newPersister(),

		landlockABI: sandbox.ABI(),
	}
	w.config.Store(&opts.Config)
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	for _, dir := range []string{opts.Layout.Runtime, w.tabDir, opts.Layout.ShellDir()} {
		if err := paths.EnsurePrivateDir(dir); err != nil {
			return nil, err
		}
	}
	w.windows = append(w.windows, &windowEntry{id: w.newID('w'), name: "main"})
	if opts.Holder != nil {
		if opts.RingSize == 0 {
			w.opts.RingSize = holder.DefaultRingSize
		}
		if err := w.restore(); err != nil {
			return nil, err
		}
		go w.saveLoop()
		go w.watchHolder()
		w.requestSave()
	} else {
		close(w.saveDone)
	}
	go w.pollLoop(opts.PollInterval)
	go w.persistLoop()
	return w, nil
}

func (w *Workspace) newID(prefix byte) string {
	w.nextID[prefix]++
	return string(prefix) + strconv.Itoa(w.nextID[prefix])
}

// CreateSpec describes a new tab.
type CreateSpec struct {
	Directory string
	Worktree  string
	GroupID   string
	Agent     string
	Name      string
	WindowID  string
	Command   []string // the human CLI only: run this instead of the shell
	// ByAgent is true when an agent asked for the tab (through the
	// gateway or from inside Phantom): its group and name are the agent's.
	ByAgent bool
	// Sandbox runs the tab sandboxed (terminald/sandbox); a tab with an
	// Agent always is.
	Sandbox    bool
	Cols, Rows int
	// Within, when set, is the sandbox of the agent the tab is opened
	// for: the tab may write no more than it (sandbox.Rules.Within).
	Within *sandbox.Rules
	// EditorSocket, for editord's tabs only, is where the tab's editor
	// listens; a sandboxed one gets its directory (see editorDir).
	EditorSocket string
	// AgentClient is the client name of the agent the tab is opened for,
	// as its own tab records it: the new tab is that agent's too.
	AgentClient string
	// OpenedBy is the tab of the agent the tab is opened for; "" when the
	// human opens it.
	OpenedBy string
	// id, set only by a session restored from disk (persist.go), is the
	// id the tab had.
	id string
}

// Create opens a new tab.
func (w *Workspace) Create(spec CreateSpec) (Terminal, error) {
	if spec.Agent != "" && len(spec.Command) > 0 {
		return Terminal{}, invalid("agent", "give an agent or a command, not both")
	}
	dir := spec.Directory
	if spec.Worktree != "" {
		if dir != "" {
			return Terminal{}, invalid("worktree", "give a directory or a worktree, not both")
		}
		dir = spec.Worktree
	}
	if dir == "" {
		dir = envValue(w.opts.Env, "HOME")
	}
	if err := checkDir(dir); err != nil {
		return Terminal{}, err
	}
	if spec.Cols == 0 {
		spec.Cols = DefaultCols
	}
	if spec.Rows == 0 {
		spec.Rows = DefaultRows
	}

	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return Terminal{}, fmt.Errorf("terminald is shutting down: %w", errdefs.ErrUnavailable)
	}
	if len(w.tabs) >= MaxTabs {
		w.mu.Unlock()
		return Terminal{}, fmt.Errorf("%d tabs are open, the most allowed: %w", MaxTabs, errdefs.ErrResourceExhausted)
	}
	win, err := w.windowLocked(spec.WindowID)
	if err != nil {
		w.mu.Unlock()
		return Terminal{}, err
	}
	if spec.GroupID != "" {
		g, ok := w.groups[spec.GroupID]
		if !ok {
			w.mu.Unlock()
			return Terminal{}, notFound("group", spec.GroupID)
		}
		if spec.WindowID == "" {
			win, _ = w.windowLocked(g.windowID)
		} else if g.windowID != win.id {
			w.mu.Unlock()
			return Terminal{}, invalid("group_id", fmt.Sprintf("group %s is in window %s, not %s", g.id, g.windowID, win.id))
		}
	}
	id := spec.id
	if _, taken := w.tabs[id]; id == "" || taken {
		id = w.newID('t')
	}
	spec.WindowID = win.id
	w.mu.Unlock()

	ts, err := w.tabSpec(id, dir, spec)
	if err != nil {
		return Terminal{}, err
	}
	t, err := startTab(ts, w.tabChanged)
	if err != nil {
		return Terminal{}, err
	}
	if err := tabstate.Write(tabstate.Path(w.tabDir, id), tabstate.State{
		Version: tabstate.Version, TabID: id, WindowID: win.id, PTY: t.ptsName, TTYNr: t.ttyNr,
		Session: t.leaderPID, LeaderPID: t.leaderPID, LeaderStart: t.leaderStart, TerminaldPID: os.Getpid(),
	}); err != nil {
		t.close()
		return Terminal{}, err
	}

	e := &tabEntry{tab: t, name: spec.Name, groupID: spec.GroupID, windowID: win.id, worktree: spec.Worktree,
		groupByAgent: spec.ByAgent && spec.GroupID != "", nameByAgent: spec.ByAgent && spec.Name != "",
		agentClient: spec.AgentClient, openedBy: spec.OpenedBy, project: project.Of(dir)}
	w.mu.Lock()
	if opener, ok := w.tabs[spec.OpenedBy]; ok {
		// The agent's own project, not the one of the directory it chose.
		e.project = opener.projectOf(opener.snapshot())
	} else if spec.OpenedBy != "" {
		e.project = "(opened for tab " + spec.OpenedBy + ", which is gone)"
	}
	w.tabs[id] = e
	win.tabs = append(win.tabs, id)
	if win.focused == "" {
		win.focused = id
	}
	info := w.infoLocked(e)
	e.last = info
	w.mu.Unlock()
	w.requestSave()
	w.publish(Event{Kind: EventCreated, Terminal: info})
	return info, nil
}

// tabSpec works out the program, environment and size of a new tab.
func (w *Workspace) tabSpec(id, dir string, spec CreateSpec) (tabSpec, error) {
	env := tabEnv(w.opts.Env, map[string]string{
		"TERM":               "xterm-256color",
		"COLORTERM":          "truecolor",
		"TERM_PROGRAM":       "phantom",
		"PHANTOM_TAB_ID":     id,
		"PHANTOM_TAB_STATE":  tabstate.Path(w.tabDir, id),
		"PHANTOM_MCP_SOCKET": w.opts.Layout.MCPSocket,
		"PWD":                dir,
	})
	cfg := w.Config() // one snapshot: config.json may be reloaded meanwhile
	ts := tabSpec{id: id, dir: dir, env: env, cols: spec.Cols, rows: spec.Rows, scrollback: cfg.ScrollbackLines,
		spawner: w.opts.Spawner, holder: w.opts.Holder, ringSize: w.opts.RingSize}
	switch {
	case len(spec.Command) > 0:
		ts.argv = spec.Command
		ts.shell = isInteractiveShell(spec.Command)
	case spec.Agent != "":
		argv, ok := cfg.Agents[spec.Agent]
		if !ok {
			return tabSpec{}, invalid("agent", fmt.Sprintf("unknown agent %q; configured agents: %s",
				spec.Agent, strings.Join(cfg.AgentNames(), ", ")))
		}
		ts.argv = argv
	default:
		sh, err := shell.Prepare(cfg.Shell, w.opts.Layout.ShellDir(), env)
		if err != nil {
			return tabSpec{}, fmt.Errorf("prepare shell %s: %w", cfg.Shell, err)
		}
		ts.argv = append([]string{sh.Path}, sh.Args...)
		ts.env = tabEnv(env, envMap(sh.Env))
		ts.integrated = sh.Kind != shell.Other
		ts.shell = true
	}
	if spec.Sandbox || spec.Agent != "" {
		if err := w.sandbox(&ts, spec); err != nil {
			return tabSpec{}, err
		}
	}
	if spec.EditorSocket != "" {
		if err := w.editorDir(&ts, spec.WindowID, spec.EditorSocket); err != nil {
			return tabSpec{}, err
		}
	}
	return ts, nil
}

// sandbox makes ts start its program through the sandbox launcher, with
// the rules of a tab in ts.dir running spec's agent, inside the walls of a
// private mount namespace where the machine allows one. The tab's first
// line says what holds (sandbox.Describe). On a kernel whose Landlock
// cannot sandbox, the tab still starts, but unsandboxed, with a warning as
// its first line (and Terminal.Sandboxed false): refusing would leave such
// a machine without agent tabs, and the warning keeps the downgrade from
// being silent; the same goes for a machine without user namespaces,
// whose tabs lack the walls.
//
// An agent with an agent home (config.DefaultAgentHomes) is pointed at it
// first, sandboxed or not, so that it keeps one state in every agent tab.
func (w *Workspace) sandbox(ts *tabSpec, spec CreateSpec) error {
	agent := spec.Agent
	if agent == "" && len(spec.Command) > 0 {
		agent = w.agentOf(spec.Command[0])
	}
	getenv := func(k string) string { return envValue(w.opts.Env, k) }
	ah, err := prepareAgentHome(agent, getenv)
	if err != nil {
		return fmt.Errorf("tab %s: %w: %w", ts.id, err, errdefs.ErrFailedPrecondition)
	}
	ts.env = tabEnv(ts.env, ah.env)
	ts.notice = ah.notice
	if ah.notice != "" {
		w.opts.Logger.Warn("agent tab shares a running agent server", "tab", ts.id, "agent", agent)
	}
	if w.landlockABI < sandbox.MinABI {
		why := sandbox.Unavailable(w.landlockABI)
		ts.notice = joinLines(ts.notice, "phantom: warning: "+why+": this tab runs NOT sandboxed")
		w.opts.Logger.Warn("sandboxed tab runs unsandboxed", "tab", ts.id, "reason", why)
		return nil
	}
	if w.opts.SandboxLauncher == "" {
		return fmt.Errorf("tab %s must run sandboxed, but this terminald has no sandbox launcher (Options.SandboxLauncher): %w", ts.id, errdefs.ErrFailedPrecondition)
	}
	w.wallsOnce.Do(func() {
		if w.wallsErr = sandbox.ProbeWalls(w.opts.SandboxLauncher); w.wallsErr != nil {
			w.opts.Logger.Warn("sandboxed tabs get no private mount namespace", "reason", w.wallsErr)
		}
	})
	line, _ := sandbox.Describe(w.landlockABI, w.wallsErr)
	ts.notice = joinLines(ts.notice, "phantom: sandbox: "+line)
	cfg := w.Config()
	s := sandbox.Spec{
		Dir:      ts.dir,
		Home:     getenv("HOME"),
		Paths:    append(cfg.Sandbox.PathsFor(agent), ah.paths...),
		Layout:   w.opts.Layout,
		Launcher: w.opts.SandboxLauncher,
		TempDirs: sandbox.TempDirs(getenv),
		Getenv:   getenv,
		Isolate:  w.wallsErr == nil,
		Tmp:      filepath.Join(w.opts.Layout.Runtime, "tmp", ts.id),
		Sockets:  cfg.Sandbox.Sockets,
	}
	if len(ts.argv) > 0 {
		if p, err := exec.LookPath(ts.argv[0]); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				s.Programs = []string{abs}
			}
		}
	}
	if err := sandbox.EnsureDirs(s); err != nil {
		return fmt.Errorf("tab %s: %w: %w", ts.id, err, errdefs.ErrFailedPrecondition)
	}
	rules, err := sandbox.Compute(s)
	if err != nil {
		return fmt.Errorf("tab %s: %w: %w", ts.id, err, errdefs.ErrFailedPrecondition)
	}
	if spec.Within != nil {
		rules = rules.Within(*spec.Within)
	}
	ts.launcher, ts.rules = w.opts.SandboxLauncher, rules
	return nil
}

// agentOf names the configured agent whose program is program (by base
// name), or "": `phantom new --sandbox -- claude` gets claude's paths.
func (w *Workspace) agentOf(program string) string {
	cfg := w.Config()
	for _, name := range cfg.AgentNames() {
		if argv := cfg.Agents[name]; len(argv) > 0 && filepath.Base(argv[0]) == filepath.Base(program) {
			return name
		}
	}
	return ""
}

// isInteractiveShell reports whether a command line starts an interactive
// shell (`phantom new -- zsh`), which can sit at a prompt, though without
// integration. `sh -c CMD` runs a script and never prompts.
func isInteractiveShell(argv []string) bool {
	if slices.ContainsFunc(argv[1:], func(a string) bool {
		return strings.HasPrefix(a, "-") && strings.Contains(a, "c") && !strings.HasPrefix(a, "--")
	}) {
		return false
	}
	if shell.Detect(argv[0]) != shell.Other {
		return true
	}
	switch filepath.Base(argv[0]) {
	case "sh", "dash", "ksh", "mksh", "tcsh", "csh", "nu", "elvish", "xonsh":
		return true
	}
	return false
}

func checkDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return invalid("directory", fmt.Sprintf("%q is not an absolute path", dir))
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return invalid("directory", fmt.Sprintf("%q does not exist", dir))
	case errors.Is(err, fs.ErrPermission):
		return invalid("directory", fmt.Sprintf("%q cannot be reached: permission denied", dir))
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already in the message
		}
		return invalid("directory", fmt.Sprintf("%q cannot be used: %v", dir, err))
	}
	if !fi.IsDir() {
		return invalid("directory", fmt.Sprintf("%q is not a directory", dir))
	}
	return nil
}

// windowLocked returns the window id names, or the first window for "".
func (w *Workspace) windowLocked(id string) (*windowEntry, error) {
	if id == "" {
		return w.windows[0], nil
	}
	for _, win := range w.windows {
		if win.id == id {
			return win, nil
		}
	}
	return nil, notFound("window", id)
}

func (w *Workspace) tabLocked(id string) (*tabEntry, error) {
	e, ok := w.tabs[id]
	if !ok {
		return nil, notFound("tab", id)
	}
	return e, nil
}

// tabChanged is every tab's notify callback: output or exit may have
// altered something watchers see.
func (w *Workspace) tabChanged(t *tab) {
	t.refresh()
	if t.bellOut.Swap(false) {
		// Even before the tab is listed: its first output may ring.
		w.ring(t.id)
	}
	w.mu.Lock()
	e, ok := w.tabs[t.id]
	if !ok {
		w.mu.Unlock()
		return
	}
	info := w.infoLocked(e)
	info.DevServerPorts = e.last.DevServerPorts
	ev, changed := e.observe(info)
	w.mu.Unlock()
	if changed {
		w.publish(ev)
	}
}

// observe records info as what watchers last saw of the tab and says which
// event, if any, the difference makes. Called with w.mu held.
func (e *tabEntry) observe(info Terminal) (Event, bool) {
	prev := e.last
	e.last = info
	switch {
	case info.Idle != prev.Idle:
		return Event{Kind: EventIdleChanged, Terminal: info}, true
	case !info.equal(prev):
		return Event{Kind: EventUpdated, Terminal: info}, true
	}
	return Event{}, false
}

// pollLoop notices what no output reports: a foreground program that
// started or ended without shell integration, ports opened or closed.
func (w *Workspace) pollLoop(every time.Duration) {
	defer close(w.pollDone)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-w.stopPoll:
			return
		case <-tick.C:
		}
		w.refreshAll()
		w.lookPorts()
		infos := w.List()
		var events []Event
		w.mu.Lock()
		for _, info := range infos {
			if e, ok := w.tabs[info.ID]; ok {
				if ev, changed := e.observe(info); changed {
					events = append(events, ev)
				}
			}
		}
		w.mu.Unlock()
		for _, ev := range events {
			w.publish(ev)
		}
	}
}

// Close closes a tab: its processes are hung up, its tab-state file removed.
func (w *Workspace) Close(id string) error {
	w.mu.Lock()
	if w.detached {
		// The tabs belong to the next terminald now.
		w.mu.Unlock()
		return fmt.Errorf("terminald is handing its tabs over: %w", errdefs.ErrUnavailable)
	}
	e, err := w.tabLocked(id)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	delete(w.tabs, id)
	win, _ := w.windowLocked(e.windowID)
	i := slices.Index(win.tabs, id)
	win.tabs = slices.Delete(win.tabs, i, i+1)
	if win.focused == id {
		win.focused = w.focusAfterCloseLocked(win, id, i)
	}
	info := w.infoLocked(e)
	w.mu.Unlock()
	w.hangUp(e, info)
	return nil
}

// hangUp ends a tab already taken out of the workspace (info is how it
// was just before): its processes are hung up, its tab-state file
// removed, and watchers learn it closed.
func (w *Workspace) hangUp(e *tabEntry, info Terminal) {
	e.close()
	os.Remove(tabstate.Path(w.tabDir, e.id))
	w.requestSave()
	info.Idle = false
	info.Exited, info.ExitCode = e.exitStatus()
	w.publish(Event{Kind: EventClosed, Terminal: info})
}

// Shutdown closes every tab (hanging up every shell) and every watcher.
// Every call returns only once all of that is done, so a second caller
// never races ahead of hang-ups still in progress.
func (w *Workspace) Shutdown() {
	w.shutdownOnce.Do(w.shutdown)
}

func (w *Workspace) shutdown() {
	w.persistFinal() // before the tabs close: the session as it was
	w.mu.Lock()
	close(w.stopPoll)
	w.closing = true
	ids := make([]string, 0, len(w.tabs))
	for id := range w.tabs {
		ids = append(ids, id)
	}
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { _ = w.Close(id) })
	}
	wg.Wait()
	<-w.pollDone
	<-w.saveDone
	w.mu.Lock()
	for wt := range w.watchers {
		wt.end(nil)
	}
	w.mu.Unlock()
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func envMap(kvs []string) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// tabEnv is base with set applied; LINES and COLUMNS are dropped because
// they would pin programs to the wrong size after a resize.
func tabEnv(base []string, set map[string]string) []string {
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || k == "LINES" || k == "COLUMNS" {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// Detach leaves every tab to the holder for the next terminald (phantom
// upgrade): reading stops, so that no output is read and then lost, the
// state is handed over, and watchers end. Nothing is hung up. After
// Detach, Shutdown does nothing; the process should exit.
func (w *Workspace) Detach() error {
	if w.opts.Holder == nil {
		return fmt.Errorf("terminald runs without a holder: its tabs cannot outlive it: %w", errdefs.ErrFailedPrecondition)
	}
	var err error
	w.shutdownOnce.Do(func() { err = w.detach() })
	return err
}

func (w *Workspace) detach() error {
	w.persistFinal()
	w.mu.Lock()
	w.closing, w.detached = true, true
	close(w.stopPoll)
	tabs := make([]*tabEntry, 0, len(w.tabs))
	for _, e := range w.tabs {
		tabs = append(tabs, e)
	}
	w.mu.Unlock()
	for _, e := range tabs {
		// A read deadline in the past ends readLoop without closing the
		// master: whatever it already read is in the ring.
		_ = e.pty.SetReadDeadline(time.Unix(1, 0))
	}
	for _, e := range tabs {
		<-e.readDone
	}
	<-w.pollDone
	<-w.saveDone
	err := w.opts.Holder.SaveState(w.snapshotState())
	w.mu.Lock()
	for wt := range w.watchers {
		// As at shutdown: a watcher that ends with an error is started
		// again by attach sessions, which would spin until the server
		// stops.
		wt.end(nil)
	}
	w.mu.Unlock()
	return err
}

// Detached reports whether Detach left the tabs to the holder.
func (w *Workspace) Detached() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.detached
}

// watchHolder hangs up and kills every tab when the holder is lost. The
// tabs' processes were the holder's children: re-parented to init they
// would run on as processes outside Phantom, an agent's with the human's
// standing. Killing each tab's session and foreground group is what can
// be done; a process that left both was already re-parented.
func (w *Workspace) watchHolder() {
	select {
	case <-w.opts.Holder.Lost():
	case <-w.stopPoll:
		return
	}
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return
	}
	var groups []int
	for _, e := range w.tabs {
		groups = append(groups, e.leaderPID, e.foreground())
	}
	w.mu.Unlock()
	for _, g := range groups {
		if g > 0 {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
	}
	err := w.opts.Holder.Err()
	w.opts.Logger.Error("lost the holder: every tab was killed", "err", err)
	if w.opts.OnHolderLost != nil {
		w.opts.OnHolderLost(err)
	}
}

// Holder is the holder the workspace's tabs run under, or nil.
func (w *Workspace) Holder() *holder.Client { return w.opts.Holder }

// Layout is the instance's paths, as Options gave them.
func (w *Workspace) Layout() paths.Layout { return w.opts.Layout }
