package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/gateway"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// The variables every tab of Phantom exports (terminald's workspace sets
// them): the gateway's socket and the tab's state file.
const (
	envSocket   = "PHANTOM_MCP_SOCKET"
	envTabState = "PHANTOM_TAB_STATE"
)

const (
	// helloTimeout bounds the connect and the wait for the gateway's answer
	// to the hello.
	helloTimeout = 15 * time.Second

	// drainTimeout bounds how long the bridge waits, once the client has
	// closed its input, for the gateway to answer what it was sent and
	// close. It is longer than any call the gateway runs by default (a
	// call waits up to 50 s for the human to answer a sheet), so a reply
	// is lost only to a gateway that hangs.
	drainTimeout = 90 * time.Second

	// maxAncestors bounds the walk up the parent chain. Real chains are a
	// handful of processes (agent, shell, terminald, init); the bound only
	// matters for a /proc that lies.
	maxAncestors = 64
)

// mcpServerCmd is the bridge an agent starts as its MCP server: stdio on
// one side, the gateway's socket on the other.
func mcpServerCmd() *cobra.Command {
	var socket, client string
	cmd := &cobra.Command{
		Use:   "+mcp-server --client=NAME [--socket=PATH]",
		Short: "Bridge an agent's stdio MCP connection to Phantom (agents run this)",
		Long: `Speak MCP on stdin/stdout for an agent and forward it to Phantom's MCP
socket. The socket is --socket, else $PHANTOM_MCP_SOCKET, else the
PHANTOM_MCP_SOCKET of the nearest ancestor process that has one (agents
such as Codex start their servers with a stripped environment), else this
instance's default socket.

The first line to the socket is a hello naming this process, the client and
the tab it runs in ($PHANTOM_TAB_STATE, found the same way; Phantom checks it
against the process tree). After Phantom accepts it, messages pass unchanged
both ways. When the agent closes stdin, the bridge still delivers every
reply before it exits. When the gateway restarts, the bridge connects again
and replays the session's initialization by itself: a call in flight at that
moment gets an error, later calls work. Errors go to stderr, never stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tg := discover(socket, os.Getenv, func() ancestorVars {
				return walkAncestors(procfs.Default, os.Getppid())
			}, defaultSocket)
			return bridge(tg, client, drainTimeout, os.Stdin, os.Stdout)
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "the gateway's socket (default $PHANTOM_MCP_SOCKET, else an ancestor's, else this instance's)")
	cmd.Flags().StringVar(&client, "client", "", "the agent's name, shown on permission sheets (required)")
	cmd.MarkFlagRequired("client")
	return cmd
}

// defaultSocket is the socket of the instance the bridge's own environment
// points at (HOME and XDG_CACHE_HOME, which every client passes on).
func defaultSocket() (string, error) {
	l, err := paths.Default()
	if err != nil {
		return "", err
	}
	return l.MCPSocket, nil
}

// target is the socket the bridge dials, how it was found, and what was
// tried before it, for the message when the dial fails.
type target struct {
	// socket is the path to dial; empty when not even the default path
	// could be worked out.
	socket string
	// from says where socket came from, e.g. "PHANTOM_MCP_SOCKET".
	from string
	// tried lists, in order, the sources consulted before from and why
	// each gave no socket.
	tried []string
	// tabState is the hint for the hello's tab_state; may be empty.
	tabState string
}

// discover finds the gateway's socket and the tab-state hint.
//
// Clients strip the environment of the servers they start: Codex passes 12
// variables (unless its config lists env_vars), the TypeScript SDK's
// default and Inspector 2.x pass only HOME, LOGNAME, PATH, SHELL, TERM and
// USER. The agent's own process usually still has the environment of its
// tab, so after the flag and the bridge's environment comes the nearest
// ancestor's: /proc/<pid>/environ up the parent chain. Last comes the
// default path, from HOME and XDG_CACHE_HOME, which survive stripping but
// name the instance of the bridge's own build, not necessarily the tab's.
//
// The first source that names a socket is the one used: a socket the
// environment names belongs to the tab's instance, and falling through to
// another instance when it is down would hand the agent someone else's
// terminals.
//
// The tab-state hint is $PHANTOM_TAB_STATE, else that of the nearest
// ancestor that has PHANTOM_MCP_SOCKET, provided that ancestor names the
// socket being dialled: a hint about another instance's tab would only get
// the hello refused, while no hint lets the gateway find the tab from the
// process tree.
func discover(flag string, getenv func(string) string, ancestors func() ancestorVars, dflt func() (string, error)) target {
	var tg target
	ancestor := sync.OnceValue(ancestors) // walked only when needed, at most once
	switch {
	case flag != "":
		tg.socket, tg.from = flag, "--socket"
	case getenv(envSocket) != "":
		tg.tried = []string{"--socket not given"}
		tg.socket, tg.from = getenv(envSocket), envSocket
	default:
		tg.tried = []string{"--socket not given", envSocket + " not set"}
		if a := ancestor(); a.socket != "" {
			tg.socket, tg.from = a.socket, fmt.Sprintf("%s of ancestor %s", envSocket, a.name())
			break
		}
		tg.tried = append(tg.tried, ancestor().summary())
		s, err := dflt()
		if err != nil {
			tg.tried = append(tg.tried, fmt.Sprintf("default path unknown: %v", err))
			break
		}
		tg.socket, tg.from = s, "default"
	}
	if tg.tabState = getenv(envTabState); tg.tabState == "" && tg.socket != "" {
		if a := ancestor(); a.socket != "" && filepath.Clean(a.socket) == filepath.Clean(tg.socket) {
			tg.tabState = a.tabState
		}
	}
	return tg
}

// ancestorVars is what the walk up the parent chain found: the Phantom
// variables of the nearest ancestor that has PHANTOM_MCP_SOCKET, or an
// account of the processes looked at.
type ancestorVars struct {
	pid      int    // the ancestor that has the variables, 0 if none
	comm     string // its command name
	socket   string // its PHANTOM_MCP_SOCKET
	tabState string // its PHANTOM_TAB_STATE, possibly empty

	read       int      // processes whose environment was read
	last       int      // the last pid looked at
	unreadable []string // "pid N (comm): why", for each process skipped
	stopped    string   // why the walk ended before pid 1, if it did
}

// name is "pid 42 (codex)".
func (a ancestorVars) name() string { return fmt.Sprintf("pid %d (%s)", a.pid, a.comm) }

// summary says why no ancestor gave a socket, e.g. "no ancestor process
// has PHANTOM_MCP_SOCKET (read 4 processes up to pid 1)".
func (a ancestorVars) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no ancestor process has %s (read %d %s", envSocket, a.read, plural(a.read, "process", "processes"))
	if a.last > 0 {
		fmt.Fprintf(&b, " up to pid %d", a.last)
	}
	if len(a.unreadable) > 0 {
		fmt.Fprintf(&b, "; could not read %s", strings.Join(a.unreadable, ", "))
	}
	if a.stopped != "" {
		fmt.Fprintf(&b, "; %s", a.stopped)
	}
	b.WriteString(")")
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// walkAncestors reads the environment of pid and then of each parent in
// turn, up to pid 1, and stops at the first that has PHANTOM_MCP_SOCKET.
// A process whose environment cannot be read (another user's, one made
// non-dumpable, one outside the bridge's Landlock domain, such as
// terminald from inside a sandboxed tab) is skipped.
//
// The result is a hint, never a proof: the gateway places the bridge in
// its tab from the process tree itself. So the walk does not guard against
// a parent pid reused between two reads.
func walkAncestors(p procfs.FS, pid int) ancestorVars {
	var a ancestorVars
	for range maxAncestors {
		if pid <= 0 {
			return a
		}
		a.last = pid
		st, err := p.Stat(pid)
		if procfs.IsVanished(err) {
			a.stopped = fmt.Sprintf("pid %d is gone", pid)
			return a
		}
		if err != nil {
			a.stopped = fmt.Sprintf("stopped at pid %d: %v", pid, plainError(err))
			return a
		}
		env, err := p.Environ(pid)
		if err != nil {
			a.unreadable = append(a.unreadable, fmt.Sprintf("pid %d (%s): %v", pid, st.Comm, plainError(err)))
		} else {
			a.read++
			if s, _ := procfs.LookupEnv(env, envSocket); s != "" {
				a.pid, a.comm, a.socket = pid, st.Comm, s
				a.tabState, _ = procfs.LookupEnv(env, envTabState)
				return a
			}
		}
		if pid == 1 {
			return a
		}
		pid = st.PPID
	}
	a.stopped = fmt.Sprintf("gave up after %d processes", maxAncestors)
	return a
}

// plainError turns the errors of dialling and reading /proc into words:
// "no such file" rather than "dial unix /x: connect: no such file or
// directory", whose path the message already names.
func plainError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing is listening (connection refused)"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// dial connects to tg's socket. Its error says what was tried, in order,
// and why each failed.
func (tg target) dial() (*net.UnixConn, error) {
	steps := slices.Clone(tg.tried)
	if tg.socket != "" {
		c, err := net.DialTimeout("unix", tg.socket, helloTimeout)
		if err == nil {
			return c.(*net.UnixConn), nil
		}
		steps = append(steps, fmt.Sprintf("%s %s: %s", tg.from, tg.socket, plainError(err)))
	}
	return nil, fmt.Errorf("cannot reach Phantom's MCP socket: %s — is Phantom running? start it with `phantom up`",
		strings.Join(steps, "; "))
}

// handshake sends the hello and reads the gateway's answer, swallowing the
// {"hello":"ok"} line. It returns the reader holding whatever the gateway
// sent after it.
func handshake(conn *net.UnixConn, client, tabState string) (*bufio.Reader, error) {
	hello, _ := json.Marshal(map[string]any{
		"hello": "phantom", "version": 1, "pid": os.Getpid(), "client": client, "tab_state": tabState,
	})
	conn.SetDeadline(time.Now().Add(helloTimeout))
	defer conn.SetDeadline(time.Time{})
	if _, err := conn.Write(append(hello, '\n')); err != nil {
		return nil, fmt.Errorf("send the hello to %s: %w", conn.RemoteAddr(), err)
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, fmt.Errorf("the gateway closed the connection without answering the hello (%v)", err)
	}
	var answer struct {
		Hello string `json:"hello"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &answer); err != nil {
		return nil, fmt.Errorf("the gateway answered the hello with something unexpected: %q", line)
	}
	if answer.Error != nil {
		return nil, &helloRefusal{code: answer.Error.Code, message: answer.Error.Message}
	}
	if answer.Hello != "ok" {
		return nil, fmt.Errorf("the gateway answered the hello with something unexpected: %q", line)
	}
	return br, nil
}

// helloRefusal is the gateway's refusal of a hello.
type helloRefusal struct{ code, message string }

func (r *helloRefusal) Error() string {
	return fmt.Sprintf("the gateway refused the connection: %s (%s)", r.message, r.code)
}

// permanent reports whether asking again cannot help: every refusal but
// those of a gateway that is busy or could not read the peer this time.
func (r *helloRefusal) permanent() bool {
	switch r.code {
	case gateway.RefuseTooManyConnections, gateway.RefuseOverloaded, gateway.RefusePeerUnreadable:
		return false
	}
	return true
}
