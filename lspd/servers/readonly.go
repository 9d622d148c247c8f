package servers

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// Machine is what lspd knows of its instance and machine to build the
// read-only sandbox from, as terminald builds a tab's (sandbox.Spec).
type Machine struct {
	// Layout is the Phantom instance: its directories are protected and
	// its runtime directory hidden, and the private /tmp of each server
	// lives under it (tmp/lspd/), where the human can look.
	Layout paths.Layout
	// Home is the user's home directory.
	Home string
	// Launcher is the sandbox launcher (the phantom binary).
	Launcher string
	// Getenv reads lspd's environment, which servers inherit: TMPDIR,
	// XDG_RUNTIME_DIR (hidden behind the walls), ZDOTDIR.
	Getenv func(string) string
	// Walls is whether the launcher can build the namespace walls here
	// (sandbox.ProbeWalls succeeded).
	Walls bool
}

// terminals are the devices a tab's rules allow for its terminal. A
// language server has none (its standard streams are pipes), and without
// the walls /dev/pts is every tab's terminals: the read-only sandbox
// allows none of them.
var terminals = []string{"/dev/tty", "/dev/ptmx", "/dev/pts"}

// ReadOnly is the confinement of the calls of agents whose own sandbox
// lspd does not know or that have none (an unsandboxed tab, a process
// outside every tab). Its rules are sandbox.Compute's for a tab whose
// directory is a temporary directory, less the terminals: writes only to
// the temporary directories (TMPDIR, /tmp, /var/tmp, /dev/shm) and the
// byte sinks and sources of /dev, which every tab's sandbox allows too,
// so it is at least as tight as any of them; language servers write
// nothing else they need, since their caches are moved into a temporary
// directory (see cacheEnv).
//
// Where m.Walls, it has the walls as well: a private user and mount
// namespace, a private /dev without any other terminal, a private /tmp
// of each server's own (under m.Layout.Runtime's tmp/lspd/), the runtime
// directories hidden (the daemons', holder's and editor's sockets, the
// session bus), the sockets of the home directory and /run masked, every
// mount read-only but those temporary directories. Each server's
// workspace and program stay in view, read-only (see rulesFor).
func ReadOnly(key string, m Machine) (Confinement, error) {
	r, err := m.rules(key, "", nil)
	if err != nil {
		return Confinement{}, err
	}
	label := "in a read-only sandbox (writes only the temporary directories)"
	if !m.Walls {
		label = "in a read-only sandbox (writes only the temporary directories; no walls: " + sandbox.NamespaceHint + ")"
	}
	flags := r.Flags()
	if flags == nil {
		flags = []string{}
	}
	return Confinement{Key: key, Flags: flags, Label: label, readOnly: &m}, nil
}

// rules computes the read-only sandbox's rules; tmp is the host
// directory of the private /tmp ("" for none, or a placeholder), and
// keep what must stay in view behind the walls (a server's workspace and
// program).
func (m Machine) rules(key, tmp string, keep []string) (sandbox.Rules, error) {
	getenv := m.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	temps := sandbox.TempDirs(getenv)
	if m.Walls && tmp == "" {
		tmp = filepath.Join(m.Layout.Runtime, "tmp", "lspd", key)
	}
	dir, ok := scratchDir(temps, m.Walls && tmp != "")
	if !ok {
		// Only /tmp itself: it is then the shared one, as in a tab
		// without a private /tmp.
		tmp = ""
		if dir, ok = scratchDir(temps, false); !ok {
			return sandbox.Rules{}, fmt.Errorf("no temporary directory (%v) exists for the read-only sandbox of %s", temps, key)
		}
	}
	spec := sandbox.Spec{
		Dir: dir, Home: m.Home, Layout: m.Layout, Launcher: m.Launcher,
		TempDirs: temps, Getenv: getenv, Isolate: m.Walls, Programs: keep,
	}
	if m.Walls {
		spec.Tmp = tmp
	}
	r, err := sandbox.Compute(spec)
	if err != nil {
		return sandbox.Rules{}, fmt.Errorf("the read-only sandbox of %s: %w", key, err)
	}
	r.Devices = slices.DeleteFunc(r.Devices, func(d string) bool { return slices.Contains(terminals, d) })
	// Compute widens a tab's directory to its git working tree; the
	// read-only sandbox must write nothing but what it names, so a
	// scratch directory that some .git above it widened fails closed.
	for _, w := range r.WriteDirs {
		if !slices.ContainsFunc(append(slices.Clone(temps), r.Hide...), func(t string) bool { return within(w, resolveOr(t)) }) {
			return sandbox.Rules{}, fmt.Errorf("the read-only sandbox of %s would write %s, outside the temporary directories (is %s in a git working tree?); no language server is started in it", key, w, dir)
		}
	}
	return r, nil
}

// scratchDir picks the directory Compute takes for the tab's: the first
// existing temporary directory, writable anyway; with a private /tmp, not
// one inside /tmp, which the walls cover (Compute would bind it back).
func scratchDir(temps []string, privateTmp bool) (string, bool) {
	for _, t := range temps {
		p, ok := realPath(t)
		if ok && !(privateTmp && within(p, "/tmp")) {
			return p, true
		}
	}
	return "", false
}

// resolveOr is p with its links resolved, or p as named if it does not
// exist.
func resolveOr(p string) string {
	if r, ok := realPath(p); ok {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or lies beneath it; both clean.
func within(p, dir string) bool {
	return p == dir || dir == "/" || len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}
