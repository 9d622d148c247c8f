// Package paths computes where Phantom keeps its sockets, runtime files,
// state and configuration, honouring the XDG base-directory variables and
// HOME so that a test can run a fully isolated instance by pointing them at
// temporary directories.
package paths

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// bundleID names this build's instance. Release builds set it at link time:
//
//	-ldflags "-X github.com/phantom-dev/phantom/internal/paths.bundleID=dev.phantom.Phantom"
//
// so that a development build has its own sockets and never talks to the
// installed release.
var bundleID = "dev.phantom.Phantom.dev"

// BundleID returns the identifier of this build.
func BundleID() string { return bundleID }

// Daemons lists the daemon names in start order.
var Daemons = []string{"terminald", "authz", "gateway", "gitd", "lspd", "editord"}

// Layout is every path one Phantom instance uses.
type Layout struct {
	// Runtime is the private 0700 directory for daemon sockets, pid files
	// and tab-state files: $XDG_RUNTIME_DIR/<bundle id>, or
	// /tmp/<bundle id>-<uid> when XDG_RUNTIME_DIR is unset.
	Runtime string
	// MCPSocket is the gateway's socket, ~/.cache/phantom/<bundle id>.sock.
	MCPSocket string
	// State holds what survives restarts (standing grants):
	// $XDG_STATE_HOME/phantom.
	State string
	// Config holds the user's settings: $XDG_CONFIG_HOME/phantom.
	Config string
	// Logs holds the daemons' logs.
	Logs string

	// addrs are daemon addresses set in the environment as
	// PHANTOM_<NAME>_ADDR (the compose stack uses tcp://).
	addrs map[string]string
}

// Getenv is how Layout reads the environment; os.Getenv in production.
type Getenv func(string) string

// FromEnv computes the layout from the environment.
func FromEnv(getenv Getenv) (Layout, error) {
	home := getenv("HOME")
	dir := func(xdg, fallback string) (string, error) {
		if v := getenv(xdg); filepath.IsAbs(v) {
			return v, nil
		}
		if !filepath.IsAbs(home) {
			return "", fmt.Errorf("paths: neither %s nor HOME (%q) is an absolute path", xdg, home)
		}
		return filepath.Join(home, fallback), nil
	}
	cache, err := dir("XDG_CACHE_HOME", ".cache")
	if err != nil {
		return Layout{}, err
	}
	state, err := dir("XDG_STATE_HOME", ".local/state")
	if err != nil {
		return Layout{}, err
	}
	config, err := dir("XDG_CONFIG_HOME", ".config")
	if err != nil {
		return Layout{}, err
	}
	runtime := getenv("XDG_RUNTIME_DIR")
	if filepath.IsAbs(runtime) {
		runtime = filepath.Join(runtime, bundleID)
	} else {
		runtime = filepath.Join(os.TempDir(), bundleID+"-"+strconv.Itoa(os.Getuid()))
	}
	var addrs map[string]string // nil when none is set
	for _, name := range Daemons {
		if v := getenv("PHANTOM_" + strings.ToUpper(name) + "_ADDR"); v != "" {
			if addrs == nil {
				addrs = map[string]string{}
			}
			addrs[name] = v
		}
	}
	return Layout{
		addrs:     addrs,
		Runtime:   runtime,
		MCPSocket: filepath.Join(cache, "phantom", bundleID+".sock"),
		State:     filepath.Join(state, "phantom"),
		Config:    filepath.Join(config, "phantom"),
		Logs:      filepath.Join(state, "phantom", "logs"),
	}, nil
}

// Default is FromEnv(os.Getenv).
func Default() (Layout, error) { return FromEnv(os.Getenv) }

// DaemonSocket is the default Unix socket of the named daemon.
func (l Layout) DaemonSocket(name string) string {
	return filepath.Join(l.Runtime, name+".sock")
}

// DaemonAddr is where the named daemon listens and is dialled:
// PHANTOM_<NAME>_ADDR from the environment the layout was read from, else
// its socket in the runtime directory.
func (l Layout) DaemonAddr(name string) string {
	if a, ok := l.addrs[name]; ok {
		return a
	}
	return "unix://" + l.DaemonSocket(name)
}

// PIDFile is where the named daemon records its pid and start time once
// it serves (see daemon.WritePIDFile).
func (l Layout) PIDFile(name string) string { return filepath.Join(l.Runtime, name+".pid") }

// TabStateDir holds terminald's tab-state files.
func (l Layout) TabStateDir() string { return filepath.Join(l.Runtime, "tabs") }

// EditorSocket is where the editor (Neovim) of window listens: in the
// private runtime directory, so only the human's own processes reach it.
// The window id is reduced to characters safe in a file name.
func (l Layout) EditorSocket(window string) string {
	safe := []byte(window)
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			safe[i] = '_'
		}
	}
	return filepath.Join(l.Runtime, "editor-"+string(safe)+".sock")
}

// ShellDir holds the shell-integration scripts terminald writes.
func (l Layout) ShellDir() string { return filepath.Join(l.Runtime, "shell") }

// EnsurePrivateDir creates dir (and parents) and makes sure dir itself is a
// directory owned by us with mode 0700: other users must not reach sockets or
// tab-state files inside. An existing directory with wider permissions is
// tightened rather than trusted; one owned by someone else is an error.
func EnsurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create private directory %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("stat private directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("private directory %s: not a directory", dir)
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("private directory %s: owned by uid %d, not %d", dir, uid, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("restrict private directory %s to 0700: %w", dir, err)
		}
	}
	return nil
}
