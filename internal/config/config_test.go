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
	repeat := DefaultRepeatTime
	want := Config{Shell: "/bin/zsh", ScrollbackLines: DefaultScrollback, Agents: DefaultAgents(),
		Sandbox: Sandbox{AgentPaths: DefaultAgentPaths()}, Status: Status{Right: DefaultStatusRight}, RepeatTime: &repeat, Restore: new(true), TrueColor: TrueColorAuto,
		Attention: DefaultAttention()}
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
		{"socket pattern", `{"sandbox": {"sockets": ["/run/*.sock"]}}`, []string{"sandbox.sockets", "pattern"}},
		{"socket directory", `{"sandbox": {"sockets": ["~/.docker/run/"]}}`, []string{"sandbox.sockets", "ends in /"}},
		{"relative socket", `{"sandbox": {"sockets": ["docker.sock"]}}`, []string{"sandbox.sockets", `"docker.sock"`}},
		{"syntax error has line and column", "{\n  \"shell\": \"/bin/sh\",\n  }", []string{"line 3, column 3", "not valid JSON"}},
		{"unknown field suggests the near name", "{\n \"prefx\": \"C-a\"}", []string{"line 2", `"prefx"`, `did you mean "prefix"?`}},
		{"nested unknown field", `{"status": {"style": {"bgg": "red"}}}`, []string{`"bgg"`, "status.style", `did you mean "bg"?`}},
		{"wrong type in words", `{"scrollback_lines": "many"}`, []string{"must be a whole number, not a string"}},
		{"bad prefix", `{"prefix": "C-1"}`, []string{"prefix", `"C-1"`}},
		{"unknown key name", `{"keys": {"Foo": "new-tab"}}`, []string{"keys", `unknown key "Foo"`}},
		{"binding to an unknown command", `{"keys": {"t": "new-tabb"}}`, []string{`"new-tabb"`, `did you mean "new-tab"?`}},
		{"binding to a far name lists the commands", `{"keys": {"t": "frobnicate"}}`, []string{`"frobnicate"`, "the commands are", "new-tab", `"none"`}},
		{"binding the prefix", `{"prefix": "C-t", "keys": {"C-t": "new-tab"}}`, []string{`"C-t" is the prefix`}},
		{"bad colour", `{"status": {"style": {"bg": "#12345"}}}`, []string{"status.style.bg", "#rrggbb"}},
		{"bad status format", `{"status": {"left": "#{windo}"}}`, []string{"status.left", "#{windo}", `did you mean "window"?`}},
		{"restore not a boolean", `{"restore": "no"}`, []string{"restore", "must be true or false, not a string"}},
		{"restore misspelt", `{"restor": false}`, []string{`"restor"`, `did you mean "restore"?`}},
		{"bad truecolor", `{"truecolor": "yes"}`, []string{"truecolor", `"yes"`, `"auto", "on", "off"`}},
		{"truecolor in capitals", `{"truecolor": "On"}`, []string{"truecolor", `"On"`}},
		{"truecolor not a string", `{"truecolor": true}`, []string{"truecolor"}},
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

// TestLoadEmptyFile checks that an empty file (an editor's save caught
// half-way, or a file made with touch) means every default.
func TestLoadEmptyFile(t *testing.T) {
	c, err := Load(writeConfig(t, " \n"))
	if err != nil || c.ScrollbackLines != DefaultScrollback {
		t.Errorf("Load = %+v, %v; want the defaults", c, err)
	}
}

// FuzzParse checks that no settings file makes Parse panic, and that what
// it accepts is fully valid: the prefix and every binding and format
// parse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"prefix":"C-a","keys":{"|":"split-right","x":"none"}}`,
		`{"status":{"left":"#{host} ","right":"#{window} ##","style":{"bg":"#303030","fg":"colour250","active_bg":"bright-blue"}}}`,
		`{"agents":{"a":["a"]},"sandbox":{"writable":["~/x/"]}}`, `{"shell": `, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("config.json", b)
		if err != nil {
			return
		}
		if _, err := ParsePrefix(c.Prefix); err != nil {
			t.Errorf("accepted prefix %q: %v", c.Prefix, err)
		}
		for k := range c.Keys {
			if _, err := ParseKey(k); err != nil {
				t.Errorf("accepted key %q: %v", k, err)
			}
		}
		if _, err := ParseFormat(c.Status.Right); err != nil {
			t.Errorf("accepted right %q: %v", c.Status.Right, err)
		}
	})
}

func TestIsAgentProgram(t *testing.T) {
	c := &Config{Agents: map[string][]string{
		"claude":   {"claude"},
		"local":    {"/opt/bin/my-agent", "--fast"},
		"verylong": {"/usr/bin/an-agent-with-a-long-name"},
	}}
	for _, tt := range []struct {
		comm string
		want bool
	}{
		{"claude", true},
		{"my-agent", true},
		{"local", true},           // the agent's own name, as a process title
		{"an-agent-with-a", true}, // the kernel keeps 15 bytes of a name
		{"an-agent", false},
		{"bash", false},
		{"", false},
	} {
		if got := c.IsAgentProgram(tt.comm); got != tt.want {
			t.Errorf("IsAgentProgram(%q) = %v, want %v", tt.comm, got, tt.want)
		}
	}
	if (*Config)(nil).IsAgentProgram("claude") {
		t.Error("a nil config knows no agents")
	}
}

// TestRestoreSetting: the session is restored unless config.json says
// "restore": false.
func TestRestoreSetting(t *testing.T) {
	for _, tt := range []struct {
		body string
		want bool
	}{
		{``, true},
		{`{"restore": true}`, true},
		{`{"restore": false}`, false},
	} {
		c, err := Load(writeConfig(t, tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if c.RestoreEnabled() != tt.want {
			t.Errorf("%s: RestoreEnabled = %v, want %v", tt.body, c.RestoreEnabled(), tt.want)
		}
	}
}

// TestTrueColor checks the values "truecolor" takes and its default.
func TestTrueColor(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{}`, TrueColorAuto},
		{`{"truecolor": "auto"}`, TrueColorAuto},
		{`{"truecolor": "on"}`, TrueColorOn},
		{`{"truecolor": "off"}`, TrueColorOff},
	} {
		c, err := Load(writeConfig(t, tt.body))
		if err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		if c.TrueColor != tt.want {
			t.Errorf("%s: truecolor %q, want %q", tt.body, c.TrueColor, tt.want)
		}
	}
}
