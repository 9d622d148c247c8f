package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeConfig writes body as dir/config.json and returns dir.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLoadMissingFile checks that no settings file means every default.
func TestLoadMissingFile(t *testing.T) {
	t.Setenv("SHELL", "/bin/zsh")
	c, err := Load(filepath.Join(t.TempDir(), "does-not-exist"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Config{Shell: "/bin/zsh", ScrollbackLines: DefaultScrollback, Agents: DefaultAgents(),
		Sandbox: Sandbox{AgentPaths: DefaultAgentPaths()}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load = %+v, want %+v", c, want)
	}
}

// TestLoadShellDefault checks the shell fallbacks: the file, $SHELL, bash.
func TestLoadShellDefault(t *testing.T) {
	tests := []struct {
		name, envShell, body, want string
	}{
		{"from file", "/bin/zsh", `{"shell":"/usr/bin/fish"}`, "/usr/bin/fish"},
		{"from SHELL", "/bin/zsh", `{}`, "/bin/zsh"},
		{"bash when SHELL is empty", "", `{}`, "/bin/bash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SHELL", tt.envShell)
			c, err := Load(writeConfig(t, tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.Shell != tt.want {
				t.Errorf("Shell = %q, want %q", c.Shell, tt.want)
			}
		})
	}
}

// TestLoadSettings checks that configured values win and agents are merged
// with the defaults rather than replacing them.
func TestLoadSettings(t *testing.T) {
	dir := writeConfig(t, `{
		"shell": "/bin/sh",
		"scrollback_lines": 500,
		"prefix": "C-a",
		"agents": {"mine": ["my-agent", "--fast"], "claude": ["claude", "--model", "x"]}
	}`)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Shell != "/bin/sh" || c.ScrollbackLines != 500 || c.Prefix != "C-a" {
		t.Errorf("Load = %+v", c)
	}
	want := DefaultAgents()
	want["mine"] = []string{"my-agent", "--fast"}
	want["claude"] = []string{"claude", "--model", "x"}
	if !reflect.DeepEqual(c.Agents, want) {
		t.Errorf("Agents = %v, want %v", c.Agents, want)
	}
	names := c.AgentNames()
	if !reflect.DeepEqual(names, []string{"aider", "claude", "codex", "cursor", "gemini", "mine", "opencode"}) {
		t.Errorf("AgentNames = %v", names)
	}
}

// TestLoadErrors checks that a bad settings file is an error naming the
// file and what is wrong, never silently replaced by defaults.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, body string
		// wantIn are substrings the error must contain besides the path.
		wantIn []string
	}{
		{"malformed JSON", `{"shell": `, nil},
		{"not an object", `[1,2]`, nil},
		{"wrong type", `{"scrollback_lines": "many"}`, []string{"scrollback_lines"}},
		{"unknown field", `{"shell":"/bin/sh","colour":"red"}`, []string{"colour"}},
		{"negative scrollback", `{"scrollback_lines": -1}`, []string{"scrollback_lines", "-1"}},
		{"agent with empty command", `{"agents": {"x": []}}`, []string{`"x"`}},
		{"agent with empty program", `{"agents": {"y": [""]}}`, []string{`"y"`}},
		{"relative sandbox path", `{"sandbox": {"writable": ["cache"]}}`, []string{"sandbox.writable", `"cache"`}},
		{"odd agent path", `{"sandbox": {"agent_paths": {"claude": ["~/a/../.bashrc"]}}}`, []string{`agent_paths["claude"]`, "clean"}},
		{"unknown sandbox field", `{"sandbox": {"readable": []}}`, []string{"readable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeConfig(t, tt.body)
			c, err := Load(dir)
			if err == nil {
				t.Fatalf("Load = %+v, want an error", c)
			}
			path := filepath.Join(dir, FileName)
			for _, s := range append([]string{path}, tt.wantIn...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

// TestLoadUnreadable checks that a settings path that cannot be read (here:
// a directory) is an error, not the defaults.
func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileName)) {
		t.Errorf("Load = %v, want an error naming the file", err)
	}
}

// TestDefaultAgentsFresh checks that callers cannot corrupt the defaults by
// editing a loaded config.
func TestDefaultAgentsFresh(t *testing.T) {
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c.Agents["claude"] = []string{"rm", "-rf", "/"}
	delete(c.Agents, "codex")
	d := DefaultAgents()
	if !reflect.DeepEqual(d["claude"], []string{"claude"}) || d["codex"] == nil {
		t.Errorf("DefaultAgents changed by editing a Config: %v", d)
	}
}
