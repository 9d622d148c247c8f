package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/reaper"
)

// gitTimeout bounds one git command (the caller's context may end it
// sooner): a hook, filter or fsmonitor that hangs, or a lock held, must
// not hold a tool call until the agent gives up.
var gitTimeout = time.Minute

// git runs the real git binary: never through a shell, never prompting
// for credentials, with C-locale messages, and with the variables that
// would point it at some other repository removed from its environment.
type git struct {
	bin string
	env []string
	// reaper starts every git: gitd is a child subreaper, so what git
	// runs (hooks, filters, fsmonitor) stays gitd's descendant however
	// it forks, and so inside Phantom (internal/lineage).
	reaper *reaper.Reaper
}

// scrubbed are variables git reads that must not leak in from the daemon's
// own environment (a daemon started from a git hook would otherwise act on
// the hook's repository).
var scrubbed = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
	"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_PREFIX",
	"GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SSH_COMMAND",
	"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
	"LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES",
}

func newGit(bin string, env []string) (*git, error) {
	if bin == "" {
		bin = "git"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("find the git binary %q: %w", bin, err)
	}
	if env == nil {
		env = os.Environ()
	}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(scrubbed, k) {
			out = append(out, kv)
		}
	}
	out = append(out,
		"GIT_TERMINAL_PROMPT=0", // never wait for a password nobody types
		"GIT_OPTIONAL_LOCKS=0",  // status must not take index.lock from an agent's git
		"LC_ALL=C",
		"GIT_PAGER=cat",
		"GIT_EDITOR=true",
	)
	return &git{bin: path, env: out}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// gitError is a failed git command: its arguments, exit status and what it
// wrote to stderr.
type gitError struct {
	dir      string
	args     []string
	confined bool // run in the caller's sandbox
	code     int
	stderr   string
	err      error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" && e.err != nil {
		msg = e.err.Error()
	}
	where := e.dir
	if e.confined {
		where += ", in the caller's sandbox"
	}
	return fmt.Sprintf("git %s (in %s): %s", strings.Join(e.args, " "), where, msg)
}

func (e *gitError) Unwrap() error { return e.err }

// run runs git with args in dir and returns its standard output.
func (g *git) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	conf := confinementOf(ctx)
	argv := conf.argv(g.bin, args)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = g.env
	cmd.WaitDelay = 5 * time.Second
	// Stopping git stops what it runs (a hook, a filter) too: they are in
	// its process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := g.reaper.Run(cmd); err != nil {
		if ctx.Err() != nil && parent.Err() == nil {
			return nil, fmt.Errorf("git %s (in %s) did not finish within %v and was stopped (a hook, filter or fsmonitor it runs may hang, or a lock be held): %w",
				strings.Join(args, " "), dir, gitTimeout, errdefs.ErrFailedPrecondition)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s (in %s): %w", strings.Join(args, " "), dir, ctx.Err())
		}
		ge := &gitError{dir: dir, args: args, confined: conf.Confined(), code: -1, stderr: stderr.String(), err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.code = ee.ExitCode()
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}
