package servers

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// cacheInPrivateTmp is where a server behind the walls keeps its caches:
// inside its private /tmp, which is fresh for each process and removed
// by the launcher when it ends.
const cacheInPrivateTmp = "/tmp/phantom-lsp-cache"

// start is how a server's process starts under c in workspace root:
// its command line (command itself when c confines nothing, else through
// the sandbox launcher, lspd's own executable), what it adds to the
// environment (see cacheEnv), and a cleanup for after it exited.
func (c Confinement) start(launcher, root string, command []string) (argv, env []string, cleanup func(), err error) {
	if !c.Confined() {
		return command, nil, func() {}, nil
	}
	if launcher == "" {
		return nil, nil, nil, fmt.Errorf("cannot start a language server %s: lspd does not know its own executable, the sandbox launcher", c.Label)
	}
	r, rulesCleanup, err := c.rulesFor(root, command[0])
	if err != nil {
		return nil, nil, nil, err
	}
	env, cacheCleanup, err := cacheEnv(r)
	if err != nil {
		rulesCleanup()
		return nil, nil, nil, err
	}
	return r.Argv(launcher, command), env, func() { cacheCleanup(); rulesCleanup() }, nil
}

// rulesFor is the rules of one process of a server of root running
// program. A tab's are its flags as they are. The read-only sandbox's are
// computed now: behind the walls the workspace and program stay in view
// (read-only) wherever they are, and the private /tmp is a directory of
// this process's own under the runtime directory, which cleanup removes —
// a server killed at once (a restart, a hang) leaves its launcher no
// chance to.
func (c Confinement) rulesFor(root, program string) (sandbox.Rules, func(), error) {
	if c.readOnly == nil {
		r, err := sandbox.ParseFlags(c.Flags)
		return r, func() {}, err
	}
	m := *c.readOnly
	tmp, cleanup := "", func() {}
	if m.Walls {
		parent := filepath.Join(m.Layout.Runtime, "tmp", "lspd")
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return sandbox.Rules{}, nil, fmt.Errorf("make the directory of language servers' private /tmp: %w", err)
		}
		dir, err := os.MkdirTemp(parent, c.Key+"-")
		if err != nil {
			return sandbox.Rules{}, nil, fmt.Errorf("make a private /tmp for a language server %s: %w", c.Label, err)
		}
		tmp, cleanup = dir, func() { os.RemoveAll(dir) }
	}
	r, err := m.rules(c.Key, tmp, []string{root, program})
	if err != nil {
		cleanup()
		return sandbox.Rules{}, nil, err
	}
	return r, cleanup, nil
}

// cacheEnv moves a confined server's caches (XDG_CACHE_HOME, and with it
// gopls's file cache, Go's build cache and jedi's) into a fresh temporary
// directory the sandbox may write, so that the server works without
// writing the user's caches, which other programs of the user trust. With
// a private /tmp that is a directory in it, which the server creates;
// else a fresh one lspd makes and the returned cleanup removes.
func cacheEnv(r sandbox.Rules) (env []string, cleanup func(), err error) {
	if r.Tmp != "" {
		return []string{"XDG_CACHE_HOME=" + cacheInPrivateTmp, "GOCACHE=" + filepath.Join(cacheInPrivateTmp, "go-build")}, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "phantom-lsp-cache-")
	if err != nil {
		return nil, nil, fmt.Errorf("make a cache directory for a sandboxed language server: %w", err)
	}
	return []string{"XDG_CACHE_HOME=" + dir, "GOCACHE=" + filepath.Join(dir, "go-build")},
		func() { os.RemoveAll(dir) }, nil
}
