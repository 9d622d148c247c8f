package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/project"
	"github.com/phantom-dev/phantom/terminald/holder"
	"github.com/phantom-dev/phantom/terminald/pty"
	"github.com/phantom-dev/phantom/terminald/sandbox"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// readBufSize is the PTY read size. The kernel hands out at most a few KiB
// per read, but a larger buffer lets a burst be taken in one syscall.
const readBufSize = 32 << 10

// integrationGrace is how long a shell with integration may take to report
// its first prompt before idleness falls back to the foreground-group test
// (a broken rc file may keep the marks from ever coming).
const integrationGrace = 5 * time.Second

// exitDrainWait bounds how long a program's exit is held back while its
// last output is still being read and rendered.
const exitDrainWait = time.Second

// hangupGrace is how long a closed tab's processes get to exit after SIGHUP
// before they are killed.
const hangupGrace = 2 * time.Second

// tabSpec is how to start a tab's program.
type tabSpec struct {
	id         string
	argv       []string
	env        []string
	dir        string
	cols, rows int
	scrollback int
	integrated bool // the shell reports OSC 133 marks
	shell      bool // the program is a shell: it can sit at a prompt
	spawner    Spawner
	// holder, when set, starts the program and keeps the PTY and the
	// output ring across terminald restarts (terminald/holder); spawner
	// is then unused.
	holder   *holder.Client
	ringSize int
	// launcher, when set, is the phantom binary that starts argv confined
	// by rules (terminald/sandbox): the tab is sandboxed.
	launcher string
	rules    sandbox.Rules
	// notice is a line shown in the tab before its program's output.
	notice string
}

// tab is one terminal: a PTY, the program on it and the screen its output
// renders into. Its mutex guards the screen and the runtime state below; the
// workspace's mutex guards the tab's place (group, window, name).
type tab struct {
	id   string
	proc process
	pty  *os.File
	// ring, with a holder, keeps the recent raw output for the next
	// terminald (written by readLoop); hc is that holder.
	ring        *holder.Ring
	hc          *holder.Client
	ptsName     string
	leaderPID   int
	leaderStart uint64
	ttyNr       uint64
	integrated  bool
	shell       bool
	sandboxed   bool
	// rules confine the tab's program when sandboxed; what a daemon
	// starts for a call from the tab gets them too (Workspace.SandboxOf).
	rules   sandbox.Rules
	started time.Time

	// notify is called, without t.mu held, after output changed something a
	// watcher cares about.
	notify func(*tab)

	mu        sync.Mutex
	scr       *screen.Screen
	atPrompt  bool // between OSC 133 A/B and C
	sawPrompt bool // the shell has reported a prompt at least once
	// drawing is true from a prompt's start (A) to its end (B): the shell
	// is still drawing it (prompt_seen.go); drawingSince is when it began.
	drawing      bool
	drawingSince time.Time
	// bellRang is set by a BEL in the chunk being rendered; bellGate
	// rate-limits what is reported (bell.go). bellOut is a bell reported
	// to the workspace's callback, which passes it on.
	bellRang bool
	bellGate bellGate
	bellOut  atomic.Bool
	// drawn is the end of the prompt the shell last finished drawing (B),
	// while no command ran since (C) and no clear erased it; haveDrawn
	// says there is one. Text before it is not new output (prompt_seen.go).
	drawn     screen.Pos
	haveDrawn bool
	pending   bool // output reported something watchers may care about
	exited    bool
	exitCode  int
	closed    bool
	views     tabViews   // clients viewing the screen (view.go)
	cmds      commandLog // the shell's commands (commands.go)

	// lastMu guards what the tab last showed while its program ran.
	lastMu          sync.Mutex
	lastFg, lastDir string
	// listen caches the foreground program's --listen address, read when
	// the foreground process or its program (an exec keeps the pid)
	// changed.
	listenPID  int
	listenComm string
	listen     string
	// worktreeOf caches the git working tree of lastDir.
	worktreeOf, worktree string
	// projectOf is the leader's working directory as the kernel last had
	// it; project is the project (internal/project) of projectAt, its
	// directory when it last waited at its prompt (see computeStatus).
	projectOf, projectAt, project string
	// snap is the status as last computed, which listing tabs copies
	// (snapshot_tab.go).
	snap tabSnap

	// inLock, a one-slot semaphore, is held by every writer of typed
	// input (typeKeys, runCommand) while it looks and queues: the check
	// that the command line is empty and the line typed are one step
	// (prompt.go). Taken before mu. keys follows what was typed since the
	// last Enter (linekeys.go), guarded by inLock.
	inLock chan struct{}
	keys   lineKeys
	// lastOutput is when output was last rendered (UnixNano).
	lastOutput atomic.Int64

	input    chan []byte   // bytes for the PTY, written by writeLoop
	readDone chan struct{} // closed when readLoop ends
	waitDone chan struct{} // closed when the program has been reaped
	stop     chan struct{} // closed by close to end writeLoop
}

// startTab starts spec's program on a new PTY.
func startTab(spec tabSpec, notify func(*tab)) (*tab, error) {
	if len(spec.argv) == 0 {
		return nil, fmt.Errorf("start tab %s: empty command: %w", spec.id, errdefs.ErrInvalidArgument)
	}
	path, err := exec.LookPath(spec.argv[0])
	if err != nil {
		return nil, fmt.Errorf("start tab %s: program %q not found: %w", spec.id, spec.argv[0], errdefs.ErrFailedPrecondition)
	}
	cmd := exec.Command(path, spec.argv[1:]...)
	cmd.Args[0] = spec.argv[0]
	if spec.launcher != "" {
		// The launcher confines itself and then execs the program, so the
		// process started here stays the tab's leader.
		argv := spec.rules.Argv(spec.launcher, spec.argv)
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.Env = spec.env
	cmd.Dir = spec.dir
	// A new session with the PTY as its controlling terminal, exactly as a
	// terminal emulator starts a shell: job control works, and hanging up
	// the PTY reaches every process of the tab.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	ptmx, pts, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("start tab %s: %w", spec.id, err)
	}
	defer pts.Close() // the child has its own copies
	if err := pty.SetSize(ptmx, spec.cols, spec.rows); err != nil {
		ptmx.Close()
		return nil, fmt.Errorf("start tab %s: %w", spec.id, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	var proc process
	var ring *holder.Ring
	if spec.holder != nil {
		// The holder forks the program (setsid, TIOCSCTTY on the slave)
		// and keeps copies of the master and the ring: the tab outlives
		// this terminald.
		if ring, err = holder.NewRing(spec.id, spec.ringSize); err != nil {
			ptmx.Close()
			return nil, fmt.Errorf("start tab %s: %w", spec.id, err)
		}
		path := cmd.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(cmd.Dir, path) // as exec.Cmd resolves it
		}
		pid, start, err := spec.holder.Spawn(holder.SpawnRequest{Tab: spec.id, Path: path, Argv: cmd.Args, Env: cmd.Env, Dir: cmd.Dir}, pts, ptmx, ring)
		if err != nil {
			ring.Close()
			ptmx.Close()
			return nil, fmt.Errorf("start tab %s: %s: %w", spec.id, spec.argv[0], err)
		}
		proc = heldProc{leader: pid, start: start, tab: spec.id, hc: spec.holder}
	} else {
		if err := spec.spawner.Start(cmd); err != nil {
			ptmx.Close()
			return nil, fmt.Errorf("start tab %s: %s: %w", spec.id, spec.argv[0], err)
		}
		proc = execProc{cmd: cmd, spawner: spec.spawner}
	}
	t := &tab{
		id:         spec.id,
		proc:       proc,
		pty:        ptmx,
		ring:       ring,
		hc:         spec.holder,
		ptsName:    pts.Name(),
		leaderPID:  proc.pid(),
		integrated: spec.integrated,
		shell:      spec.shell,
		sandboxed:  spec.launcher != "",
		rules:      spec.rules,
		started:    time.Now(),
		lastDir:    spec.dir,
		lastFg:     filepath.Base(spec.argv[0]),
		notify:     notify,
		inLock:     make(chan struct{}, 1),
		input:      make(chan []byte, 64),
		readDone:   make(chan struct{}),
		waitDone:   make(chan struct{}),
		stop:       make(chan struct{}),
	}
	if st, err := procfs.ReadStat(t.leaderPID); err == nil {
		t.leaderStart = st.StartTime
		t.ttyNr = uint64(st.TTYNr)
	}
	if hp, ok := proc.(heldProc); ok && hp.start != 0 {
		// Read by the holder before it could reap the program: right even
		// for a program that already exited.
		t.leaderStart = hp.start
	}
	t.scr = screen.New(screen.Options{
		Cols:       spec.cols,
		Rows:       spec.rows,
		Scrollback: spec.scrollback,
		Reply:      t.reply,
		OnEvent:    t.onEvent,
	})
	if spec.notice != "" {
		t.scr.Write([]byte(spec.notice + "\r\n"))
	}
	go t.readLoop()
	go t.writeLoop()
	go t.waitLoop()
	return t, nil
}

// readLoop reads the PTY's output until the last process holding the
// terminal closes it, and renders each chunk into the screen as it comes,
// in the same goroutine. A separate render goroutine, reading ahead while
// the previous chunk rendered, cost more than it saved: a channel
// hand-off and a goroutine wake-up per chunk, and a PTY read returns at
// most about 4 KiB. With cat of 200 MB of coloured text into a tab,
// terminald took 2.3 CPU seconds that way and 1.5 this way, in about the
// same time: rendering a chunk takes less than cat takes to write the
// next one, which the kernel buffers meanwhile.
func (t *tab) readLoop() {
	defer close(t.readDone)
	r, err := pty.NewReader(t.pty)
	if err != nil {
		return // the master is already closed
	}
	buf := make([]byte, readBufSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if t.ring != nil {
				t.ring.Write(buf[:n]) // before rendering: a crash loses none of it
			}
			t.render(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// render renders one chunk of output into the screen, then tells viewers
// and watchers.
func (t *tab) render(chunk []byte) {
	t.mu.Lock()
	alt := t.scr.AltScreen()
	t.scr.Write(chunk)
	// Entering or leaving the alternate screen changes idleness
	// without integration: an event like the prompt marks.
	changed := t.pending || t.scr.AltScreen() != alt
	t.pending = false
	now := time.Now()
	if t.takeBellLocked(now) {
		t.bellOut.Store(true)
		changed = true // the callback passes it on (bell.go)
	}
	t.lastOutput.Store(now.UnixNano())
	t.mu.Unlock()
	t.views.signal()
	t.rendered(changed)
}

// writeLoop sends input and terminal-query answers to the program. It runs
// apart from readLoop so that a program that does not read its input can
// never stall rendering of its output.
func (t *tab) writeLoop() {
	for {
		select {
		case b := <-t.input:
			if _, err := t.pty.Write(b); err != nil {
				return
			}
		case <-t.stop:
			return
		}
	}
}

// waitLoop reaps the program and records how it ended.
func (t *tab) waitLoop() {
	code := t.proc.wait()
	// What the program wrote before it exited may still sit in the PTY or
	// wait to be rendered: let the read loop finish first, so an exited tab
	// shows its last output. Background jobs may hold the terminal open for
	// ever, so the wait is bounded.
	select {
	case <-t.readDone:
	case <-time.After(exitDrainWait):
	}
	t.mu.Lock()
	t.exited, t.exitCode = true, code
	t.mu.Unlock()
	close(t.waitDone)
	t.notify(t)
}

// reply queues a terminal-query answer. It is called from inside
// screen.Write, with t.mu held, so it must not block: when the program does
// not read its input and the queue is full, the answer is dropped, as a
// real terminal's would be lost in a full input buffer.
func (t *tab) reply(b []byte) {
	select {
	case t.input <- append([]byte(nil), b...):
	default:
	}
}

// onEvent records what the screen reported; called with t.mu held.
func (t *tab) onEvent(ev screen.Event) {
	t.cmds.onEvent(t.scr, ev)
	t.promptEvent(ev)
	switch ev.Kind {
	case screen.EventPromptStart, screen.EventCommandStart:
		t.sawPrompt, t.atPrompt = true, true
	case screen.EventCommandExecuted:
		t.atPrompt = false
	case screen.EventCommandFinished, screen.EventTitle, screen.EventCwd:
	case screen.EventBell:
		t.bellLocked()
		return
	default:
		return
	}
	t.pending = true
}

// foreground returns the PTY's foreground process group, or 0.
func (t *tab) foreground() int {
	pgrp, err := pty.Foreground(t.pty)
	if err != nil {
		return 0
	}
	return pgrp
}

// idleLocked reports whether the tab can take a command: its shell sits at a
// prompt. A tab running anything but a shell (an agent, a build) is never
// idle: typing into it would answer that program. With shell integration that is what OSC 133 said; without, the
// foreground group is the shell's own and no full-screen program holds the
// alternate screen.
func (t *tab) idleLocked() bool {
	if t.exited || t.closed || !t.shell {
		return false
	}
	fg := t.foreground()
	switch {
	case t.integrated && t.sawPrompt:
		return t.atPrompt && (fg == 0 || t.leaderGroup(fg))
	case t.integrated && time.Since(t.started) < integrationGrace:
		// The shell has not drawn its first prompt yet: typing now would
		// race its start-up files.
		return false
	}
	return t.leaderGroup(fg) && !t.scr.AltScreen()
}

// leaderGroup reports whether the process group fg is the one the tab's
// program started in: the leader's, or — in a sandboxed tab, whose leader
// is the sandbox launcher watching the program in a group of its own —
// the group of the leader's child.
func (t *tab) leaderGroup(fg int) bool {
	if fg == t.leaderPID {
		return true
	}
	if !t.sandboxed || fg <= 0 {
		return false
	}
	st, err := procfs.ReadStat(fg)
	return err == nil && st.PPID == t.leaderPID && st.PGRP == fg
}

// status is a tab's runtime state at one moment.
type status struct {
	title     string
	directory string
	worktree  string
	// project is the project of the leader's working directory as the
	// kernel has it (never OSC 7, which the tab's programs write).
	project  string
	fgName   string
	fgPID    int
	listen   string // the foreground program's --listen address
	idle     bool
	exited   bool
	exitCode int
	cols     int
	rows     int
	// kernelDir is the leader's working directory as the kernel last
	// had it, which project is of.
	kernelDir string
}

// computeStatus reads the tab's status from its screen, its PTY and
// /proc. Callers go through refresh, which stores the result.
func (t *tab) computeStatus() status {
	t.mu.Lock()
	s := status{
		title:    t.scr.Title(),
		idle:     t.idleLocked(),
		exited:   t.exited,
		exitCode: t.exitCode,
	}
	s.cols, s.rows = t.scr.Size()
	cwd := t.scr.Cwd()
	// Only an interactive shell waiting at its prompt moves the project:
	// its directory changes there by a command someone entered (cd), never
	// by a program that runs in the tab; a leader that is no such shell
	// (sh -c 'cd A; exec agent') keeps the project it was opened in.
	atPrompt := s.idle && t.integrated && t.sawPrompt
	t.mu.Unlock()
	if s.exited {
		// Keep showing where the program was and what it was.
		t.lastMu.Lock()
		defer t.lastMu.Unlock()
		s.fgName, s.directory, s.worktree, s.project, s.kernelDir = t.lastFg, t.lastDir, t.worktree, t.project, t.projectOf
		if s.directory == "" {
			s.directory = cwd
		}
		return s
	}
	s.fgPID = t.foreground()
	if s.fgPID > 0 {
		// Read each time even for the same pid: a shell forks, and the
		// child execs the program moments later under the same pid.
		s.fgName = comm(s.fgPID)
	}
	procCwd, _ := os.Readlink("/proc/" + strconv.Itoa(t.leaderPID) + "/cwd")
	if cwd == "" {
		cwd = procCwd
	}
	s.directory = cwd
	t.lastMu.Lock()
	if s.fgName != "" {
		t.lastFg = s.fgName
	}
	if cwd != "" {
		t.lastDir = cwd
	}
	if t.worktreeOf != cwd {
		t.worktreeOf, t.worktree = cwd, project.Worktree(cwd)
	}
	s.worktree = t.worktree
	if procCwd != "" {
		t.projectOf = procCwd
	}
	if procCwd != "" && atPrompt && t.projectAt != procCwd {
		t.projectAt, t.project = procCwd, project.Of(procCwd)
	}
	s.project, s.kernelDir = t.project, t.projectOf
	if t.listenPID != s.fgPID || t.listenComm != s.fgName {
		listen, known := listenArg(s.fgPID)
		t.listen = listen
		if known {
			t.listenPID, t.listenComm = s.fgPID, s.fgName
		}
	}
	s.listen = t.listen
	t.lastMu.Unlock()
	return s
}

// comm is a process's name, or "" if it is gone.
func comm(pid int) string {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return ""
	}
	return st.Comm
}

// lastLines returns the last n rendered lines.
func (t *tab) lastLines(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.scr.LastLines(n)
}

// runCommand types line into the tab and presses Enter, if the tab is idle
// and its command line empty (prompt.go). The look and the typing are one
// step under the input lock: no key typed meanwhile can join the line. In
// a tab with shell integration the lock is kept until the shell shows it
// took the line as a whole command (continuation.go).
func (t *tab) runCommand(line string) error {
	if err := checkCommandLine(line); err != nil {
		return err
	}
	if !t.lockInput(inputLockWait) {
		return fmt.Errorf("tab %s: its input is not being read, or it closed: %w", t.id, errdefs.ErrFailedPrecondition)
	}
	defer t.unlockInput()
	g, err := t.typeLine(line)
	if err != nil || !g.marks {
		return err
	}
	return t.awaitAccepted(g)
}

// typeLine checks the tab and queues line and Enter, with the input lock
// held. It returns what awaitAccepted compares the marks with.
func (t *tab) typeLine(line string) (accept, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited {
		return accept{}, fmt.Errorf("tab %s: its program has exited (status %d): %w", t.id, t.exitCode, errdefs.ErrFailedPrecondition)
	}
	if !t.idleLocked() {
		what := "a program"
		if fg := t.foreground(); fg > 0 {
			what = fmt.Sprintf("%q (pid %d)", comm(fg), fg)
		}
		return accept{}, fmt.Errorf("tab %s is busy: %s is running there; wait until it is idle: %w", t.id, what, errdefs.ErrFailedPrecondition)
	}
	forget, err := t.lineViewLocked().check(t.id)
	if err != nil {
		return accept{}, err
	}
	g := t.acceptLocked()
	select {
	case t.input <- []byte(line + "\r"):
	default:
		return accept{}, fmt.Errorf("tab %s: its input is not being read: %w", t.id, errdefs.ErrFailedPrecondition)
	}
	// The command log notes what was typed (before its C mark can be
	// rendered: that needs t.mu).
	t.cmds.mu.Lock()
	t.cmds.typed = line
	t.cmds.mu.Unlock()
	if forget {
		t.keys.forget()
	}
	// Until the shell reports the command started, the tab is not idle:
	// a second run_command must not type into the first one's input.
	t.atPrompt = false
	return g, nil
}

// checkCommandLine refuses what would be more than one typed line.
func checkCommandLine(line string) error {
	for i, r := range line {
		switch {
		case r == '\n' || r == '\r':
			return invalid("command", fmt.Sprintf("contains a line break at byte %d; send one line", i))
		case r == utf8.RuneError && !strings.HasPrefix(line[i:], "\ufffd"):
			return invalid("command", fmt.Sprintf("invalid UTF-8 at byte %d", i))
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return invalid("command", fmt.Sprintf("contains control character U+%04X at byte %d", r, i))
		}
	}
	return nil
}

// resize changes the terminal size; the program gets SIGWINCH.
func (t *tab) resize(cols, rows int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := pty.SetSize(t.pty, cols, rows); err != nil {
		return fmt.Errorf("resize tab %s: %w", t.id, err)
	}
	t.scr.Resize(cols, rows)
	return nil
}

// close hangs up the tab's processes the way closing a terminal window does,
// kills what is left after hangupGrace, and waits for every goroutine of the
// tab to end.
func (t *tab) close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()

	// Closing the master is the hangup: the kernel sends SIGHUP to the
	// session leader and the foreground group, and the shell passes it on
	// to its jobs. It also ends readLoop even while background processes
	// still hold the terminal.
	fg := t.foreground()
	close(t.stop)
	if t.hc != nil {
		// The holder's copy of the master would keep the terminal up:
		// it goes first. If the holder is gone, so is its copy.
		_ = t.hc.Release(t.id)
	}
	t.pty.Close()
	<-t.readDone
	if t.ring != nil {
		t.ring.Close()
	}
	select {
	case <-t.waitDone:
	case <-time.After(hangupGrace):
		for _, g := range []int{t.leaderPID, fg} {
			if g > 0 {
				_ = syscall.Kill(-g, syscall.SIGKILL)
			}
		}
		<-t.waitDone
	}
}
