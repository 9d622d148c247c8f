package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/phantom-dev/phantom/internal/reaper"
	"github.com/phantom-dev/phantom/lspd/lsp"
)

// instance is one process of a server: it lives from exec to exit and is
// never reused, so that what a dead process said can be told apart from
// what its successor says.
type instance struct {
	cmd    *exec.Cmd
	conn   *lsp.Conn
	stdin  io.WriteCloser
	stderr *tail
	exited chan struct{} // closed when the process was reaped
	err    error         // how it exited, once exited

	failMu sync.Mutex
	failed error // why lspd killed it, if it did
}

// launch starts cfg's command in root, in its own process group (servers
// start helpers — gopls runs `go list` — that must die with them), through
// rp: lspd is a child subreaper, so a helper that leaves the group still
// stays lspd's descendant, inside Phantom (internal/lineage). A confined
// server starts through the sandbox launcher (launcher, lspd's own
// executable) with conf's rules, so that it and everything it runs —
// workspace configuration included — stays in that sandbox.
func launch(rp *reaper.Reaper, launcher string, cfg Config, root string, conf Confinement, h lsp.Handler) (*instance, error) {
	path, err := exec.LookPath(cfg.Command[0])
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Command[0], err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.Command[0], err)
	}
	argv, cacheEnv, cleanup, err := conf.start(launcher, root, append([]string{path}, cfg.Command[1:]...))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), cacheEnv...)
	for k, v := range cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A helper that left the group and still holds the server's output
	// must not keep its exit from being seen: Wait closes the pipes this
	// long after the server exited, which ends its calls too.
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cleanup()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cleanup()
		return nil, err
	}
	i := &instance{cmd: cmd, stdin: stdin, stderr: &tail{max: 2048}, exited: make(chan struct{})}
	cmd.Stderr = i.stderr
	if err := rp.Start(cmd); err != nil {
		cleanup()
		return nil, fmt.Errorf("start %s %s: %w", strings.Join(cfg.Command, " "), conf.Label, err)
	}
	i.conn = lsp.NewConn(stdout, stdin, h)
	go func() {
		err := cmd.Wait()
		rp.Done(cmd.Process.Pid)
		// Helpers left in the group die with the server.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cleanup()
		if err == nil {
			err = fmt.Errorf("exited")
		}
		i.failMu.Lock()
		if i.failed != nil {
			err = i.failed
		}
		i.failMu.Unlock()
		if msg := i.stderr.String(); msg != "" {
			err = fmt.Errorf("%w; its last output: %s", err, msg)
		}
		i.err = err
		close(i.exited)
	}()
	return i, nil
}

// pid is the process id.
func (i *instance) pid() int { return i.cmd.Process.Pid }

// kill ends the process and its helpers at once.
func (i *instance) kill() { _ = syscall.Kill(-i.pid(), syscall.SIGKILL) }

// fail kills the process for a reason of lspd's own (it stopped
// answering), which then is the reason it exited: "signal: killed" would
// hide why.
func (i *instance) fail(err error) {
	i.failMu.Lock()
	if i.failed == nil {
		i.failed = err
	}
	i.failMu.Unlock()
	i.kill()
}

// shutdown asks the server to exit as LSP says (shutdown, exit) and kills
// it if it has not within grace.
func (i *instance) shutdown(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := i.conn.Call(ctx, "shutdown", nil, nil); err == nil {
		_ = i.conn.Notify("exit", nil)
	}
	i.stdin.Close()
	select {
	case <-i.exited:
		return
	case <-ctx.Done():
	}
	i.kill()
	<-i.exited
}

// initialize runs LSP's handshake within timeout.
func (i *instance) initialize(cfg Config, root string, timeout time.Duration) (lsp.InitializeResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var res lsp.InitializeResult
	go func() { // an exit during the handshake ends it at once
		select {
		case <-i.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := i.conn.Call(ctx, "initialize", lsp.InitializeParams(os.Getpid(), root, cfg.InitializationOptions), &res); err != nil {
		if errors.Is(err, lsp.ErrClosed) { // its output ends as it exits: wait to say how
			select {
			case <-i.exited:
			case <-time.After(time.Second):
			}
		}
		select {
		case <-i.exited:
			return res, fmt.Errorf("initialize: the server %v", i.err)
		default:
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return res, fmt.Errorf("did not answer initialize within %v", timeout)
		}
		return res, fmt.Errorf("initialize: %w", err)
	}
	if err := i.conn.Notify("initialized", struct{}{}); err != nil {
		return res, err
	}
	if len(cfg.Settings) > 0 {
		if err := i.conn.Notify("workspace/didChangeConfiguration", map[string]json.RawMessage{"settings": cfg.Settings}); err != nil {
			return res, err
		}
	}
	return res, nil
}

// tail keeps the last max bytes written to it (a server's stderr, for
// error messages).
type tail struct {
	max int
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}
