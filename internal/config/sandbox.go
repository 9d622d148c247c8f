package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Sandbox holds the settings of sandboxed tabs: tabs started with an agent,
// or with `phantom new --sandbox`. Such a tab may write only in its own
// directory, the temporary directories, a few devices and the paths listed
// here (terminald/sandbox computes the exact rules).
//
// A path is absolute ("/opt/cache") or starts with "~/" for the home
// directory. A trailing "/" marks a directory that terminald creates (mode
// 0700) when it is missing, so that an agent's first run can write into it.
// Shell patterns ("~/.cache/claude*") match what exists when the tab
// starts. Anything else that does not exist when the tab starts stays
// unwritable: the sandbox only allows, and can only allow what exists.
type Sandbox struct {
	// AgentPaths maps an agent name to its own configuration and cache
	// paths. A configured agent's list replaces its default list; an empty
	// list gives that agent nothing beyond the common paths.
	AgentPaths map[string][]string `json:"agent_paths,omitempty"`
	// Writable lists paths every sandboxed tab may write, e.g. a build
	// cache. Empty by default on purpose: a cache or tool directory that
	// unsandboxed programs trust (a build cache, ~/.cargo/bin) is a way out
	// of the sandbox for whoever can write it.
	Writable []string `json:"writable,omitempty"`
	// Sockets lists path (named) Unix sockets a sandboxed tab may still
	// connect to, e.g. "~/.docker/run/docker.sock": by default a sandboxed
	// tab reaches no socket but the MCP socket and its own. Each is one
	// socket, named exactly (no pattern, no trailing "/"); allowing one
	// hands the tab whatever that socket's server lets its user do.
	Sockets []string `json:"sockets,omitempty"`
}

// DefaultAgentPaths are the configuration and cache paths of the agents
// Phantom knows (DefaultAgents), as their current releases use them:
// only what each needs to run. Claude Code, Codex and Gemini CLI get none
// here: they keep their state in their agent home (DefaultAgentHomes),
// which terminald adds to their tabs' writable paths, so their files in
// your home, which your unsandboxed runs execute, stay out of reach. The
// others still write their own config directories: a channel into your
// later plain-shell runs of that agent (README, security model).
func DefaultAgentPaths() map[string][]string {
	return map[string][]string{
		"claude":   {},
		"codex":    {},
		"gemini":   {},
		"cursor":   {"~/.cursor/"},
		"opencode": {"~/.config/opencode/", "~/.local/share/opencode/", "~/.local/state/opencode/", "~/.cache/opencode/"},
		"aider":    {"~/.aider/"},
	}
}

// PathsFor returns the writable paths, beyond the tab's directory and the
// temporary directories, of a sandboxed tab running agent ("" for a tab
// without one): the common Writable list, then the agent's own.
func (s Sandbox) PathsFor(agent string) []string {
	out := slices.Clone(s.Writable)
	if agent != "" {
		out = append(out, s.AgentPaths[agent]...)
	}
	return out
}

// withDefaults returns s with every default agent list that s does not
// configure itself.
func (s Sandbox) withDefaults() Sandbox {
	paths := DefaultAgentPaths()
	maps.Copy(paths, s.AgentPaths)
	s.AgentPaths = paths
	return s
}

// check validates every path of s.
func (s Sandbox) check() error {
	for _, p := range s.Writable {
		if err := CheckSandboxPath(p); err != nil {
			return fmt.Errorf("sandbox.writable: %w", err)
		}
	}
	for _, p := range s.Sockets {
		if err := CheckSandboxSocket(p); err != nil {
			return fmt.Errorf("sandbox.sockets: %w", err)
		}
	}
	for _, agent := range slices.Sorted(maps.Keys(s.AgentPaths)) {
		for _, p := range s.AgentPaths[agent] {
			if err := CheckSandboxPath(p); err != nil {
				return fmt.Errorf("sandbox.agent_paths[%q]: %w", agent, err)
			}
		}
	}
	return nil
}

// CheckSandboxPath reports whether p is a path the sandbox settings accept:
// absolute or "~/"-relative, in clean form (no "..", "." or doubled
// slashes, which would make a reader guess what is meant), with a valid
// pattern if it has one.
func CheckSandboxPath(p string) error {
	rest, home := strings.CutPrefix(p, "~/")
	switch {
	case p == "":
		return fmt.Errorf("an empty path")
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q contains a NUL byte", p)
	case !home && strings.HasPrefix(p, "~"):
		return fmt.Errorf("path %q: only ~/ (your own home) is understood", p)
	case !home && !filepath.IsAbs(p):
		return fmt.Errorf("path %q is neither absolute nor under ~/", p)
	}
	body := p
	if home {
		body = rest
	}
	body = strings.TrimSuffix(body, "/")
	switch {
	case body == "" && home:
		return fmt.Errorf("path %q is the whole home directory; name what inside it may be written", p)
	case body == "":
		return fmt.Errorf("path %q is the whole file system", p)
	case filepath.Clean(body) != body || body == ".." || strings.HasPrefix(body, "../"):
		return fmt.Errorf("path %q is not in clean form (no .., . or //)", p)
	}
	if _, err := filepath.Match(body, ""); err != nil {
		return fmt.Errorf("path %q: bad pattern: %w", p, err)
	}
	return nil
}

// CheckSandboxSocket reports whether p names one socket the way
// sandbox.sockets accepts: a CheckSandboxPath path without a pattern or a
// trailing "/", since a socket is allowed by its exact name.
func CheckSandboxSocket(p string) error {
	if err := CheckSandboxPath(p); err != nil {
		return err
	}
	switch {
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("socket %q ends in /: name the socket itself, not a directory", p)
	case strings.ContainsAny(p, `*?[\`):
		return fmt.Errorf("socket %q is a pattern: name each socket exactly", p)
	}
	return nil
}
