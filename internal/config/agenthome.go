package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// AgentHome is a per-agent state directory that Phantom owns: sandboxed
// tabs running that agent keep the agent's configuration, credentials,
// sessions and locks there instead of in the human's own files. The
// agent's files in the human's home are commands the human's later
// unsandboxed runs execute (Claude Code's settings.json hooks, Codex's
// notify and MCP commands, Gemini's mcpServers); a sandbox that could
// write them would reach outside itself. Terminald, which runs as the
// human outside every sandbox, creates the directory and copies the
// human's files into it once (reading them is no channel), and points the
// agent at it with Var.
type AgentHome struct {
	// Var is the environment variable that moves the agent's state
	// directory: the agent reads and writes only under its value.
	Var string
	// Dir is the directory, relative to the home directory.
	Dir string
	// Seed lists the human's files copied into Dir when it is created.
	Seed []Seed
	// Cache is the agent's directory under the XDG cache directory
	// ($XDG_CACHE_HOME, else ~/.cache), which Var does not move; "" when
	// it keeps none there. Only logs live there.
	Cache string
	// Env is set in the tab besides Var.
	Env map[string]string
}

// Seed is one file copied into an agent home when terminald creates it.
type Seed struct {
	// From is the human's file relative to the home directory, where the
	// agent keeps it when the human has not set Var.
	From string
	// To is the copy's path relative to the agent home; when the human's
	// environment sets Var, the human's file is To under that directory.
	To string
}

// AgentHomesDir is where the agent homes live, relative to the home
// directory: outside Phantom's own (protected) directories, since
// sandboxed tabs must write them.
const AgentHomesDir = ".local/share/phantom/agents"

// DefaultAgentHomes are the agent homes of the agents whose current
// releases can be moved by one variable (measured with Claude Code
// 2.1.332, Codex 0.171 and Gemini CLI 0.61).
func DefaultAgentHomes() map[string]AgentHome {
	dir := func(agent string) string { return filepath.Join(AgentHomesDir, agent) }
	return map[string]AgentHome{
		// CLAUDE_CONFIG_DIR moves ~/.claude and ~/.claude.json (and so its
		// atomic writes, .claude.json.tmp.* and .claude.json.lock, which a
		// sandbox cannot create in $HOME). The npm auto-updater would
		// rewrite the installed package the human runs: off.
		"claude": {Var: "CLAUDE_CONFIG_DIR", Dir: dir("claude"), Cache: "claude-cli-nodejs",
			Seed: []Seed{{".claude.json", ".claude.json"}, {".claude/.credentials.json", ".credentials.json"},
				{".claude/settings.json", "settings.json"}},
			Env: map[string]string{"DISABLE_AUTOUPDATER": "1"}},
		// CODEX_HOME moves ~/.codex, where the TUI's background server
		// keeps its control socket, locks and a copy of its own binary.
		"codex": {Var: "CODEX_HOME", Dir: dir("codex"),
			Seed: []Seed{{".codex/config.toml", "config.toml"}, {".codex/auth.json", "auth.json"}}},
		// GEMINI_CLI_HOME stands in for the home directory: ~/.gemini
		// becomes $GEMINI_CLI_HOME/.gemini.
		"gemini": {Var: "GEMINI_CLI_HOME", Dir: dir("gemini"),
			Seed: []Seed{{".gemini/settings.json", ".gemini/settings.json"},
				{".gemini/oauth_creds.json", ".gemini/oauth_creds.json"},
				{".gemini/google_accounts.json", ".gemini/google_accounts.json"},
				{".gemini/trustedFolders.json", ".gemini/trustedFolders.json"}}},
	}
}

// Path is the agent home's absolute path for the home directory home.
func (h AgentHome) Path(home string) string { return filepath.Join(home, h.Dir) }

// check reports a home whose paths would leave the places they name.
func (h AgentHome) check() error {
	for _, p := range append([]string{h.Dir}, seedPaths(h.Seed)...) {
		if p == "" || filepath.IsAbs(p) || filepath.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("path %q is not a clean relative path", p)
		}
	}
	if h.Var == "" {
		return fmt.Errorf("home %s has no variable", h.Dir)
	}
	return nil
}

// seedPaths lists both ends of every seed.
func seedPaths(seeds []Seed) []string {
	var out []string
	for _, s := range seeds {
		out = append(out, s.From, s.To)
	}
	return out
}
