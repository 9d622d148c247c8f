// Package config reads the user's Phantom settings from
// $XDG_CONFIG_HOME/phantom/config.json. Every setting has a default, so a
// missing file is not an error; a malformed one is, and names the file and
// what was wrong.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// FileName is the settings file inside the config directory.
const FileName = "config.json"

// DefaultScrollback is the number of scrollback lines a tab keeps.
const DefaultScrollback = 100_000

// Config is the user's settings.
type Config struct {
	// Shell is the program new tabs run; default $SHELL, else /bin/bash.
	Shell string `json:"shell,omitempty"`
	// ScrollbackLines is how many lines each tab keeps; default 100,000.
	ScrollbackLines int `json:"scrollback_lines,omitempty"`
	// Agents maps an agent name (what create_terminal's agent names) to the
	// command line that starts it. The defaults cover the common agents.
	Agents map[string][]string `json:"agents,omitempty"`
	// Prefix is the attach key prefix, e.g. "C-\\".
	Prefix string `json:"prefix,omitempty"`
	// WorktreeRoot, when set, is where gitd puts new worktrees:
	// <worktree_root>/<repository name>/<branch>. Default: beside each
	// repository, in <its parent>/<its name>.worktrees. Must be absolute.
	WorktreeRoot string `json:"worktree_root,omitempty"`
	// Sandbox is what sandboxed tabs (agent tabs, `phantom new --sandbox`)
	// may write besides their directory and the temporary directories.
	Sandbox Sandbox `json:"sandbox"`
	// LanguageServers configures lspd's servers by language ("go", "c",
	// "cpp", "python" or a new one), over the built-in ones. What
	// configure_language_server changes is kept in lspd's own state file
	// and wins over these.
	LanguageServers map[string]LanguageServer `json:"language_servers,omitempty"`
}

// LanguageServer says how one language's server starts; unset fields keep
// the built-in values.
type LanguageServer struct {
	// Command is the program and its arguments, e.g. ["gopls", "serve"].
	Command []string `json:"command,omitempty"`
	// Env are extra environment variables for it.
	Env map[string]string `json:"env,omitempty"`
	// InitializationOptions is sent with LSP's initialize.
	InitializationOptions json.RawMessage `json:"initialization_options,omitempty"`
	// Settings answer the server's workspace/configuration requests.
	Settings json.RawMessage `json:"settings,omitempty"`
	// Extensions are the file name extensions the language covers.
	Extensions []string `json:"extensions,omitempty"`
}

// DefaultAgents are the agents known without configuration.
func DefaultAgents() map[string][]string {
	return map[string][]string{
		"claude":   {"claude"},
		"codex":    {"codex"},
		"gemini":   {"gemini"},
		"cursor":   {"cursor-agent"},
		"opencode": {"opencode"},
		"aider":    {"aider"},
	}
}

// Load reads dir/config.json and fills in defaults.
func Load(dir string) (Config, error) {
	var c Config
	path := filepath.Join(dir, FileName)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return Config{}, fmt.Errorf("read settings %s: %w", path, err)
	default:
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("settings %s: %w", path, err)
		}
	}
	if c.ScrollbackLines < 0 {
		return Config{}, fmt.Errorf("settings %s: scrollback_lines must not be negative, got %d", path, c.ScrollbackLines)
	}
	if c.WorktreeRoot != "" && !filepath.IsAbs(c.WorktreeRoot) {
		return Config{}, fmt.Errorf("settings %s: worktree_root must be an absolute path, got %q", path, c.WorktreeRoot)
	}
	if c.ScrollbackLines == 0 {
		c.ScrollbackLines = DefaultScrollback
	}
	agents := DefaultAgents()
	for name, argv := range c.Agents {
		if len(argv) == 0 || argv[0] == "" {
			return Config{}, fmt.Errorf("settings %s: agent %q has an empty command", path, name)
		}
		agents[name] = argv
	}
	c.Agents = agents
	if err := c.Sandbox.check(); err != nil {
		return Config{}, fmt.Errorf("settings %s: %w", path, err)
	}
	c.Sandbox = c.Sandbox.withDefaults()
	if c.Shell == "" {
		c.Shell = os.Getenv("SHELL")
	}
	if c.Shell == "" {
		c.Shell = "/bin/bash"
	}
	return c, nil
}

// AgentNames lists the configured agent names, sorted.
func (c Config) AgentNames() []string {
	names := make([]string, 0, len(c.Agents))
	for n := range c.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
