package agentconf

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EntryName is the name of our entry in every agent's list of MCP servers.
const EntryName = "phantom"

// codexToolTimeout is Codex's tool_timeout_sec for our entry. A call can
// wait on a permission sheet for 50 s, after waiting its turn behind other
// sheets, and Codex gives up on a tool call after 60 s by default.
const codexToolTimeout = 120

// bridgeEnv is what Codex must pass to the bridge: Codex starts MCP servers
// with a fixed dozen variables unless env_vars lists more. With these the
// bridge finds the socket of a non-default XDG_CACHE_HOME and sends the
// tab's state as a hint (the gateway identifies the tab from the process
// tree either way).
var bridgeEnv = []string{"XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "HOME", "PHANTOM_MCP_SOCKET", "PHANTOM_TAB_ID", "PHANTOM_TAB_STATE"}

// Env is where agents keep their configuration, from the environment.
type Env struct {
	// Home is $HOME.
	Home string
	// ConfigHome is $XDG_CONFIG_HOME, else ~/.config.
	ConfigHome string
	// CodexHome is $CODEX_HOME, else ~/.codex.
	CodexHome string
	// ClaudeConfigDir is $CLAUDE_CONFIG_DIR, or "" when unset: Claude Code
	// then keeps ~/.claude and ~/.claude.json.
	ClaudeConfigDir string
	// GeminiHome is $GEMINI_CLI_HOME, else Home: Gemini CLI keeps .gemini
	// under it.
	GeminiHome string
}

// EnvFrom reads the environment through getenv (os.Getenv in production).
func EnvFrom(getenv func(string) string) (Env, error) {
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return Env{}, fmt.Errorf("HOME (%q) is not an absolute path, so agents' configuration files cannot be found", home)
	}
	e := Env{Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex")}
	if v := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(v) { // relative values are ignored, as the XDG spec says
		e.ConfigHome = v
	}
	var err error
	if v := getenv("CODEX_HOME"); v != "" {
		if e.CodexHome, err = filepath.Abs(v); err != nil {
			return Env{}, fmt.Errorf("CODEX_HOME (%q): %w", v, err)
		}
	}
	if v := getenv("CLAUDE_CONFIG_DIR"); v != "" {
		if e.ClaudeConfigDir, err = filepath.Abs(v); err != nil {
			return Env{}, fmt.Errorf("CLAUDE_CONFIG_DIR (%q): %w", v, err)
		}
	}
	e.GeminiHome = home
	if v := getenv("GEMINI_CLI_HOME"); v != "" {
		if e.GeminiHome, err = filepath.Abs(v); err != nil {
			return Env{}, fmt.Errorf("GEMINI_CLI_HOME (%q): %w", v, err)
		}
	}
	return e, nil
}

// Launch is how an agent starts the bridge of this Phantom.
type Launch struct {
	// Binary is the absolute path of the phantom binary, symlinks resolved.
	Binary string
	// Socket is the absolute path of this instance's MCP socket, passed to
	// agents that start the bridge without the environment it needs.
	Socket string
}

// format is one kind of configuration file: it reads, sets and removes the
// entry called name in the file's servers table.
type format interface {
	get(src []byte, name string) (any, bool, error)
	set(src []byte, name string, entry fields) ([]byte, error)
	remove(src []byte, name string) ([]byte, bool, error)
}

// Agent is one coding agent whose configuration we write.
type Agent struct {
	// Name is what the user types and what the bridge gets as --client.
	Name string
	// Title is the agent's own name.
	Title string
	// Format names the file format, for people.
	Format string
	// Servers names the object (or TOML table) holding MCP servers.
	Servers string

	aliases []string
	file    format
	// userFile is the user-scope file; home the directories whose existence
	// says the agent is installed.
	userFile func(Env) string
	home     func(Env) []string
	// project is the project file relative to the project directory, in
	// order of preference when an agent reads several; nil when the agent
	// reads none.
	project []string
	// entry builds our entry from the command line that starts the bridge.
	entry func(command string, args []string) fields
	// pinSocket passes --socket: the agent starts MCP servers with an
	// environment that may not lead the bridge to this instance's socket.
	pinSocket bool
}

// stdioEntry is {"type": "stdio", "command": …, "args": […]}.
func stdioEntry(command string, args []string) fields {
	return fields{{"type", "stdio"}, {"command", command}, {"args", args}}
}

// commandEntry is {"command": …, "args": […]}: agents that infer stdio.
func commandEntry(command string, args []string) fields {
	return fields{{"command", command}, {"args", args}}
}

// agents is the one table of what we know about each agent.
//
// Environment: Claude Code, Gemini CLI and opencode pass their whole
// environment to MCP servers; Codex passes what env_vars lists. The editors
// (Cursor, VS Code, Windsurf, Zed) usually run outside any Phantom tab,
// started from a desktop whose variables need not match the shell that runs
// Phantom, so their entries name the socket.
var agents = []Agent{
	{
		Name: "claude", Title: "Claude Code", aliases: []string{"claude-code"},
		Format: "JSON", Servers: "mcpServers", file: jsonFile{plainJSON, []string{"mcpServers"}},
		userFile: func(e Env) string {
			if e.ClaudeConfigDir != "" {
				return filepath.Join(e.ClaudeConfigDir, ".claude.json")
			}
			return filepath.Join(e.Home, ".claude.json")
		},
		home: func(e Env) []string {
			if e.ClaudeConfigDir != "" {
				return []string{e.ClaudeConfigDir}
			}
			return []string{filepath.Join(e.Home, ".claude"), filepath.Join(e.Home, ".claude.json")}
		},
		project: []string{".mcp.json"},
		entry:   stdioEntry,
	},
	{
		Name: "codex", Title: "Codex CLI", aliases: []string{"codex-cli"},
		Format: "TOML", Servers: "mcp_servers", file: tomlFile{[]string{"mcp_servers"}},
		userFile: func(e Env) string { return filepath.Join(e.CodexHome, "config.toml") },
		home:     func(e Env) []string { return []string{e.CodexHome} },
		entry: func(command string, args []string) fields {
			return fields{{"command", command}, {"args", args}, {"env_vars", bridgeEnv}, {"tool_timeout_sec", codexToolTimeout}}
		},
	},
	{
		Name: "cursor", Title: "Cursor",
		Format: "JSON", Servers: "mcpServers", file: jsonFile{plainJSON, []string{"mcpServers"}},
		userFile:  func(e Env) string { return filepath.Join(e.Home, ".cursor", "mcp.json") },
		home:      func(e Env) []string { return []string{filepath.Join(e.Home, ".cursor")} },
		project:   []string{".cursor/mcp.json"},
		entry:     stdioEntry,
		pinSocket: true,
	},
	{
		Name: "gemini", Title: "Gemini CLI", aliases: []string{"gemini-cli"},
		Format: "JSON with comments", Servers: "mcpServers", file: jsonFile{jsonComments, []string{"mcpServers"}},
		userFile: func(e Env) string { return filepath.Join(e.GeminiHome, ".gemini", "settings.json") },
		home:     func(e Env) []string { return []string{filepath.Join(e.GeminiHome, ".gemini")} },
		project:  []string{".gemini/settings.json"},
		entry:    commandEntry,
	},
	{
		Name: "opencode", Title: "opencode",
		Format: "JSONC", Servers: "mcp", file: jsonFile{jsonc, []string{"mcp"}},
		userFile: func(e Env) string {
			return preferExisting(filepath.Join(e.ConfigHome, "opencode"), "opencode.json", "opencode.jsonc")
		},
		home:    func(e Env) []string { return []string{filepath.Join(e.ConfigHome, "opencode")} },
		project: []string{"opencode.json", "opencode.jsonc"},
		entry: func(command string, args []string) fields {
			return fields{{"type", "local"}, {"command", append([]string{command}, args...)}, {"enabled", true}}
		},
	},
	{
		Name: "vscode", Title: "VS Code", aliases: []string{"code", "vs-code"},
		Format: "JSONC", Servers: "servers", file: jsonFile{jsonc, []string{"servers"}},
		userFile:  func(e Env) string { return filepath.Join(e.ConfigHome, "Code", "User", "mcp.json") },
		home:      func(e Env) []string { return []string{filepath.Join(e.ConfigHome, "Code")} },
		project:   []string{".vscode/mcp.json"},
		entry:     stdioEntry,
		pinSocket: true,
	},
	{
		Name: "windsurf", Title: "Windsurf",
		Format: "JSON", Servers: "mcpServers", file: jsonFile{plainJSON, []string{"mcpServers"}},
		userFile:  func(e Env) string { return filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json") },
		home:      func(e Env) []string { return []string{filepath.Join(e.Home, ".codeium", "windsurf")} },
		entry:     commandEntry,
		pinSocket: true,
	},
	{
		Name: "zed", Title: "Zed",
		Format: "JSONC", Servers: "context_servers", file: jsonFile{jsonc, []string{"context_servers"}},
		userFile: func(e Env) string { return filepath.Join(e.ConfigHome, "zed", "settings.json") },
		home:     func(e Env) []string { return []string{filepath.Join(e.ConfigHome, "zed")} },
		project:  []string{".zed/settings.json"},
		entry: func(command string, args []string) fields {
			return fields{{"source", "custom"}, {"command", command}, {"args", args}}
		},
		pinSocket: true,
	},
}

// preferExisting returns the first of names that exists in dir, else the
// first name: agents that read either of two files get ours in the one
// the user already has.
func preferExisting(dir string, names ...string) string {
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n)
		}
	}
	return filepath.Join(dir, names[0])
}

// Agents returns every agent we can configure, by name.
func Agents() []Agent { return append([]Agent(nil), agents...) }

// Names lists the agents' names.
func Names() []string {
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names
}

// Lookup finds an agent by name or alias, case-insensitively.
func Lookup(name string) (Agent, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, a := range agents {
		if a.Name == n {
			return a, nil
		}
		for _, alias := range a.aliases {
			if alias == n {
				return a, nil
			}
		}
	}
	return Agent{}, fmt.Errorf("unknown agent %q; known agents: %s", name, strings.Join(Names(), ", "))
}

// UserFile is the agent's user-scope configuration file.
func (a Agent) UserFile(e Env) string { return a.userFile(e) }

// ProjectFile is the file the agent reads in project directory dir, and
// false when the agent reads no project file.
func (a Agent) ProjectFile(dir string) (string, bool) {
	if len(a.project) == 0 {
		return "", false
	}
	first := filepath.Join(dir, a.project[0])
	for _, p := range a.project {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			return filepath.Join(dir, p), true
		}
	}
	return first, true
}

// Detect reports whether the agent seems installed for this user: its
// configuration directory (or file) exists. It also returns the path it
// looked for first, to name in a message.
func (a Agent) Detect(e Env) (bool, string) {
	paths := a.home(e)
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true, p
		}
	}
	return false, paths[0]
}

// want is our entry for this agent: the bridge's absolute path with
// +mcp-server --client=<name>, and --socket where the agent needs it.
func (a Agent) want(l Launch) fields {
	args := []string{"+mcp-server", "--client=" + a.Name}
	if a.pinSocket {
		args = append(args, "--socket="+l.Socket)
	}
	return a.entry(l.Binary, args)
}
