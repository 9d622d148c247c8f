package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/paths"
)

// MaxRules bounds the number of writable paths of one tab. Expanding a
// crowded directory that contains a protected path (a /tmp holding
// Phantom's runtime directory, a home with thousands of entries) could
// otherwise make a command line larger than exec accepts.
const MaxRules = 4096

// Spec is what a sandboxed tab's rules are computed from.
type Spec struct {
	// Dir is the tab's directory (or worktree). It must be absolute and
	// exist.
	Dir string
	// Home is the user's home directory: "~/" in Paths, and where the
	// shell startup files are. It must be absolute.
	Home string
	// Paths are further writable paths, in config.Sandbox syntax: the
	// common list and the agent's own (config.Sandbox.PathsFor).
	Paths []string
	// Layout is the Phantom instance, whose directories are protected and
	// whose MCP socket stays reachable.
	Layout paths.Layout
	// Launcher is the phantom binary. It is protected: a tab that could
	// replace it would run its code the next time the human runs phantom.
	Launcher string
	// TempDirs are the temporary directories; TempDirs(os.Getenv) when
	// nil.
	TempDirs []string
	// Getenv reads the environment tabs inherit, for ZDOTDIR and
	// XDG_CONFIG_HOME (where more shell startup files live), and
	// XDG_RUNTIME_DIR (hidden when Isolate). nil reads nothing.
	Getenv func(string) string
	// Isolate asks for the walls a private mount namespace builds (see
	// the package doc): a private devpts, hidden runtime directories and
	// masked sockets. Only set it where ProbeWalls succeeded.
	Isolate bool
	// Tmp, with Isolate, is the host directory that becomes the tab's
	// private /tmp; the launcher creates it. "" keeps the shared /tmp.
	Tmp string
	// Sockets are path sockets the human allowed by name
	// (config.Sandbox.Sockets, in its syntax): they stay connectable.
	Sockets []string
	// Programs are files the tab must still be able to run where the
	// walls cover them (its program, found in a private /tmp's place);
	// the launcher is always one.
	Programs []string
}

// Rules are what a sandboxed tab may do beyond reading and executing.
// Every path is absolute, clean and free of symbolic links.
type Rules struct {
	// WriteDirs are directory trees the tab may write: files in them can
	// be created, written, removed, and renamed within and between them.
	WriteDirs []string
	// WriteFiles are single files the tab may write in place (replacing
	// one would take its directory).
	WriteFiles []string
	// Devices are device files, or directories of them, the tab may read,
	// write and use ioctl on.
	Devices []string
	// Sockets are directories of path sockets the tab may connect to;
	// enforced from Landlock ABI 9, and only without Isolate (whose walls
	// keep Landlock off the file system; Allow is their list).
	Sockets []string

	// Isolate runs the program in a new user and mount namespace, whose
	// walls the fields below describe (see the package doc); without it
	// they must be empty.
	Isolate bool
	// Tmp is the host directory mounted at /tmp; "" keeps the shared one.
	Tmp string
	// Hide are directories covered by a fresh, private tmpfs: the runtime
	// directories, where the daemons', the editor's, the session bus's
	// and most agents' sockets live.
	Hide []string
	// Keep are paths bound back into view where Tmp or Hide covered them:
	// the tab's own directory and writable paths, the MCP socket, the
	// allowed sockets.
	Keep []string
	// Allow are the path sockets the scan leaves connectable: the MCP
	// socket and those the human allowed.
	Allow []string
	// Scan are directory trees whose sockets, as they exist when the tab
	// starts, are masked (see MaxScan): the home directory, /run.
	Scan []string
	// Vouch are the sockets among Allow whose connections the gate
	// (terminald/sandbox/gate) starts with a line vouching for the
	// process that connected: the MCP socket, whose gateway tells callers
	// by their process.
	Vouch []string

	// gate is the descriptor the second stage hands the gate's listener
	// over on; 0 when nobody serves it (set by Run, never a flag).
	gate int
}

// TempDirs are the temporary directories of an environment: $TMPDIR (what
// os.TempDir returns when getenv is os.Getenv), /tmp, /var/tmp and
// /dev/shm.
func TempDirs(getenv func(string) string) []string {
	dirs := []string{"/tmp", "/var/tmp", "/dev/shm"}
	if t := getenv("TMPDIR"); filepath.IsAbs(t) {
		dirs = append([]string{filepath.Clean(t)}, dirs...)
	}
	return dirs
}

// Devices are the device files a program in a terminal needs: its
// terminal (/dev/tty, the PTYs), the sinks and sources of bytes.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// ShellStartupFiles are the files, relative to the home directory, that
// the human's later, unsandboxed programs run code from: shells when they
// start or end, and what logs in or starts at login (systemd user units,
// desktop autostart, login environment, ssh's authorized keys and
// config), git (hooks, aliases, pagers of every repository) and the
// directory of the human's own commands. A sandboxed tab must not write
// them, even one that starts in the home directory: that would be a way
// out of its sandbox at the human's next login, shell or git command.
var ShellStartupFiles = []string{
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
	".config/fish",
	".config/systemd", ".config/autostart", ".config/environment.d", ".pam_environment",
	".ssh", ".gnupg", ".gitconfig", ".config/git", ".local/bin",
}

// Compute works out the rules of a sandboxed tab. It reads the file system
// (to resolve symbolic links and list the directories it expands) but
// changes nothing; see EnsureDirs for the directories it may create first.
func Compute(s Spec) (Rules, error) {
	if !filepath.IsAbs(s.Home) {
		return Rules{}, fmt.Errorf("sandbox: home directory %q is not an absolute path", s.Home)
	}
	dir, err := realDir(s.Dir)
	if err != nil {
		return Rules{}, fmt.Errorf("sandbox: tab directory: %w", err)
	}
	protected, err := protectedPaths(s)
	if err != nil {
		return Rules{}, err
	}
	c := collector{protected: protected}
	if c.isProtected(dir) {
		return Rules{}, fmt.Errorf("sandbox: tab directory %s lies in a path a sandboxed tab must not write (Phantom's own files or a shell startup file); start it elsewhere", s.Dir)
	}
	for _, root := range worktreeRoots(dir, filepath.Clean(s.Home)) {
		c.add(root, true)
	}
	temps := s.TempDirs
	if temps == nil {
		temps = TempDirs(os.Getenv)
	}
	var private []string // temporary directories inside a private /tmp
	for _, t := range temps {
		if !filepath.IsAbs(t) {
			return Rules{}, fmt.Errorf("sandbox: temporary directory %q is not an absolute path", t)
		}
		if s.Isolate && s.Tmp != "" && within(filepath.Clean(t), "/tmp") {
			// Fresh and the tab's own: nothing of Phantom's is in it.
			private = append(private, filepath.Clean(t))
			continue
		}
		if d, err := realDir(t); err == nil {
			c.add(d, true)
		}
	}
	for _, p := range s.Paths {
		matches, err := userPaths(p, s.Home)
		if err != nil {
			return Rules{}, err
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
				c.add(m, fi.IsDir())
			}
		}
	}
	if c.err != nil {
		return Rules{}, c.err
	}
	r := Rules{WriteDirs: c.dirs, WriteFiles: c.files}
	r.tidy()
	for _, d := range Devices {
		if _, err := os.Stat(d); err == nil {
			r.Devices = append(r.Devices, d)
		}
	}
	if s.Layout.MCPSocket != "" {
		r.Sockets = []string{resolve(filepath.Dir(s.Layout.MCPSocket))}
	}
	if s.Isolate {
		if err := r.wall(s, dir, private); err != nil {
			return Rules{}, err
		}
	}
	return r, nil
}

// EnsureDirs creates, with mode 0700, each directory that s.Paths names
// with a trailing "/" and that is missing, so that an agent's first run in
// a sandbox can write its configuration there: Compute only grants what
// exists. Patterns are left alone.
func EnsureDirs(s Spec) error {
	if !filepath.IsAbs(s.Home) {
		return fmt.Errorf("sandbox: home directory %q is not an absolute path", s.Home)
	}
	for _, p := range s.Paths {
		if !strings.HasSuffix(p, "/") || hasMeta(p) {
			continue
		}
		dir, err := expandHome(p, s.Home)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("sandbox: create the agent directory %s: %w", dir, err)
		}
	}
	return nil
}

// collector gathers writable roots, expanding those that hold a protected
// path.
type collector struct {
	protected   []string
	dirs, files []string
	err         error
}

// add records the writable root p (a directory when dir), which must be
// a resolved absolute path.
func (c *collector) add(p string, dir bool) {
	switch {
	case c.err != nil, c.isProtected(p):
	case dir && c.holdsProtected(p):
		c.expand(p)
	case dir:
		c.dirs = append(c.dirs, p)
	default:
		c.files = append(c.files, p)
	}
}

// expand adds the entries of dir instead of dir itself. Symbolic links are
// skipped, because a rule follows them to wherever they point; so are
// sockets, FIFOs and devices. A directory that cannot be listed adds
// nothing: unwritable is the safe side.
func (c *collector) expand(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if len(c.dirs)+len(c.files) >= MaxRules && c.err == nil {
			c.err = fmt.Errorf("sandbox: more than %d writable paths: %s holds too many entries to keep Phantom's own files out of reach one by one; start the tab in a narrower directory", MaxRules, dir)
		}
		if c.err != nil {
			return
		}
		switch p := filepath.Join(dir, e.Name()); {
		case e.Type()&fs.ModeSymlink != 0:
		case e.IsDir():
			c.add(p, true)
		case e.Type().IsRegular():
			c.add(p, false)
		}
	}
}

// isProtected reports whether p is a protected path or lies beneath one.
func (c *collector) isProtected(p string) bool {
	return slices.ContainsFunc(c.protected, func(q string) bool { return within(p, q) })
}

// holdsProtected reports whether a protected path lies strictly beneath p.
func (c *collector) holdsProtected(p string) bool {
	return slices.ContainsFunc(c.protected, func(q string) bool { return q != p && within(q, p) })
}

// tidy sorts the rules and drops duplicates and paths a writable directory
// already covers.
func (r *Rules) tidy() {
	kept := map[string]bool{}
	covered := func(p string) bool {
		for d := p; ; d = filepath.Dir(d) {
			if kept[d] {
				return true
			}
			if d == "/" {
				return false
			}
		}
	}
	// Shorter first, so that a covering directory is kept before what it
	// covers.
	byLength := slices.Clone(r.WriteDirs)
	slices.SortFunc(byLength, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	var dirs []string
	for _, d := range byLength {
		if !covered(d) {
			kept[d] = true
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	r.WriteDirs = dirs
	slices.Sort(r.WriteFiles)
	r.WriteFiles = slices.DeleteFunc(slices.Compact(r.WriteFiles), covered)
}

// protectedPaths lists, resolved, what no sandboxed tab may write.
func protectedPaths(s Spec) ([]string, error) {
	l := s.Layout
	list := []string{l.Config, l.State, l.Runtime, l.Logs, s.Launcher}
	if l.MCPSocket != "" {
		list = append(list, filepath.Dir(l.MCPSocket))
	}
	homes := []string{s.Home}
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if z := getenv("ZDOTDIR"); filepath.IsAbs(z) {
		homes = append(homes, z)
	}
	for _, h := range homes {
		for _, f := range ShellStartupFiles {
			list = append(list, filepath.Join(h, f))
		}
	}
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		list = append(list, filepath.Join(x, "fish"))
	}
	var out []string
	for _, p := range list {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: protected path %q is not an absolute path", p)
		}
		// Both spellings: the path as named (a symbolic link in an
		// expanded directory must stay) and where it leads (what a write
		// through the link would change).
		out = append(out, filepath.Clean(p), resolve(p))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// userPaths expands one config.Sandbox path (see expandHome) to what it
// names or, for a pattern, matches now, resolved. What does not exist is
// left out.
func userPaths(p, home string) ([]string, error) {
	p, err := expandHome(p, home)
	if err != nil {
		return nil, err
	}
	matches := []string{p}
	if hasMeta(p) {
		matches, _ = filepath.Glob(p) // expandHome checked the pattern
	}
	var out []string
	for _, m := range matches {
		if r, err := filepath.EvalSymlinks(m); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// expandHome checks a config.Sandbox path, drops its trailing "/" and
// turns a leading "~/" into home.
func expandHome(p, home string) (string, error) {
	if err := config.CheckSandboxPath(p); err != nil {
		return "", fmt.Errorf("sandbox: %w", err)
	}
	p = strings.TrimSuffix(p, "/")
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		p = filepath.Join(home, rest)
	}
	return p, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// realDir resolves an absolute path that must name a directory.
func realDir(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", p, err)
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%q is not a directory", p)
	}
	return r, nil
}

// resolve returns the absolute path p with every symbolic link of its
// existing part resolved; what does not exist yet is appended as named.
func resolve(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// within reports whether p is dir or lies beneath it; both clean.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
