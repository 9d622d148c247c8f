package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// newWorkspace starts a workspace isolated in temporary HOME and runtime
// directories, shut down and removed when the benchmark ends.
func newWorkspace(tb testing.TB) (*workspace.Workspace, string) {
	tb.Helper()
	// Short: the runtime directory holds Unix sockets (108-byte limit).
	root, err := os.MkdirTemp("", "pb")
	if err != nil {
		tb.Fatal(err)
	}
	home := filepath.Join(root, "h")
	if err := os.Mkdir(home, 0o700); err != nil {
		tb.Fatal(err)
	}
	vars := map[string]string{
		"HOME":            home,
		"XDG_RUNTIME_DIR": filepath.Join(root, "r"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
	}
	layout, err := paths.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := config.Load(layout.Config)
	if err != nil {
		tb.Fatal(err)
	}
	if sh, err := exec.LookPath("bash"); err == nil {
		cfg.Shell = sh // the same shell whatever $SHELL is
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "SHELL=" + cfg.Shell}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	ws, err := workspace.New(workspace.Options{Config: cfg, Layout: layout, Env: env, PollInterval: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ws.Shutdown()
		os.RemoveAll(root)
	})
	return ws, home
}

// waitRendered waits until tab id's program has exited and its last
// rendered line is want, checking the screen every millisecond. Exit is
// learnt from the watcher wt (subscribed before the tab was created). It
// returns when each was first seen.
func waitRendered(tb testing.TB, ws *workspace.Workspace, wt *workspace.Watcher, id, want string, timeout time.Duration) (exitAt, renderedAt time.Time) {
	tb.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	events := wt.Events()
	exited, rendered := false, false
	for !exited || !rendered {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil // cut off: fall back to Get below
				continue
			}
			if ev.Terminal.ID == id && ev.Terminal.Exited && !exited {
				exited, exitAt = true, time.Now()
			}
		case <-tick.C:
			if !rendered {
				lines, err := ws.ReadOutput(id, 1)
				if err != nil {
					tb.Fatal(err)
				}
				if len(lines) == 1 && lines[0] == want {
					rendered, renderedAt = true, time.Now()
				}
			}
			// Only once the output is in (a short window) or without a
			// watcher: Get reads /proc, too costly to poll all along.
			if !exited && (rendered || events == nil) {
				t, err := ws.Get(id)
				if err != nil {
					tb.Fatal(err)
				}
				if t.Exited {
					exited, exitAt = true, time.Now()
				}
			}
		case <-deadline:
			lines, _ := ws.ReadOutput(id, 3)
			tb.Fatalf("tab %s: after %v exited=%v rendered=%v; last lines %q, want %q", id, timeout, exited, rendered, lines, want)
		}
	}
	return exitAt, renderedAt
}

// tmuxServer is a private tmux server: its own socket directory and name,
// a config setting history-limit like Phantom's scrollback. After kill the
// next command starts a new server under a new name, so that it never races
// the old one's exit.
type tmuxServer struct {
	tb   testing.TB
	dir  string
	name string
	conf string
	env  []string
}

func (s *tmuxServer) rename() {
	s.name = fmt.Sprintf("pb%d-%d", os.Getpid(), tmuxCount.Add(1))
}

var tmuxCount atomic.Int64

// newTmux prepares (but does not start) a private tmux server; the
// benchmark is skipped when tmux is not installed. Its server is killed
// and its directory removed when the benchmark ends.
func newTmux(tb testing.TB) *tmuxServer {
	tb.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		tb.Skip("tmux not installed (scripts/setup installs it)")
	}
	dir, err := os.MkdirTemp("", "pbt")
	if err != nil {
		tb.Fatal(err)
	}
	s := &tmuxServer{
		tb:   tb,
		dir:  dir,
		conf: filepath.Join(dir, "tmux.conf"),
	}
	s.rename()
	conf := fmt.Sprintf("set -g history-limit %d\nset -g status off\n", historyLines)
	if err := os.WriteFile(s.conf, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") && !strings.HasPrefix(kv, "TMUX_TMPDIR=") {
			s.env = append(s.env, kv)
		}
	}
	s.env = append(s.env, "TMUX_TMPDIR="+dir, "LANG=C.UTF-8")
	tb.Cleanup(func() {
		s.kill()
		os.RemoveAll(dir)
	})
	return s
}

// cmd is a tmux client command on this server.
func (s *tmuxServer) cmd(args ...string) *exec.Cmd {
	c := exec.Command("tmux", append([]string{"-L", s.name, "-f", s.conf}, args...)...)
	c.Env = s.env
	return c
}

// run runs a tmux client command and returns its output.
func (s *tmuxServer) run(args ...string) []byte {
	s.tb.Helper()
	var stderr bytes.Buffer
	c := s.cmd(args...)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		s.tb.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// waitFor is the shell command signalling channel ch on this server.
func (s *tmuxServer) waitFor(ch string) string {
	return fmt.Sprintf("tmux -L %s wait-for -S %s", s.name, ch)
}

// kill stops the server and every pane's processes, if it runs, waits (up
// to five seconds) until the server process has ended, and picks a new name
// for the next server.
func (s *tmuxServer) kill() {
	out, err := s.cmd("display", "-p", "#{pid}").Output()
	pid := strings.TrimSpace(string(out))
	c := s.cmd("kill-server")
	c.Stdout, c.Stderr = nil, nil
	_ = c.Run()
	for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		// Gone, or a zombie waiting for init to reap it.
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || bytes.HasPrefix(stat[i:], []byte(") Z")) {
			break
		}
	}
	os.RemoveAll(filepath.Join(s.dir, fmt.Sprintf("tmux-%d", os.Getuid())))
	s.rename()
}

// quote makes path safe inside a shell command line.
func quote(path string) string {
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
