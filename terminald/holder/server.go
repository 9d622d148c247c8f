// Package holder keeps a terminal workspace's tabs alive across terminald's
// crashes and upgrades, the way systemd's file-descriptor store keeps a
// service's sockets.
//
// The holder is a small process (`phantom +holder`) that never parses
// output. It is the parent of every tab's program: terminald asks it to
// spawn one (argv, environment, directory and the PTY's slave over
// SCM_RIGHTS; the holder does setsid and TIOCSCTTY), and it is a child
// subreaper, so whatever a tab's processes fork stays its descendant. It
// keeps a copy of each tab's PTY master (so the terminal is never hung up
// while terminald is away), the memfd ring terminald appends the tab's raw
// output to (Ring), and the last workspace state blob terminald sent
// (names, groups, windows). It reaps its children and reports exits,
// including those that happened while no terminald was connected.
//
// A new terminald connects, asks for everything (restore), maps each ring
// and replays it into a fresh screen. Identity stays kernel-based: a
// process is inside Phantom when its ancestry reaches the instance's
// holder (internal/lineage), and both ends check the other by the process
// tree: the holder serves only the instance's terminald, a process outside
// Phantom; terminald uses only the instance's holder, also outside.
//
// The holder is not replaced by `phantom upgrade` (it would have to hand
// over its children, which the kernel does not allow); it is deliberately
// small so it rarely needs to be.
package holder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/reaper"
)

// Options configures a holder process.
type Options struct {
	// Socket is the path the holder listens on, in the instance's 0700
	// runtime directory.
	Socket string
	// Lock is a file the holder keeps locked while it runs, so that two
	// holders never serve one instance.
	Lock string
	// TerminaldAddr is the instance's terminald address: the holder serves
	// only the process running `phantom daemon terminald --listen` on it,
	// outside Phantom.
	TerminaldAddr string
	// Logger receives operational messages.
	Logger *slog.Logger
	// Grace is how long tabs get after a hangup at shutdown before they
	// are killed; 2 s if zero.
	Grace time.Duration
}

// ErrRunning means another holder already serves the instance.
var ErrRunning = errors.New("a holder already runs for this instance")

// held is one tab the holder keeps: guarded by server.mu.
type held struct {
	tab    string
	pid    int
	start  uint64
	master *quietFile // nil once terminald released the tab (quiet.go)
	ring   *os.File   // nil once terminald released the tab
	exited bool
	code   int
}

type server struct {
	opts Options
	log  *slog.Logger
	tree lineage.Tree
	// check vets a new connection's peer and returns its pid: verify in
	// production.
	check func(*net.UnixConn) (int, error)

	// mu guards everything below. It is held across fork and record, so
	// the reaping loop never reaps a child before it is recorded.
	mu     sync.Mutex
	tabs   map[string]*held
	byPID  map[int]*held // running programs
	state  *os.File      // the last workspace state memfd
	active *conn         // the connected terminald, or nil
	pidOf  int           // its pid

	quit chan struct{}
	once sync.Once
}

// Serve runs the holder until ctx is done, SIGTERM arrives, or terminald
// asks it to shut down; every tab is then hung up and whatever is left of
// its processes killed.
func Serve(ctx context.Context, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Second
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("holder: become a child subreaper: %w", err)
	}
	// Not dumpable: an agent of the same user must not ptrace the parent
	// of every tab or read the descriptors it holds through /proc.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("holder: make the process non-dumpable: %w", err)
	}
	_ = os.Chdir("/") // pin no directory of the user's
	// Descriptors inherited from whoever started the holder (`exec
	// 7>file; phantom up`) must not reach the tabs' programs: mark every
	// one above stderr close-on-exec. (Closing them outright could close
	// the Go runtime's own.)
	_ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	lock, err := os.OpenFile(opts.Lock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("holder: open lock %s: %w", opts.Lock, err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return ErrRunning
		}
		return fmt.Errorf("holder: lock %s: %w", opts.Lock, err)
	}
	self, err := procfs.Default.Stat(os.Getpid())
	if err != nil {
		return fmt.Errorf("holder: read own process: %w", err)
	}
	s := &server{
		opts: opts, log: opts.Logger,
		tree: lineage.Tree{FS: procfs.Default, IsTerminald: lineage.Either(
			lineage.Self(self.PID, self.StartTime), lineage.ByCommandLine(opts.TerminaldAddr, opts.TerminaldAddr))},
		tabs: map[string]*held{}, byPID: map[int]*held{}, quit: make(chan struct{}),
	}
	s.check = s.verify
	// The lock is ours: a socket left at the path is a dead holder's.
	_ = os.Remove(opts.Socket)
	lis, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: opts.Socket, Net: "unixpacket"})
	if err != nil {
		return fmt.Errorf("holder: listen on %s: %w", opts.Socket, err)
	}
	defer lis.Close()
	if err := os.Chmod(opts.Socket, 0o600); err != nil {
		return fmt.Errorf("holder: chmod %s: %w", opts.Socket, err)
	}
	ours, err := os.Stat(opts.Socket)
	if err != nil {
		return fmt.Errorf("holder: stat %s: %w", opts.Socket, err)
	}

	sigs := make(chan os.Signal, 4)
	// SIGHUP is caught, not ignored: an ignored signal stays ignored in
	// every program the holder execs.
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go s.acceptLoop(lis)
	s.log.Info("holder serving", "socket", opts.Socket, "terminald", opts.TerminaldAddr)
	tick := time.NewTicker(5 * time.Second) // a coalesced SIGCHLD is noticed anyway
	defer tick.Stop()
	// stop ends serving before the tabs are ended: a terminald started
	// meanwhile (phantom up right after down) must not hand its new tabs to
	// a holder about to kill everything, so the socket goes and the lock is
	// released first, and that terminald starts a new holder.
	stop := func(ownSocket bool) error {
		lis.SetUnlinkOnClose(ownSocket) // never remove another holder's socket
		lis.Close()
		_ = unix.Flock(int(lock.Fd()), unix.LOCK_UN)
		s.shutdown()
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return stop(true)
		case <-s.quit:
			return stop(true)
		case sig := <-sigs:
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT:
				return stop(true)
			case syscall.SIGCHLD:
				s.reap()
			}
		case <-tick.C:
			s.reap()
			// No terminald can reach a holder whose socket is gone (its
			// runtime directory was removed, or another holder took the
			// path): its tabs would be held for ever. End them.
			if fi, err := os.Stat(opts.Socket); err != nil || !os.SameFile(fi, ours) {
				s.log.Warn("holder: its socket is gone; stopping", "socket", opts.Socket)
				return stop(false)
			}
		}
	}
}

func (s *server) acceptLoop(lis *net.UnixListener) {
	for {
		c, err := lis.AcceptUnix()
		if err != nil {
			return
		}
		go s.serveConn(c)
	}
}

// verify checks that the peer of c is the instance's terminald: same uid,
// running `daemon terminald --listen ADDR` for this instance, and outside
// Phantom. An agent can start a process with that command line, but it
// runs inside a tab, a descendant of this holder, and is refused.
func (s *server) verify(c *net.UnixConn) (int, error) {
	creds, err := peercred.Get(c)
	if err != nil {
		return 0, err
	}
	defer creds.Close()
	if creds.UID != os.Getuid() {
		return 0, fmt.Errorf("peer uid %d is not %d", creds.UID, os.Getuid())
	}
	if err := checkTerminald(s.tree, s.opts.TerminaldAddr, creds.PID); err != nil {
		return 0, err
	}
	// The process read above is the peer only if it is still alive: its
	// pidfd says so, and a reused pid cannot pass.
	if err := creds.Alive(); err != nil {
		return 0, err
	}
	return creds.PID, nil
}

// checkTerminald decides whether process pid, as tree's /proc shows it, is
// the instance's terminald: `daemon terminald --listen addr`, outside
// Phantom (tree anchors at this holder and the instance's others).
func checkTerminald(tree lineage.Tree, addr string, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("peer pid %d is in another pid namespace", pid)
	}
	st, err := tree.FS.Stat(pid)
	if err != nil {
		return fmt.Errorf("read peer process %d: %w", pid, err)
	}
	if !lineage.TerminaldByCommandLine(addr, addr)(tree.FS, st) {
		return fmt.Errorf("peer process %d is not this instance's terminald (%s)", pid, addr)
	}
	p, err := tree.Locate(pid)
	if err != nil {
		return fmt.Errorf("place peer process %d: %w", pid, err)
	}
	if p.Inside {
		return fmt.Errorf("peer process %d runs inside Phantom (under pid %d)", pid, p.Terminald.PID)
	}
	return nil
}

func (s *server) serveConn(uc *net.UnixConn) {
	c := newConn(uc)
	defer c.close()
	pid, err := s.check(uc)
	if err != nil {
		s.log.Warn("holder: refused a connection", "err", err)
		_ = c.send(msg{Op: opReply, Seq: 1, Error: "refused: " + err.Error()})
		return
	}
	m, err := c.recv()
	if err != nil || m.Op != opHello {
		s.log.Warn("holder: no hello", "pid", pid, "err", err, "op", m.Op)
		closeAll(m.files)
		return
	}
	if m.Version != Version {
		_ = c.send(msg{Op: opReply, Seq: m.Seq, Error: fmt.Sprintf("holder speaks version %d, not %d", Version, m.Version)})
		return
	}
	s.mu.Lock()
	if s.active != nil && alive(s.pidOf) {
		other := s.pidOf
		s.mu.Unlock()
		_ = c.send(msg{Op: opReply, Seq: m.Seq, Error: fmt.Sprintf("busy: terminald pid %d holds the tabs", other)})
		return
	}
	s.active, s.pidOf = c, pid
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.active == c {
			s.active, s.pidOf = nil, 0
		}
		s.mu.Unlock()
	}()
	s.log.Info("holder: terminald connected", "pid", pid)
	if err := c.send(msg{Op: opReply, Seq: m.Seq, Version: Version, PID: os.Getpid()}); err != nil {
		return
	}
	for {
		m, err := c.recv()
		if err != nil {
			if !errors.Is(err, errEOF) && !errors.Is(err, io.EOF) {
				s.log.Warn("holder: connection ends", "pid", pid, "err", err)
			}
			return
		}
		if err := s.handle(c, m); err != nil {
			s.log.Warn("holder: connection ends", "pid", pid, "err", err)
			return
		}
	}
}

// handle answers one request; an error ends the connection.
func (s *server) handle(c *conn, m msg) error {
	switch m.Op {
	case opSpawn:
		return c.send(s.spawn(m))
	case opRelease:
		s.release(m.Tab)
		return c.send(msg{Op: opReply, Seq: m.Seq})
	case opState:
		s.mu.Lock()
		old := s.state
		s.state = m.files[0]
		s.mu.Unlock()
		if old != nil {
			old.Close()
		}
		return c.send(msg{Op: opReply, Seq: m.Seq})
	case opRestore:
		return s.restore(c, m.Seq)
	case opShutdown:
		err := c.send(msg{Op: opReply, Seq: m.Seq})
		s.once.Do(func() { close(s.quit) })
		return err
	}
	closeAll(m.files)
	return fmt.Errorf("%w: %s is not a request", errBadMsg, m.Op)
}

// spawn starts a tab's program on the slave it was sent, in a new session
// with the slave as its controlling terminal, and keeps the master and
// ring.
func (s *server) spawn(m msg) msg {
	slave, ring := m.files[0], m.files[2]
	defer slave.Close() // the child has its copies
	master, err := quiet(m.files[1])
	if err != nil {
		m.files[1].Close()
		ring.Close()
		return msg{Op: opReply, Seq: m.Seq, Error: err.Error()}
	}
	fail := func(err error) msg {
		master.Close()
		ring.Close()
		return msg{Op: opReply, Seq: m.Seq, Error: err.Error()}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tabs[m.Tab]; ok {
		return fail(fmt.Errorf("tab %s is already held", m.Tab))
	}
	fd := slave.Fd()
	pid, err := syscall.ForkExec(m.Path, m.Argv, &syscall.ProcAttr{
		Dir: m.Dir, Env: m.Env, Files: []uintptr{fd, fd, fd},
		Sys: &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0},
	})
	if err != nil {
		return fail(fmt.Errorf("start %s in %s: %w", m.Path, m.Dir, err))
	}
	// The child cannot be reaped before it is recorded (s.mu), so its
	// stat is still there, zombie or not.
	var start uint64
	if st, err := procfs.Default.Stat(pid); err == nil {
		start = st.StartTime
	}
	h := &held{tab: m.Tab, pid: pid, start: start, master: master, ring: ring}
	s.tabs[m.Tab], s.byPID[pid] = h, h
	return msg{Op: opReply, Seq: m.Seq, PID: pid, Start: start}
}

// release closes the holder's copies of a tab's master and ring. The tab
// is forgotten once its program has been reaped too.
func (s *server) release(tab string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.tabs[tab]
	if !ok || h.master == nil {
		return
	}
	h.master.Close()
	h.ring.Close()
	h.master, h.ring = nil, nil
	if h.exited {
		delete(s.tabs, tab)
	}
}

// restore sends every tab still held, then the state, then the reply.
func (s *server) restore(c *conn, seq uint64) error {
	s.mu.Lock()
	var tabs []msg
	// The masters sent are duplicates, closed once sent.
	defer func() {
		for _, t := range tabs {
			t.files[0].Close()
		}
	}()
	for _, h := range s.tabs {
		if h.master == nil {
			continue
		}
		master, err := h.master.file()
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("hand tab %s over: %w", h.tab, err)
		}
		tabs = append(tabs, msg{Op: opTab, Tab: h.tab, PID: h.pid, Start: h.start, Exited: h.exited, Code: h.code,
			files: []*os.File{master, h.ring}})
	}
	state := s.state
	s.mu.Unlock()
	// The files stay open while they are sent: only this connection's
	// handler (this goroutine) releases tabs or replaces the state.
	for _, t := range tabs {
		if err := c.send(t); err != nil {
			return err
		}
	}
	if state != nil {
		if err := c.send(msg{Op: opState, Seq: seq, files: []*os.File{state}}); err != nil {
			return err
		}
	}
	return c.send(msg{Op: opReply, Seq: seq})
}

// reap waits for every child that ended: tabs' programs, whose exits are
// recorded and reported, and orphans re-parented here.
func (s *server) reap() {
	for {
		s.mu.Lock()
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			s.mu.Unlock()
			return
		}
		h := s.byPID[pid]
		var report *conn
		if h != nil {
			delete(s.byPID, pid)
			h.exited, h.code = true, exitCode(ws)
			if h.master == nil {
				delete(s.tabs, h.tab)
			}
			report = s.active
		}
		s.mu.Unlock()
		if report != nil {
			// Reported outside the lock: a slow terminald must not stall
			// spawns. A send that fails is not lost: the record says
			// exited, and the next restore reports it.
			_ = report.send(msg{Op: opExit, Tab: h.tab, PID: pid, Code: h.code})
		}
	}
}

// exitCode is a shell's $? for a wait status: the exit status, or 128 and
// the signal.
func exitCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// shutdown hangs up every tab, gives the processes Grace to exit, and
// kills what is left — tabs' programs and every orphan — so nothing
// started inside Phantom outlives it as a process outside Phantom.
func (s *server) shutdown() {
	s.mu.Lock()
	var leaders []int
	for _, h := range s.tabs {
		if h.master != nil {
			h.master.Close()
			h.ring.Close()
			h.master, h.ring = nil, nil
		}
		if !h.exited {
			leaders = append(leaders, h.pid)
		}
	}
	if s.active != nil {
		s.active.close()
	}
	s.mu.Unlock()
	for _, pid := range leaders {
		_ = unix.Kill(-pid, unix.SIGHUP)
	}
	deadline := time.Now().Add(s.opts.Grace)
	for len(reaper.Children()) > 0 && time.Now().Before(deadline) {
		s.reap()
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 200; i++ {
		kids := reaper.Children()
		if len(kids) == 0 {
			break
		}
		for _, pid := range kids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		s.reap()
		time.Sleep(5 * time.Millisecond)
	}
	s.log.Info("holder stopped")
}

// alive reports whether pid still runs (a zombie counts as gone).
func alive(pid int) bool {
	st, err := procfs.Default.Stat(pid)
	return err == nil && st.State != 'Z'
}
