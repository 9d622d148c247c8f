package servers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// Confinement is the sandbox a server's processes run in. Servers are
// keyed by (language, workspace root, confinement): an agent's calls never
// reach a server that runs with more rights than the agent's sandbox, and
// a configuration an agent made stays with the servers of its own
// confinement (see Registry.Configure).
type Confinement struct {
	// Key tells confinements apart in server ids ("" for none): the tab
	// whose calls the server serves, or OutsideTabs.
	Key string
	// Flags are the sandbox launcher's rule flags (sandbox.Rules.Flags);
	// nil runs the server as lspd's own user, outside any sandbox.
	Flags []string
	// Label says in words where the server runs, for
	// list_language_servers and messages.
	Label string
}

// OutsideTabs is the confinement key of servers for agents that run in
// no tab (a process that left its tab's tree, or an agent the gateway
// placed in none).
const OutsideTabs = "outside-tabs"

// Unconfined is where servers for the human's own calls run: as the
// user, outside any sandbox.
var Unconfined = Confinement{Label: "as you, outside any sandbox"}

// Confined reports whether c runs its servers in a sandbox.
func (c Confinement) Confined() bool { return c.Flags != nil }

// InSandbox is the confinement of a sandboxed tab's calls: its servers run
// under that tab's own rules (terminald's DescribeSandbox), so they can
// write exactly what the tab can and no more.
func InSandbox(tab string, flags []string) (Confinement, error) {
	if _, err := sandbox.ParseFlags(flags); err != nil {
		return Confinement{}, fmt.Errorf("the sandbox rules of tab %s: %w", tab, err)
	}
	if flags == nil {
		flags = []string{}
	}
	return Confinement{Key: tab, Flags: slices.Clone(flags), Label: "in the sandbox of tab " + tab}, nil
}

// ReadOnly is the confinement of the calls of agents whose own sandbox
// lspd does not know or that have none (an unsandboxed tab, a process
// outside every tab): writes only to the temporary directories (getenv's
// TMPDIR, /tmp, /var/tmp, /dev/shm) and the byte sinks and sources of
// /dev. Every tab's sandbox allows at least that, so it is at least as
// tight as any of them; language servers write nothing else they need,
// since their caches are moved into a temporary directory (see launch).
func ReadOnly(key string, getenv func(string) string) Confinement {
	var r sandbox.Rules
	for _, d := range sandbox.TempDirs(getenv) {
		if p, ok := realPath(d); ok && !slices.Contains(r.WriteDirs, p) {
			r.WriteDirs = append(r.WriteDirs, p)
		}
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"} {
		if p, ok := realPath(d); ok {
			r.Devices = append(r.Devices, p)
		}
	}
	flags := r.Flags()
	if flags == nil {
		flags = []string{}
	}
	return Confinement{Key: key, Flags: flags, Label: "in a read-only sandbox (writes only the temporary directories)"}
}

// realPath is p with symbolic links resolved, if it exists: the launcher
// takes only clean paths free of links.
func realPath(p string) (string, bool) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	return filepath.Clean(r), true
}

// argv is the command line that runs command under c: command itself
// when c confines nothing, else through the sandbox launcher.
func (c Confinement) argv(launcher string, command []string) ([]string, error) {
	if !c.Confined() {
		return command, nil
	}
	if launcher == "" {
		return nil, fmt.Errorf("cannot start a language server %s: lspd does not know its own executable, the sandbox launcher", c.Label)
	}
	r, err := sandbox.ParseFlags(c.Flags)
	if err != nil {
		return nil, err
	}
	return r.Argv(launcher, command), nil
}

// cacheEnv moves a confined server's caches (XDG_CACHE_HOME, and with it
// gopls's file cache, Go's build cache and jedi's) into a fresh temporary
// directory the sandbox may write, so that the server works without
// writing the user's caches, which other programs of the user trust. The
// returned cleanup removes the directory.
func (c Confinement) cacheEnv() (env []string, cleanup func(), err error) {
	if !c.Confined() {
		return nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "phantom-lsp-cache-")
	if err != nil {
		return nil, nil, fmt.Errorf("make a cache directory for a sandboxed language server: %w", err)
	}
	return []string{"XDG_CACHE_HOME=" + dir, "GOCACHE=" + filepath.Join(dir, "go-build")},
		func() { os.RemoveAll(dir) }, nil
}
