package editor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/phantom-dev/phantom/editord/nvim"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// Terminals is what the manager needs of terminald.
type Terminals interface {
	// Tab returns the window and current directory of tab id.
	Tab(ctx context.Context, tabID string) (TabInfo, error)
	// Launch opens a new tab as l says and returns the tab's id.
	Launch(ctx context.Context, l Launch) (string, error)
	// Locate names the tab process pid (started at startTime) runs in; ""
	// when it runs in none.
	Locate(ctx context.Context, pid int, startTime uint64) (string, error)
}

// TabInfo is what the manager needs to know of a Phantom tab.
type TabInfo struct {
	Window, Dir string
	// Sandboxed is true when the tab's programs run sandboxed.
	Sandboxed bool
}

// Launch is a new tab for an editor.
type Launch struct {
	// Window is the window to open it in; Dir the directory to start in.
	Window, Dir string
	// Argv is the editor's command line (Command).
	Argv []string
	// Sandbox runs the tab sandboxed: it is a sandboxed agent tab's
	// editor. Socket is then where it listens, so that terminald gives
	// the tab that socket's directory (CreateTerminalRequest.editor_socket).
	Sandbox bool
	Socket  string
}

// Caller is the calling agent's tab, as the guard or the gateway verified
// it.
type Caller struct {
	TabID string
	// Dir is the tab's directory, against which relative paths resolve;
	// when empty, terminald's is used.
	Dir string
}

// Options configure a Manager.
type Options struct {
	// Socket says where the editor of a window listens (in the private
	// runtime directory): paths.Layout.EditorSocket.
	Socket func(window string) string
	// SandboxedSocket says where the editor of the sandboxed agent tab
	// listens in window: paths.Layout.SandboxedEditorSocket.
	SandboxedSocket func(window, tab string) string
	// Terminals finds windows and opens the editors' tabs.
	Terminals Terminals
	// Nvim is the Neovim program; default "nvim".
	Nvim string
	// StartTimeout bounds how long a new editor may take to listen;
	// default 10s.
	StartTimeout time.Duration
}

// Manager keeps one editor per window: the one it started in a tab of that
// window, or one the human started there with `phantom edit`, found on the
// window's socket. A sandboxed agent tab gets an editor of its own in its
// window instead, sandboxed as it is (see editorFor).
type Manager struct {
	opts Options

	mu      sync.Mutex // held while an editor is found or started, so one window gets one
	editors map[which]*running
}

// running is a window's editor.
type running struct {
	*Editor
	tab string // the Phantom tab it runs in
}

// NewManager manages editors as opts say.
func NewManager(opts Options) *Manager {
	if opts.Nvim == "" {
		opts.Nvim = "nvim"
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	return &Manager{opts: opts, editors: map[which]*running{}}
}

// Close hangs up on every editor; they keep running in their tabs, the
// human's to quit.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for w, r := range m.editors {
		r.Close()
		delete(m.editors, w)
	}
}

// Session is the caller window's editor, for one call.
type Session struct {
	*Editor
	// TerminalID is the Phantom tab the editor runs in.
	TerminalID string
	// Started is true when the editor was started for this call.
	Started bool
	// Dir is the caller's directory, for relative paths.
	Dir string
}

// Lookup returns the caller window's editor, or nil when it has none.
func (m *Manager) Lookup(ctx context.Context, c Caller) (*Session, error) {
	return m.session(ctx, c, false)
}

// Ensure returns the caller window's editor, starting one when it has
// none (or the human quit it).
func (m *Manager) Ensure(ctx context.Context, c Caller) (*Session, error) {
	return m.session(ctx, c, true)
}

func (m *Manager) session(ctx context.Context, c Caller, start bool) (*Session, error) {
	if c.TabID == "" {
		return nil, fmt.Errorf("the editor tools act on the editor of the caller's window, and the caller runs in no Phantom tab: %w", errdefs.ErrFailedPrecondition)
	}
	info, err := m.opts.Terminals.Tab(ctx, c.TabID)
	if err != nil {
		return nil, fmt.Errorf("find the window of tab %s: %w", c.TabID, err)
	}
	if c.Dir == "" {
		c.Dir = info.Dir
	}
	window := editorFor(c, info)
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.editors[window]; r != nil {
		select {
		case <-r.Done(): // the human quit it
			r.Close()
			delete(m.editors, window)
		default:
			return &Session{Editor: r.Editor, TerminalID: r.tab, Dir: c.Dir}, nil
		}
	}
	r, err := m.adopt(ctx, window)
	if err != nil {
		return nil, err
	}
	started := false
	if r == nil {
		if !start {
			return nil, nil
		}
		if r, err = m.start(ctx, window, c.Dir); err != nil {
			return nil, err
		}
		started = true
	}
	m.editors[window] = r
	return &Session{Editor: r.Editor, TerminalID: r.tab, Started: started, Dir: c.Dir}, nil
}

// socket is where editor w listens.
func (m *Manager) socket(w which) (string, error) {
	if !w.sandboxed() {
		return m.opts.Socket(w.window), nil
	}
	if m.opts.SandboxedSocket == nil {
		return "", fmt.Errorf("tab %s is sandboxed, and this editord has no place for a sandboxed editor's socket (Options.SandboxedSocket): %w", w.owner, errdefs.ErrFailedPrecondition)
	}
	return m.opts.SandboxedSocket(w.window, w.owner), nil
}

// adopt connects to an editor already listening on w's socket: one the
// human started with `phantom edit`, or one this daemon started before it
// restarted. It must run in a tab of w's window, and a sandboxed tab's
// editor in a sandboxed tab. nil, nil means there is none; a socket nobody
// listens on any more, or one on which something else listens, is
// removed.
func (m *Manager) adopt(ctx context.Context, window which) (*running, error) {
	sock, err := m.socket(window)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(sock); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := nvim.Dial(dctx, sock)
	if errors.Is(err, syscall.ECONNREFUSED) {
		// Its editor quit without removing it (killed, or crashed).
		if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove the dead editor socket %s: %w", sock, err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reach the editor of window %s at %s: %w", window.window, sock, err)
	}
	tab, err := m.tabOf(ctx, c, window)
	if err != nil {
		// Not this window's editor: a process elsewhere listens on its
		// socket (squatting, to learn what agents open, or to block them).
		// It is not adopted; unlinking the name leaves it listening on
		// nothing anyone can reach, and the window gets a real editor.
		c.Close()
		if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove %s, on which a process that is not the window's editor listens: %w", sock, err)
		}
		return nil, nil
	}
	return &running{Editor: New(c), tab: tab}, nil
}

// tabOf names the tab of w's window the Neovim behind c runs in, from the
// kernel's word on who is at the other end of the socket; for a sandboxed
// tab's editor that tab must be sandboxed, so that it is never the
// human's editor (reached through a link, or started there by hand).
func (m *Manager) tabOf(ctx context.Context, c *nvim.Client, w which) (string, error) {
	peer, err := c.Peer()
	if err != nil {
		return "", err
	}
	defer peer.Close()
	if peer.UID != os.Getuid() {
		return "", fmt.Errorf("it runs as user %d, not as us (%d)", peer.UID, os.Getuid())
	}
	st, err := procfs.ReadStat(peer.PID)
	if err != nil {
		return "", err
	}
	tab, err := m.opts.Terminals.Locate(ctx, peer.PID, st.StartTime)
	if err != nil {
		return "", fmt.Errorf("find the tab of process %d: %w", peer.PID, err)
	}
	if err := peer.Alive(); err != nil {
		return "", fmt.Errorf("process %d: %w", peer.PID, err)
	}
	if tab == "" {
		return "", fmt.Errorf("process %d runs in no Phantom tab", peer.PID)
	}
	info, err := m.opts.Terminals.Tab(ctx, tab)
	if err != nil {
		return "", err
	}
	if info.Window != w.window {
		return "", fmt.Errorf("it runs in tab %s of window %s, not of window %s", tab, info.Window, w.window)
	}
	if w.sandboxed() && !info.Sandboxed {
		return "", fmt.Errorf("it runs in tab %s, which is not sandboxed, and the editor of sandboxed tab %s must be", tab, w.owner)
	}
	return tab, nil
}

// start opens a new tab in w's window running a Neovim that listens on
// w's socket, sandboxed for a sandboxed tab's editor, and connects to it.
// A sandboxed tab's editor must be the very tab it opened.
func (m *Manager) start(ctx context.Context, window which, dir string) (*running, error) {
	sock, err := m.socket(window)
	if err != nil {
		return nil, err
	}
	l := Launch{Window: window.window, Dir: dir, Argv: Command(m.opts.Nvim, sock), Sandbox: window.sandboxed()}
	if l.Sandbox {
		l.Argv, l.Socket = SandboxedCommand(m.opts.Nvim, sock), sock
	}
	tab, err := m.opts.Terminals.Launch(ctx, l)
	if err != nil {
		return nil, fmt.Errorf("open the editor's tab in window %s: %w", window.window, err)
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	for {
		c, err := nvim.Dial(ctx, sock)
		if err == nil && window.sandboxed() {
			if got, terr := m.tabOf(ctx, c, window); terr != nil || got != tab {
				c.Close()
				return nil, fmt.Errorf("the editor started in tab %s for sandboxed tab %s is not the one listening on %s (%v): %w",
					tab, window.owner, sock, terr, errdefs.ErrFailedPrecondition)
			}
		}
		if err == nil {
			return &running{Editor: New(c), tab: tab}, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the editor in tab %s did not listen on %s within %s: %v: %w", tab, sock, m.opts.StartTimeout, err, errdefs.ErrFailedPrecondition)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Command is the command line of a window's editor listening on sock,
// opening files (each "FILE" or "+LINE" as Neovim takes them). Both
// editord and `phantom edit` start editors with it; terminald recognises
// an editor's tab by its --listen argument.
func Command(nvimPath, sock string, files ...string) []string {
	return append([]string{nvimPath, "--listen", sock}, files...)
}

// SandboxedCommand is Command for a sandboxed tab's editor. Its sandbox
// leaves the human's Neovim state (~/.local/state/nvim: swap files, shada,
// undo files) read-only, and Neovim refuses to load a file whose swap file
// it cannot write: so this one keeps them in its own directory, the
// socket's, which its sandbox may write (and which is made afresh with
// each such editor).
func SandboxedCommand(nvimPath, sock string) []string {
	dir := filepath.Dir(sock)
	set := fmt.Sprintf("set directory^=%[1]s// undodir^=%[1]s// backupdir^=%[1]s// shadafile=%[2]s",
		escapeOption(dir), escapeOption(filepath.Join(dir, "shada")))
	return []string{nvimPath, "--listen", sock, "--cmd", set}
}

// escapeOption escapes a path for a :set value (spaces, commas and
// backslashes).
func escapeOption(p string) string {
	return strings.NewReplacer(`\`, `\\`, " ", `\ `, ",", `\,`, "|", `\|`, `"`, `\"`).Replace(p)
}
