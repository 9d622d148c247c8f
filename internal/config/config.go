// Package config reads the user's Phantom settings from
// $XDG_CONFIG_HOME/phantom/config.json. Every setting has a default, so a
// missing file is not an error; an invalid one is, and says in the file's
// own words where (line and column), what is wrong and what to write
// instead. It also holds what other packages check settings against: the
// table of attach's prefix commands with their default keys (keys.go) and
// the status line's formats and colours (status.go).
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	// Keys binds keys typed after the prefix in attach to commands (see
	// Commands), over the default keys: {"|": "split-right"}. Binding a
	// key to "none" takes its default away.
	Keys map[string]string `json:"keys,omitempty"`
	// Status configures attach's status line.
	Status Status `json:"status"`
	// RepeatTime is tmux's repeat-time, in milliseconds: after a
	// repeatable command (the resize keys), its keys repeat without the
	// prefix for this long. Default DefaultRepeatTime; 0 turns it off.
	RepeatTime *int `json:"repeat_time,omitempty"`
	// Restore, unless false, saves the session (windows, tabs, names,
	// directories, groups, layouts) as it changes and brings it back at
	// `phantom up` after a down or a reboot. Default true.
	Restore *bool `json:"restore,omitempty"`
	// TrueColor says when attach sends 24-bit colour: TrueColorAuto
	// (the default), TrueColorOn or TrueColorOff (truecolor.go).
	TrueColor string `json:"truecolor,omitempty"`
	// Attention says how bells, sheets and agents call the human
	// (attention.go).
	Attention Attention `json:"attention"`
}

// DefaultRepeatTime is tmux's repeat-time, in milliseconds.
const DefaultRepeatTime = 500

// maxRepeatTime bounds repeat_time: longer would keep keys from the tab
// by surprise.
const maxRepeatTime = 10_000

// Repeat is how long a repeatable command's keys repeat without the
// prefix, in milliseconds.
func (c Config) Repeat() int {
	if c.RepeatTime == nil {
		return DefaultRepeatTime
	}
	return *c.RepeatTime
}

// RestoreEnabled reports whether the session is saved and restored.
func (c Config) RestoreEnabled() bool { return c.Restore == nil || *c.Restore }

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

// FileError is a settings file that cannot be used: Err says where in it
// and what is wrong.
type FileError struct {
	// Path is the settings file.
	Path string
	// Err is what is wrong, without the path: the status line of attach
	// shows it alone.
	Err error
}

// Error names the file and what is wrong.
func (e *FileError) Error() string { return "settings " + e.Path + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *FileError) Unwrap() error { return e.Err }

// Path is the settings file of the config directory dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Load reads dir/config.json and fills in defaults. A missing file means
// every default.
func Load(dir string) (Config, error) {
	path := Path(dir)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		b = nil
	case err != nil:
		return Config{}, &FileError{Path: path, Err: fmt.Errorf("cannot read it: %w", errors.Unwrap(err))}
	}
	return Parse(path, b)
}

// Parse checks the settings b read from path (which only names the file
// in errors) and fills in defaults. Every error names the file, where in
// it, what is wrong and what to write instead.
func Parse(path string, b []byte) (Config, error) {
	var c Config
	if err := decode(b, &c); err != nil {
		return Config{}, &FileError{Path: path, Err: err}
	}
	if err := c.check(); err != nil {
		return Config{}, &FileError{Path: path, Err: err}
	}
	if c.ScrollbackLines == 0 {
		c.ScrollbackLines = DefaultScrollback
	}
	agents := DefaultAgents()
	maps.Copy(agents, c.Agents)
	c.Agents = agents
	c.Sandbox = c.Sandbox.withDefaults()
	c.Attention = c.Attention.withDefaults()
	if c.Shell == "" {
		c.Shell = os.Getenv("SHELL")
	}
	if c.Shell == "" {
		c.Shell = "/bin/bash"
	}
	if c.Status.Right == "" {
		c.Status.Right = DefaultStatusRight
	}
	if c.RepeatTime == nil {
		ms := DefaultRepeatTime
		c.RepeatTime = &ms
	}
	if c.Restore == nil {
		on := true
		c.Restore = &on
	}
	if c.TrueColor == "" {
		c.TrueColor = TrueColorAuto
	}
	return c, nil
}

// check validates the settings as read, before defaults.
func (c Config) check() error {
	if c.ScrollbackLines < 0 {
		return fmt.Errorf("scrollback_lines must not be negative, got %d; leave it out for the default, %d", c.ScrollbackLines, DefaultScrollback)
	}
	if c.WorktreeRoot != "" && !filepath.IsAbs(c.WorktreeRoot) {
		return fmt.Errorf("worktree_root must be an absolute path, got %q", c.WorktreeRoot)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Agents)) {
		if argv := c.Agents[name]; len(argv) == 0 || argv[0] == "" {
			return fmt.Errorf(`agent %q has an empty command: write the program and its arguments, e.g. ["my-agent", "--fast"]`, name)
		}
	}
	if err := c.Sandbox.check(); err != nil {
		return err
	}
	if c.RepeatTime != nil && (*c.RepeatTime < 0 || *c.RepeatTime > maxRepeatTime) {
		return fmt.Errorf("repeat_time must be from 0 (off) to %d milliseconds, got %d; leave it out for tmux's %d",
			maxRepeatTime, *c.RepeatTime, DefaultRepeatTime)
	}
	prefix, err := ParsePrefix(c.Prefix)
	if err != nil {
		return err
	}
	if err := checkKeys(c.Keys, prefix); err != nil {
		return err
	}
	if err := checkTrueColor(c.TrueColor); err != nil {
		return err
	}
	if err := c.Status.check(); err != nil {
		return err
	}
	return c.Attention.check()
}

// IsAgentProgram reports whether a process named name (its command name,
// as /proc/PID/comm gives it: at most 15 bytes) runs one of the configured
// agents: the base name of an agent's program, or the agent's own name
// (node-based CLIs such as Claude Code set their process title to it).
func (c *Config) IsAgentProgram(name string) bool {
	if c == nil || name == "" {
		return false
	}
	for agent, argv := range c.Agents {
		if len(argv) == 0 {
			continue
		}
		for _, n := range []string{agent, filepath.Base(argv[0])} {
			if n == name || len(n) > maxComm && n[:maxComm] == name {
				return true
			}
		}
	}
	return false
}

// maxComm is the longest command name the kernel keeps (TASK_COMM_LEN-1).
const maxComm = 15

// AgentNames lists the configured agent names, sorted.
func (c Config) AgentNames() []string {
	names := make([]string, 0, len(c.Agents))
	for n := range c.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
