package workspace

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestPrepareAgentHome checks what an agent tab gets for each agent: the
// variable pointing at a fresh agent home seeded from the human's files
// (from their usual places, or from the directory the human's own variable
// names), the writable paths, Codex's background server off, and that an
// existing home is never seeded again.
func TestPrepareAgentHome(t *testing.T) {
	for _, tt := range []struct {
		name, agent string
		human       map[string]string // the human's files, relative to HOME
		vars        map[string]string // the human's environment; HOME added
		wantEnv     map[string]string // "~" is HOME
		wantFiles   map[string]string // in the agent home
		wantPaths   []string
	}{
		{name: "no home", agent: "aider"},
		{name: "claude from the usual places", agent: "claude",
			human:     map[string]string{".claude.json": `{"mcpServers":{}}`, ".claude/settings.json": `{"hooks":{}}`},
			wantEnv:   map[string]string{"CLAUDE_CONFIG_DIR": "~/.local/share/phantom/agents/claude", "DISABLE_AUTOUPDATER": "1"},
			wantFiles: map[string]string{".claude.json": `{"mcpServers":{}}`, "settings.json": `{"hooks":{}}`},
			wantPaths: []string{"~/.local/share/phantom/agents/claude/", "~/.cache/claude-cli-nodejs/"}},
		{name: "claude from the human's CLAUDE_CONFIG_DIR", agent: "claude",
			human:     map[string]string{"cc/.claude.json": `{"a":1}`, ".claude.json": `{"wrong":1}`},
			vars:      map[string]string{"CLAUDE_CONFIG_DIR": "~/cc", "XDG_CACHE_HOME": "~/xc"},
			wantFiles: map[string]string{".claude.json": `{"a":1}`},
			wantPaths: []string{"~/.local/share/phantom/agents/claude/", "~/xc/claude-cli-nodejs/"}},
		{name: "gemini", agent: "gemini",
			human:     map[string]string{".gemini/settings.json": `{"mcpServers":{}}`, ".gemini/oauth_creds.json": "{}"},
			wantEnv:   map[string]string{"GEMINI_CLI_HOME": "~/.local/share/phantom/agents/gemini"},
			wantFiles: map[string]string{".gemini/settings.json": `{"mcpServers":{}}`, ".gemini/oauth_creds.json": "{}"},
			wantPaths: []string{"~/.local/share/phantom/agents/gemini/"}},
		{name: "codex without a config", agent: "codex",
			wantEnv:   map[string]string{"CODEX_HOME": "~/.local/share/phantom/agents/codex"},
			wantPaths: []string{"~/.local/share/phantom/agents/codex/"}},
		{name: "codex", agent: "codex",
			human:     map[string]string{".codex/config.toml": "model = \"m\"\n[features]\nx = true\n", ".codex/auth.json": "{}"},
			wantFiles: map[string]string{"auth.json": "{}"},
			wantPaths: []string{"~/.local/share/phantom/agents/codex/"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			tilde := func(s string) string { return strings.ReplaceAll(s, "~", home) }
			for name, body := range tt.human {
				write(t, filepath.Join(home, name), body)
			}
			vars := map[string]string{"HOME": home}
			for k, v := range tt.vars {
				vars[k] = tilde(v)
			}
			getenv := func(k string) string { return vars[k] }
			got, err := prepareAgentHome(tt.agent, getenv)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.wantEnv {
				if got.env[k] != tilde(v) {
					t.Errorf("env %s = %q, want %q", k, got.env[k], tilde(v))
				}
			}
			var wantPaths []string
			for _, p := range tt.wantPaths {
				wantPaths = append(wantPaths, tilde(p))
			}
			if !reflect.DeepEqual(got.paths, wantPaths) {
				t.Errorf("paths = %q, want %q", got.paths, wantPaths)
			}
			dir := filepath.Join(home, ".local/share/phantom/agents", tt.agent)
			for name, want := range tt.wantFiles {
				if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
					t.Errorf("%s in the agent home = %q, %v; want %q", name, b, err, want)
				}
			}
			if tt.agent == "codex" {
				checkCodexConfig(t, filepath.Join(dir, "config.toml"), tt.human[".codex/config.toml"] != "")
			}
			if len(tt.wantPaths) == 0 {
				return
			}
			if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("agent home %s: %v, %v; want a 0700 directory", dir, fi, err)
			}
			// Seeded once: what the agent wrote since stays.
			for name := range tt.wantFiles {
				write(t, filepath.Join(dir, name), "the agent's")
			}
			if _, err := prepareAgentHome(tt.agent, getenv); err != nil {
				t.Fatal(err)
			}
			for name := range tt.wantFiles {
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "the agent's" {
					t.Errorf("%s was seeded again: %q", name, b)
				}
			}
		})
	}
}

// checkCodexConfig checks that Codex's copied config turns the background
// server off and, when the human had one, keeps the human's settings.
func checkCodexConfig(t *testing.T, path string, fromHuman bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Model    string
		Features map[string]bool
	}
	if err := toml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	if v, ok := doc.Features["daemon_auto_start"]; !ok || v {
		t.Errorf("%s: features.daemon_auto_start = %v (set %v), want false:\n%s", path, v, ok, b)
	}
	if fromHuman && (doc.Model != "m" || !doc.Features["x"]) {
		t.Errorf("%s lost the human's settings:\n%s", path, b)
	}
}

// write creates path, and its directories, holding body.
func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
