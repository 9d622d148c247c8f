package holder

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// ConnectOptions says which holder terminald uses and how to start one.
type ConnectOptions struct {
	// Socket, Lock and TerminaldAddr are as in Options.
	Socket, Lock, TerminaldAddr string
	// Exe is the phantom binary to start `phantom +holder` with when none
	// answers; empty: never start one.
	Exe string
	// Log is where a started holder writes its messages.
	Log string
	// Logger receives operational messages.
	Logger *slog.Logger
	// Timeout bounds the whole connect, start included; 5 s if zero.
	Timeout time.Duration
}

// HeldTab is a tab the holder kept for a new terminald.
type HeldTab struct {
	ID     string
	PID    int
	Start  uint64 // the program's start time (clock ticks), for identity
	Exited bool   // the program was reaped (maybe while no terminald ran)
	Code   int    // its exit code, when Exited
	Master *os.File
	Ring   *os.File
}

// Client is terminald's connection to its holder. It is safe for
// concurrent use.
type Client struct {
	c          *conn
	pid        int
	start      uint64
	log        *slog.Logger
	lost       chan struct{}
	readerDone chan struct{}

	mu      sync.Mutex
	seq     uint64
	waiting map[uint64]chan msg
	exits   map[string]chan int // per tab, buffered 1
	pending []msg               // opTab and opState of a restore in progress
	err     error               // why the connection was lost
}

// Connect connects to the instance's holder, starting one when none
// answers and opts.Exe is set, and checks by the process tree that the
// holder is the instance's, outside Phantom.
func Connect(opts ConnectOptions) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	deadline := time.Now().Add(opts.Timeout)
	started := false
	var last error
	for time.Now().Before(deadline) {
		cl, err := dialOnce(opts)
		if err == nil {
			return cl, nil
		}
		last = err
		var busy busyError
		switch {
		case errors.As(err, &busy):
			// The previous terminald's connection has not been seen to
			// end yet (it was just killed): try again shortly.
		case !started && opts.Exe != "" && (errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)):
			if err := startHolder(opts); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrNoHolder, err)
			}
			started = true
		case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED):
		default:
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	if errors.Is(last, syscall.ENOENT) || errors.Is(last, syscall.ECONNREFUSED) {
		return nil, fmt.Errorf("%w: connect to %s: %w", ErrNoHolder, opts.Socket, last)
	}
	return nil, fmt.Errorf("connect to the holder at %s: %w", opts.Socket, last)
}

// ErrNoHolder means no holder answers and none could be started: terminald
// may run without one (its tabs then end with it). Any other Connect error
// is a holder that answered and was refused, or refused terminald (another
// terminald holds the tabs, another protocol version): running without it
// would leave its tabs unreachable, so terminald must not.
var ErrNoHolder = errors.New("no holder for this instance")

// busyError is a holder that serves another live terminald.
type busyError struct{ msg string }

func (e busyError) Error() string { return e.msg }

// startHolder starts `phantom +holder` in the background; the command
// re-starts itself in a new session and returns, so the holder is not
// terminald's child and outlives it.
func startHolder(opts ConnectOptions) error {
	cmd := exec.Command(opts.Exe, "+holder", "--terminald", opts.TerminaldAddr, "--socket", opts.Socket, "--lock", opts.Lock, "--background")
	if opts.Log != "" {
		logf, err := os.OpenFile(opts.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("start the holder: open its log %s: %w", opts.Log, err)
		}
		defer logf.Close()
		cmd.Stdout, cmd.Stderr = logf, logf
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("start the holder (%s +holder): %w (see %s)", opts.Exe, err, opts.Log)
	}
	return nil
}

func dialOnce(opts ConnectOptions) (*Client, error) {
	uc, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: opts.Socket, Net: "unixpacket"})
	if err != nil {
		return nil, err
	}
	pid, start, err := verifyHolder(uc, opts.TerminaldAddr)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("refusing the holder at %s: %w", opts.Socket, err)
	}
	cl, err := newClient(uc, pid, start, opts.Logger)
	if err != nil {
		if strings.HasPrefix(err.Error(), "holder: busy") {
			return nil, busyError{err.Error()}
		}
		return nil, err
	}
	return cl, nil
}

// newClient says hello over uc to the holder pid, already checked.
func newClient(uc *net.UnixConn, pid int, start uint64, log *slog.Logger) (*Client, error) {
	cl := &Client{c: newConn(uc), pid: pid, start: start, log: log,
		lost: make(chan struct{}), readerDone: make(chan struct{}),
		waiting: map[uint64]chan msg{}, exits: map[string]chan int{}}
	go cl.readLoop()
	r, err := cl.request(msg{Op: opHello, Version: Version})
	if err != nil {
		cl.Close()
		return nil, err
	}
	if r.Version != Version || r.PID != pid {
		cl.Close()
		return nil, fmt.Errorf("holder answered version %d pid %d; want version %d pid %d", r.Version, r.PID, Version, pid)
	}
	return cl, nil
}

// verifyHolder checks the process serving c: same uid, the instance's
// holder by its command line, and outside Phantom — a holder an agent
// started (to receive every tab's master) runs inside the real one and is
// refused.
func verifyHolder(c *net.UnixConn, addr string) (int, uint64, error) {
	creds, err := peercred.Get(c)
	if err != nil {
		return 0, 0, err
	}
	defer creds.Close()
	if creds.UID != os.Getuid() {
		return 0, 0, fmt.Errorf("it runs as uid %d, not %d", creds.UID, os.Getuid())
	}
	tree := lineage.Tree{FS: procfs.Default, IsTerminald: lineage.ByCommandLine(addr, addr)}
	st, err := checkHolder(tree, addr, creds.PID)
	if err != nil {
		return 0, 0, err
	}
	if err := creds.Alive(); err != nil {
		return 0, 0, err
	}
	return creds.PID, st.StartTime, nil
}

// checkHolder decides whether process pid, as tree's /proc shows it, is
// the instance's holder: `+holder --terminald addr`, outside Phantom
// (tree anchors at the instance's holder and terminald).
func checkHolder(tree lineage.Tree, addr string, pid int) (procfs.Stat, error) {
	if pid <= 0 {
		return procfs.Stat{}, fmt.Errorf("its pid %d is in another pid namespace", pid)
	}
	st, err := tree.FS.Stat(pid)
	if err != nil {
		return procfs.Stat{}, fmt.Errorf("read process %d: %w", pid, err)
	}
	if !lineage.HolderByCommandLine(addr)(tree.FS, st) {
		return procfs.Stat{}, fmt.Errorf("process %d is not a holder of %s", pid, addr)
	}
	p, err := tree.Locate(pid)
	if err != nil {
		return procfs.Stat{}, fmt.Errorf("place process %d: %w", pid, err)
	}
	if p.Inside {
		return procfs.Stat{}, fmt.Errorf("process %d runs inside Phantom (under pid %d)", pid, p.Terminald.PID)
	}
	return st, nil
}

// readLoop dispatches what the holder sends until the connection ends.
func (cl *Client) readLoop() {
	defer close(cl.readerDone)
	for {
		m, err := cl.c.recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errEOF
			}
			cl.fail(fmt.Errorf("lost the holder (pid %d): %w", cl.pid, err))
			return
		}
		cl.mu.Lock()
		switch m.Op {
		case opReply:
			if ch, ok := cl.waiting[m.Seq]; ok {
				delete(cl.waiting, m.Seq)
				ch <- m
			}
		case opTab, opState:
			cl.pending = append(cl.pending, m)
		case opExit:
			select {
			case cl.exitLocked(m.Tab) <- m.Code:
			default: // already reported
			}
		default:
			closeAll(m.files)
		}
		cl.mu.Unlock()
	}
}

func (cl *Client) fail(err error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.err != nil {
		return
	}
	cl.err = err
	close(cl.lost)
	for seq, ch := range cl.waiting {
		delete(cl.waiting, seq)
		ch <- msg{Op: opReply, Seq: seq, Error: err.Error()}
	}
}

func (cl *Client) exitLocked(tab string) chan int {
	ch, ok := cl.exits[tab]
	if !ok {
		ch = make(chan int, 1)
		cl.exits[tab] = ch
	}
	return ch
}

// request sends m and waits for its reply.
func (cl *Client) request(m msg) (msg, error) {
	ch := make(chan msg, 1)
	cl.mu.Lock()
	if cl.err != nil {
		err := cl.err
		cl.mu.Unlock()
		return msg{}, err
	}
	cl.seq++
	m.Seq = cl.seq
	cl.waiting[m.Seq] = ch
	cl.mu.Unlock()
	if err := cl.c.send(m); err != nil {
		cl.mu.Lock()
		delete(cl.waiting, m.Seq)
		cl.mu.Unlock()
		return msg{}, err
	}
	r := <-ch
	if r.Error != "" {
		return r, fmt.Errorf("holder: %s", r.Error)
	}
	return r, nil
}

// SpawnRequest is a tab's program for the holder to start.
type SpawnRequest struct {
	Tab  string
	Path string   // the resolved program
	Argv []string // argv[0] included
	Env  []string
	Dir  string
}

// Spawn has the holder start r's program on slave as a session leader
// with slave as its controlling terminal, and keep master and ring. The
// caller still closes its own copies of slave (at once), master and ring
// (when the tab is released).
func (cl *Client) Spawn(r SpawnRequest, slave, master *os.File, ring *Ring) (pid int, start uint64, err error) {
	rep, err := cl.request(msg{Op: opSpawn, Tab: r.Tab, Path: r.Path, Argv: r.Argv, Env: r.Env, Dir: r.Dir,
		files: []*os.File{slave, master, ring.File()}})
	if err != nil {
		return 0, 0, fmt.Errorf("spawn tab %s: %w", r.Tab, err)
	}
	return rep.PID, rep.Start, nil
}

// Exit returns the channel a tab's exit code arrives on, once.
func (cl *Client) Exit(tab string) <-chan int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.exitLocked(tab)
}

// Forget drops a tab's exit channel once its exit was received.
func (cl *Client) Forget(tab string) {
	cl.mu.Lock()
	delete(cl.exits, tab)
	cl.mu.Unlock()
}

// Release has the holder close its copies of a tab's master and ring: once
// terminald closes its own master too, the tab is hung up.
func (cl *Client) Release(tab string) error {
	_, err := cl.request(msg{Op: opRelease, Tab: tab})
	return err
}

// SaveState gives the holder the workspace state to hand to the next
// terminald, in a fresh sealed memfd (never rewritten in place, so a
// terminald killed mid-write leaves the previous state whole).
func (cl *Client) SaveState(b []byte) error {
	fd, err := unix.MemfdCreate("phantom-state", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return fmt.Errorf("save workspace state: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "phantom-state")
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("save workspace state: write %d bytes: %w", len(b), err)
	}
	_, _ = unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL)
	_, err = cl.request(msg{Op: opState, files: []*os.File{f}})
	return err
}

// maxState bounds the state blob a restore reads.
const maxState = 64 << 20

// Restore asks the holder for every tab it holds and the last state
// terminald saved (nil if none). The caller owns the files.
func (cl *Client) Restore() ([]HeldTab, []byte, error) {
	_, err := cl.request(msg{Op: opRestore})
	cl.mu.Lock()
	got := cl.pending
	cl.pending = nil
	cl.mu.Unlock()
	var tabs []HeldTab
	var state []byte
	for _, m := range got {
		switch m.Op {
		case opTab:
			tabs = append(tabs, HeldTab{ID: m.Tab, PID: m.PID, Start: m.Start, Exited: m.Exited, Code: m.Code,
				Master: m.files[0], Ring: m.files[1]})
		case opState:
			state, _ = readState(m.files[0])
			m.files[0].Close()
		}
	}
	if err != nil {
		for _, t := range tabs {
			t.Master.Close()
			t.Ring.Close()
		}
		return nil, nil, fmt.Errorf("restore from the holder: %w", err)
	}
	return tabs, state, nil
}

func readState(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, maxState))
}

// Shutdown tells the holder to kill whatever is left of the tabs and exit
// (phantom down).
func (cl *Client) Shutdown() error {
	_, err := cl.request(msg{Op: opShutdown})
	return err
}

// Process is the holder's pid and start time: terminald's own anchor for
// placing processes (terminald/locate.go).
func (cl *Client) Process() (pid int, start uint64) { return cl.pid, cl.start }

// Lost is closed when the connection to the holder ends.
func (cl *Client) Lost() <-chan struct{} { return cl.lost }

// Close ends the connection; the holder keeps the tabs for the next
// terminald.
func (cl *Client) Close() {
	cl.c.close()
	<-cl.readerDone
}

// Socket is where the holder of the instance whose runtime directory is
// runtime listens: in that 0700 directory.
func Socket(runtime string) string { return filepath.Join(runtime, "holder.sock") }

// LockFile is the file the instance's holder keeps locked while it runs.
func LockFile(runtime string) string { return filepath.Join(runtime, "holder.lock") }

// LogFile is where a holder terminald starts writes its messages.
func LogFile(logs string) string { return filepath.Join(logs, "holder.log") }

// Err is why the connection to the holder ended, or nil.
func (cl *Client) Err() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.err
}
