package agentconf

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testEnv is an Env whose every directory is inside a fresh temp dir.
func testEnv(t *testing.T) Env {
	t.Helper()
	home := t.TempDir()
	e, err := EnvFrom(func(k string) string {
		return map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "xdg")}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var testLaunch = Launch{Binary: "/opt/phantom/bin/phantom", Socket: "/run/phantom.sock"}

// agentCase is, for one agent, a file with other servers and comments
// where the format allows them, and a broken file with its fault's place.
type agentCase struct {
	existing  string
	broken    string
	line, col int
}

var (
	jsonOthers = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db\"}\n  }\n}\n"
	jsonBroken = "{\n  \"a\": 1,\n  \"b\" 2\n}\n"
)

var agentCases = map[string]agentCase{
	"claude":   {jsonOthers, jsonBroken, 3, 7},
	"codex":    {"# mine\nmodel = \"o3\"\n\n[mcp_servers.db]\ncommand = \"db\" # the db\n", "a = 1\nb = \n", 2, 5},
	"cursor":   {jsonOthers, jsonBroken, 3, 7},
	"gemini":   {"{\n  // theme\n  \"theme\": \"GitHub\",\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db\"}\n  }\n}\n", "{\n  \"a\": [1,],\n}", 2, 10},
	"opencode": {"{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // servers\n  \"mcp\": {\n    \"db\": {\"type\": \"local\", \"command\": [\"db\"]},\n  },\n}\n", "{\n  /* open\n", 2, 3},
	"vscode":   {"{\n  \"servers\": {\n    // the db\n    \"db\": {\"type\": \"stdio\", \"command\": \"db\"}\n  },\n  \"inputs\": []\n}\n", "{\"servers\": {'db': 1}}", 1, 14},
	"windsurf": {jsonOthers, jsonBroken, 3, 7},
	"zed":      {"// Zed settings\n{\n  \"theme\": \"One Dark\",\n  \"context_servers\": {\n    \"db\": {\"command\": \"db\", \"args\": []},\n  },\n}\n", "{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3},
}

// oneSpan checks that b differs from a in one contiguous span only.
func oneSpan(t *testing.T, a, b []byte) {
	t.Helper()
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	if changed := string(a[p : len(a)-s]); strings.TrimSpace(changed) != "" {
		t.Errorf("the edit changed more than our entry: %q became %q", changed, b[p:len(b)-s])
	}
}

func TestEveryAgentHasACase(t *testing.T) {
	for _, a := range agents {
		if _, ok := agentCases[a.Name]; !ok {
			t.Errorf("no test case for %s", a.Name)
		}
	}
}

// TestAgents runs install, status, re-install, stale detection and
// uninstall against each agent's own file and format.
func TestAgents(t *testing.T) {
	for _, a := range agents {
		c := agentCases[a.Name]
		t.Run(a.Name+"/fresh", func(t *testing.T) {
			e := testEnv(t)
			tg := Target{Agent: a, File: a.UserFile(e)}
			res, err := Install(tg, testLaunch)
			if err != nil || res.Action != Created || res.Backup != "" {
				t.Fatalf("Install = %+v, %v; want created without backup", res, err)
			}
			src, err := os.ReadFile(tg.File)
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := a.file.get(src, EntryName)
			if err != nil || !ok || !sameValue(got, a.want(testLaunch)) {
				t.Fatalf("the new file holds %v (%v, %v), want %v:\n%s", got, ok, err, a.want(testLaunch), src)
			}
			if fi, _ := os.Stat(tg.File); fi.Mode().Perm() != 0o600 {
				t.Errorf("a new user file has mode %v, want 0600", fi.Mode().Perm())
			}
			if st, err := Inspect(tg, testLaunch); err != nil || st.State != Installed || st.Command != testLaunch.Binary {
				t.Errorf("Inspect = %+v, %v; want installed running %s", st, err, testLaunch.Binary)
			}
		})
		t.Run(a.Name+"/existing", func(t *testing.T) {
			e := testEnv(t)
			tg := Target{Agent: a, File: a.UserFile(e)}
			writeFile(t, tg.File, c.existing, 0o640)
			if st, err := Inspect(tg, testLaunch); err != nil || st.State != NotInstalled {
				t.Fatalf("Inspect before install = %+v, %v", st, err)
			}
			res, err := Install(tg, testLaunch)
			if err != nil || res.Action != Added {
				t.Fatalf("Install = %+v, %v; want added", res, err)
			}
			installed := readFile(t, tg.File)
			oneSpan(t, []byte(c.existing), installed)
			if b := readFile(t, res.Backup); string(b) != c.existing {
				t.Errorf("backup holds %q, want the old file", b)
			}
			if fi, _ := os.Stat(tg.File); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode became %v, want 0640 kept", fi.Mode().Perm())
			}
			db, ok, err := a.file.get(installed, "db")
			if err != nil || !ok {
				t.Errorf("the other server is gone: %v, %v", ok, err)
			}
			before, _, _ := a.file.get([]byte(c.existing), "db")
			if !sameValue(db, before) {
				t.Errorf("the other server changed: %v, was %v", db, before)
			}

			// Re-installing changes nothing, not even with a backup.
			res, err = Install(tg, testLaunch)
			if err != nil || res.Action != Unchanged || res.Backup != "" {
				t.Errorf("second Install = %+v, %v; want unchanged", res, err)
			}
			if again := readFile(t, tg.File); string(again) != string(installed) {
				t.Errorf("a second install changed the file")
			}

			res, err = Uninstall(tg)
			if err != nil || res.Action != Removed {
				t.Fatalf("Uninstall = %+v, %v", res, err)
			}
			if after := readFile(t, tg.File); string(after) != c.existing {
				t.Errorf("uninstall left\n%s\nwant the original\n%s", after, c.existing)
			}
			if res, err := Uninstall(tg); err != nil || res.Action != Unchanged {
				t.Errorf("second Uninstall = %+v, %v; want unchanged", res, err)
			}
		})
		t.Run(a.Name+"/stale", func(t *testing.T) {
			e := testEnv(t)
			tg := Target{Agent: a, File: a.UserFile(e)}
			writeFile(t, tg.File, c.existing, 0o600)
			old := Launch{Binary: filepath.Join(t.TempDir(), "phantom"), Socket: "/old.sock"}
			writeFile(t, old.Binary, "", 0o755)
			if _, err := Install(tg, old); err != nil {
				t.Fatal(err)
			}
			st, err := Inspect(tg, testLaunch)
			if err != nil || st.State != Stale || !slices.ContainsFunc(st.Reasons, func(r string) bool { return strings.Contains(r, "not this phantom") }) {
				t.Fatalf("Inspect with another binary = %+v, %v; want stale, another phantom", st, err)
			}
			os.Remove(old.Binary)
			st, _ = Inspect(tg, testLaunch)
			if st.State != Stale || !strings.Contains(st.Reasons[0], "no longer exists") {
				t.Errorf("Inspect after the binary moved = %+v; want stale, binary moved", st)
			}
			res, err := Install(tg, testLaunch)
			if err != nil || res.Action != Updated {
				t.Fatalf("Install over a stale entry = %+v, %v; want updated", res, err)
			}
			if st, _ := Inspect(tg, testLaunch); st.State != Installed {
				t.Errorf("after the update: %+v", st)
			}
			// Only the entry changed: without it, the file is the original.
			if _, err := Uninstall(tg); err != nil {
				t.Fatal(err)
			}
			if after := readFile(t, tg.File); string(after) != c.existing {
				t.Errorf("after update and uninstall:\n%s\nwant the original\n%s", after, c.existing)
			}
		})
		t.Run(a.Name+"/broken", func(t *testing.T) {
			e := testEnv(t)
			tg := Target{Agent: a, File: a.UserFile(e)}
			writeFile(t, tg.File, c.broken, 0o600)
			for op, err := range map[string]error{
				"install":   second(Install(tg, testLaunch)),
				"uninstall": second(Uninstall(tg)),
				"status":    second(Inspect(tg, testLaunch)),
			} {
				var se *SyntaxError
				var fe *FileError
				if !errors.As(err, &fe) || fe.File != tg.File || !errors.As(err, &se) || se.Line != c.line || se.Column != c.col {
					t.Errorf("%s of a broken file: %v; want %s, line %d, column %d", op, err, tg.File, c.line, c.col)
				}
			}
			if got := readFile(t, tg.File); string(got) != c.broken {
				t.Errorf("a refused file was changed")
			}
			if b := Backups(tg.File); len(b) > 0 {
				t.Errorf("a refused file was backed up: %v", b)
			}
		})
		t.Run(a.Name+"/project", func(t *testing.T) {
			e, dir := testEnv(t), t.TempDir()
			targets, _, err := Select([]string{a.Name}, e, dir, false)
			if len(a.project) == 0 {
				if err == nil || !strings.Contains(err.Error(), "reads no project file") {
					t.Errorf("Select with --project = %v, want an error saying there is no project file", err)
				}
				return
			}
			if err != nil || len(targets) != 1 || targets[0].File != filepath.Join(dir, a.project[0]) {
				t.Fatalf("Select = %+v, %v; want %s", targets, err, a.project[0])
			}
			if res, err := Install(targets[0], testLaunch); err != nil || res.Action != Created {
				t.Fatalf("Install = %+v, %v", res, err)
			}
			if fi, _ := os.Stat(targets[0].File); fi.Mode().Perm() != 0o644 {
				t.Errorf("a new project file has mode %v, want 0644", fi.Mode().Perm())
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEntries pins down each agent's entry: its shape, the client name, and
// --socket for the agents that need it.
func TestEntries(t *testing.T) {
	bin, sock := testLaunch.Binary, "--socket="+testLaunch.Socket
	want := map[string]string{
		"claude":   `{"type": "stdio", "command": "` + bin + `", "args": ["+mcp-server", "--client=claude"]}`,
		"codex":    `{"command": "` + bin + `", "args": ["+mcp-server", "--client=codex"], "env_vars": ["XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "HOME", "PHANTOM_MCP_SOCKET", "PHANTOM_TAB_ID", "PHANTOM_TAB_STATE"], "tool_timeout_sec": 120}`,
		"cursor":   `{"type": "stdio", "command": "` + bin + `", "args": ["+mcp-server", "--client=cursor", "` + sock + `"]}`,
		"gemini":   `{"command": "` + bin + `", "args": ["+mcp-server", "--client=gemini"]}`,
		"opencode": `{"type": "local", "command": ["` + bin + `", "+mcp-server", "--client=opencode"], "enabled": true}`,
		"vscode":   `{"type": "stdio", "command": "` + bin + `", "args": ["+mcp-server", "--client=vscode", "` + sock + `"]}`,
		"windsurf": `{"command": "` + bin + `", "args": ["+mcp-server", "--client=windsurf", "` + sock + `"]}`,
		"zed":      `{"source": "custom", "command": "` + bin + `", "args": ["+mcp-server", "--client=zed", "` + sock + `"]}`,
	}
	for _, a := range agents {
		if got := renderJSON(a.want(testLaunch), "", "", ""); got != want[a.Name] {
			t.Errorf("%s entry:\n%s\nwant\n%s", a.Name, got, want[a.Name])
		}
		if cmd, args := launchOf(plain(a.want(testLaunch))); cmd != bin || args[0] != "+mcp-server" {
			t.Errorf("%s: launchOf = %s %v", a.Name, cmd, args)
		}
	}
}

// TestEnvFrom checks which variables decide where files are.
func TestEnvFrom(t *testing.T) {
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	e, err := EnvFrom(get(map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x", "CODEX_HOME": "/c", "CLAUDE_CONFIG_DIR": "/cl"}))
	if err != nil {
		t.Fatal(err)
	}
	byName := func(n string) Agent { a, _ := Lookup(n); return a }
	for name, want := range map[string]string{
		"claude": "/cl/.claude.json", "codex": "/c/config.toml", "zed": "/x/zed/settings.json",
		"vscode": "/x/Code/User/mcp.json", "opencode": "/x/opencode/opencode.json", "gemini": "/h/.gemini/settings.json",
		"cursor": "/h/.cursor/mcp.json", "windsurf": "/h/.codeium/windsurf/mcp_config.json",
	} {
		if got := byName(name).UserFile(e); got != want {
			t.Errorf("%s user file = %s, want %s", name, got, want)
		}
	}
	e, _ = EnvFrom(get(map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "relative"}))
	if got := byName("claude").UserFile(e); got != "/h/.claude.json" {
		t.Errorf("claude without CLAUDE_CONFIG_DIR: %s", got)
	}
	if got := byName("zed").UserFile(e); got != "/h/.config/zed/settings.json" {
		t.Errorf("a relative XDG_CONFIG_HOME was not ignored: %s", got)
	}
	if _, err := EnvFrom(get(map[string]string{})); err == nil || !strings.Contains(err.Error(), "HOME") {
		t.Errorf("EnvFrom without HOME = %v", err)
	}
}

// TestSelect checks which agents a run takes when none is named.
func TestSelect(t *testing.T) {
	e := testEnv(t)
	os.MkdirAll(filepath.Join(e.Home, ".claude"), 0o700)
	os.MkdirAll(filepath.Join(e.ConfigHome, "zed"), 0o700)
	os.MkdirAll(filepath.Join(e.Home, ".codeium", "windsurf"), 0o700)
	names := func(ts []Target) (n []string) {
		for _, t := range ts {
			n = append(n, t.Agent.Name)
		}
		return n
	}
	ts, skips, err := Select(nil, e, "", false)
	if err != nil || !slices.Equal(names(ts), []string{"claude", "windsurf", "zed"}) || len(skips) != 5 {
		t.Errorf("Select(found) = %v, %d skipped, %v", names(ts), len(skips), err)
	}
	for _, s := range skips {
		if !strings.HasPrefix(s.Reason, "not found (no "+e.Home) {
			t.Errorf("skip reason %q", s.Reason)
		}
	}
	ts, skips, _ = Select(nil, e, t.TempDir(), false)
	if !slices.Equal(names(ts), []string{"claude", "zed"}) || !slices.ContainsFunc(skips, func(s Skip) bool {
		return s.Agent.Name == "windsurf" && strings.Contains(s.Reason, "reads no project file")
	}) {
		t.Errorf("Select(found, project) = %v, %v", names(ts), skips)
	}
	if ts, _, _ := Select(nil, e, "", true); len(ts) != len(agents) {
		t.Errorf("Select(all) took %d agents", len(ts))
	}
	if ts, _, _ := Select([]string{"Claude-Code", "claude", "vscode"}, e, "", false); !slices.Equal(names(ts), []string{"claude", "vscode"}) {
		t.Errorf("Select(names) = %v: names, aliases and duplicates", names(ts))
	}
	_, _, err = Select([]string{"claude", "emacs"}, e, "", false)
	if err == nil || err.Error() != `unknown agent "emacs"; known agents: claude, codex, cursor, gemini, opencode, vscode, windsurf, zed` {
		t.Errorf("unknown agent: %v", err)
	}
	if _, _, err := Select(nil, e, filepath.Join(e.Home, "nope"), false); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("missing project directory: %v", err)
	}
}
