package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// mcpInstallEnv is an isolated environment where every agent's
// configuration directory exists, Codex's and Claude's included: their
// variables are pinned so that a developer's own never leak in.
func mcpInstallEnv(t *testing.T) (*testenv.Env, map[string]string) {
	t.Helper()
	env := testenv.New(t)
	home, cfg := env.Home, env.Getenv("XDG_CONFIG_HOME")
	env.Vars = append(env.Vars, "CODEX_HOME="+filepath.Join(home, ".codex"), "CLAUDE_CONFIG_DIR=")
	files := map[string]string{
		"claude":   filepath.Join(home, ".claude.json"),
		"codex":    filepath.Join(home, ".codex", "config.toml"),
		"cursor":   filepath.Join(home, ".cursor", "mcp.json"),
		"gemini":   filepath.Join(home, ".gemini", "settings.json"),
		"opencode": filepath.Join(cfg, "opencode", "opencode.json"),
		"vscode":   filepath.Join(cfg, "Code", "User", "mcp.json"),
		"windsurf": filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"),
		"zed":      filepath.Join(cfg, "zed", "settings.json"),
	}
	for _, dir := range []string{".claude", ".codex", ".cursor", ".gemini", ".codeium/windsurf"} {
		mustMkdir(t, filepath.Join(home, dir))
	}
	for _, dir := range []string{"opencode", "Code/User", "zed"} {
		mustMkdir(t, filepath.Join(cfg, dir))
	}
	return env, files
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

// mcpUserFiles are settings users already have; the rest start absent.
var mcpUserFiles = map[string]string{
	"claude":   "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"db\": {\"type\": \"stdio\", \"command\": \"db\"}\n  }\n}\n",
	"codex":    "# my settings\nmodel = \"o3\"\n\n[mcp_servers.db]\ncommand = \"db\" # the database\n",
	"zed":      "// Zed settings\n{\n  \"theme\": \"One Dark\",\n  \"context_servers\": {\n    // the database\n    \"db\": {\"command\": \"db\", \"args\": []}\n  }\n}\n",
	"vscode":   "{\n\t\"servers\": {\n\t\t\"db\": {\"type\": \"stdio\", \"command\": \"db\"}\n\t},\n\t\"inputs\": []\n}\n",
	"opencode": "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"model\": \"anthropic/claude-sonnet-4\"\n}\n",
}

// mcpStatusOut is `phantom mcp status --json`.
type mcpStatusOut struct {
	Scope  string `json:"scope"`
	Binary string `json:"binary"`
	Socket string `json:"socket"`
	Agents []struct {
		Agent   string   `json:"agent"`
		File    string   `json:"file"`
		Found   bool     `json:"found"`
		Status  string   `json:"status"`
		Reasons []string `json:"reasons"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Error   string   `json:"error"`
	} `json:"agents"`
}

// runPhantomBin runs bin (a phantom binary) like phantom() runs the one
// under test.
func runPhantomBin(t *testing.T, bin string, env *testenv.Env, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Env, c.Dir = env.Vars, env.Home
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return r
}

func mcpStatusVia(t *testing.T, bin string, env *testenv.Env) mcpStatusOut {
	t.Helper()
	r := runPhantomBin(t, bin, env, "mcp", "status", "--json")
	var s mcpStatusOut
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || r.code != 0 {
		t.Fatalf("mcp status --json: %v\n%v", err, r)
	}
	return s
}

// entryOf parses an agent's file the way the agent does (comments, which
// the fixtures put on lines of their own, dropped) and returns our entry.
func entryOf(t *testing.T, agent, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if agent == "codex" {
		err = toml.Unmarshal(b, &doc)
	} else {
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "//") {
				lines = append(lines, l)
			}
		}
		err = json.Unmarshal([]byte(strings.Join(lines, "\n")), &doc)
	}
	if err != nil {
		t.Fatalf("%s does not parse: %v\n%s", file, err, b)
	}
	key := map[string]string{"codex": "mcp_servers", "opencode": "mcp", "vscode": "servers", "zed": "context_servers"}[agent]
	if key == "" {
		key = "mcpServers"
	}
	servers, _ := doc[key].(map[string]any)
	entry, _ := servers["phantom"].(map[string]any)
	if agent != "codex" && entry != nil && servers["db"] == nil && mcpUserFiles[agent] != "" && strings.Contains(mcpUserFiles[agent], `"db"`) {
		t.Errorf("%s lost the user's own server:\n%s", file, b)
	}
	return entry
}

// TestMcpInstall installs for every agent into a fake home, checks status,
// the files and re-install, follows the binary moving, and uninstalls.
func TestMcpInstall(t *testing.T) {
	env, files := mcpInstallEnv(t)
	for agent, content := range mcpUserFiles {
		if err := os.WriteFile(files[agent], []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := filepath.EvalSymlinks(phantomBin)
	if err != nil {
		t.Fatal(err)
	}

	out := mustPhantom(t, env, "mcp", "install")
	for agent, file := range files {
		if !strings.Contains(out, "installed in "+file) {
			t.Errorf("install does not report %s:\n%s", agent, out)
		}
	}
	st := mcpStatusVia(t, phantomBin, env)
	if st.Binary != bin || !filepath.IsAbs(st.Socket) || len(st.Agents) != len(files) {
		t.Fatalf("status: %+v", st)
	}
	for _, a := range st.Agents {
		if a.Status != "installed" || a.File != files[a.Agent] || a.Command != bin || !slices.Contains(a.Args, "--client="+a.Agent) {
			t.Errorf("status of %s: %+v", a.Agent, a)
		}
		entry := entryOf(t, a.Agent, a.File)
		if entry == nil {
			t.Fatalf("%s has no phantom entry", a.File)
		}
		if a.Agent == "codex" {
			if entry["tool_timeout_sec"] != int64(120) || len(entry["env_vars"].([]any)) != 6 {
				t.Errorf("codex entry lacks what the bridge needs: %v", entry)
			}
		}
		if fi, _ := os.Stat(a.File); mcpUserFiles[a.Agent] != "" && fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, want 0640 kept", a.File, fi.Mode().Perm())
		}
	}

	// Installing again changes nothing.
	before := map[string]string{}
	for agent, file := range files {
		b, _ := os.ReadFile(file)
		before[agent] = string(b)
	}
	if out := mustPhantom(t, env, "mcp", "install"); strings.Count(out, "already installed") != len(files) {
		t.Errorf("second install:\n%s", out)
	}
	for agent, file := range files {
		if b, _ := os.ReadFile(file); string(b) != before[agent] {
			t.Errorf("second install changed %s", file)
		}
	}

	// Another phantom binary sees the entries as stale and takes them over;
	// once it is gone, they point at a binary that moved.
	moved := filepath.Join(t.TempDir(), "phantom")
	if err := os.Link(phantomBin, moved); err != nil {
		b, _ := os.ReadFile(phantomBin)
		if err := os.WriteFile(moved, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range mcpStatusVia(t, moved, env).Agents {
		if a.Status != "stale" || !strings.Contains(strings.Join(a.Reasons, "; "), "not this phantom") {
			t.Errorf("status from another binary, %s: %+v", a.Agent, a)
		}
	}
	if r := runPhantomBin(t, moved, env, "mcp", "install", "claude", "codex"); r.code != 0 || strings.Count(r.stdout, "updated the stale entry") != 2 {
		t.Fatalf("install from another binary:\n%v", r)
	}
	os.Remove(moved)
	r := phantom(t, env, "mcp", "status")
	if r.code != 0 || strings.Count(r.stdout, "which no longer exists (the binary moved)") != 2 || strings.Count(r.stdout, ": installed in ") != len(files)-2 {
		t.Errorf("status after the binary moved:\n%v", r)
	}
	mustPhantom(t, env, "mcp", "install")

	// Uninstall gives the user's files back byte for byte and leaves no
	// entry in the others.
	out = mustPhantom(t, env, "mcp", "uninstall")
	if strings.Count(out, "removed from") != len(files) {
		t.Errorf("uninstall:\n%s", out)
	}
	for agent, file := range files {
		if content, ok := mcpUserFiles[agent]; ok {
			if b, _ := os.ReadFile(file); string(b) != content {
				t.Errorf("uninstall did not restore %s:\n%s\nwant\n%s", file, b, content)
			}
		} else if entryOf(t, agent, file) != nil {
			t.Errorf("uninstall left the entry in %s", file)
		}
		if n := len(mcpBackups(t, file)); n == 0 || n > 3 {
			t.Errorf("%s has %d backups, want 1 to 3", file, n)
		}
	}
	for _, a := range mcpStatusVia(t, phantomBin, env).Agents {
		if a.Status != "not-installed" {
			t.Errorf("status after uninstall, %s: %+v", a.Agent, a)
		}
	}
}

func mcpBackups(t *testing.T, file string) []string {
	t.Helper()
	m, err := filepath.Glob(file + ".phantom-backup-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMcpInstallRefuses checks the errors a user can act on: an unknown
// agent, a file that does not parse, an agent without a project file.
func TestMcpInstallRefuses(t *testing.T) {
	env, files := mcpInstallEnv(t)

	r := phantom(t, env, "mcp", "install", "claude", "emacs")
	if r.code == 0 || !strings.Contains(r.stderr, `unknown agent "emacs"; known agents: claude, codex, cursor, gemini, opencode, vscode, windsurf, zed`) {
		t.Errorf("unknown agent:\n%v", r)
	}
	if _, err := os.Stat(files["claude"]); err == nil {
		t.Errorf("a refused command still wrote %s", files["claude"])
	}

	broken := "{\n  \"theme\": \"dark\"\n  \"x\": 1\n}\n"
	os.WriteFile(files["gemini"], []byte(broken), 0o600)
	r = phantom(t, env, "mcp", "install", "gemini", "cursor")
	if r.code == 0 || !strings.Contains(r.stdout, files["gemini"]+": line 3, column 3: expected ',' or '}'") ||
		!strings.Contains(r.stdout, "Cursor: installed in") || !strings.Contains(r.stderr, "1 of 2 agents failed") {
		t.Errorf("a broken file:\n%v", r)
	}
	if b, _ := os.ReadFile(files["gemini"]); string(b) != broken || len(mcpBackups(t, files["gemini"])) > 0 {
		t.Errorf("a broken file was changed or backed up")
	}

	project := t.TempDir()
	r = phantom(t, env, "mcp", "install", "--project", project, "windsurf")
	if r.code == 0 || !strings.Contains(r.stderr, "Windsurf reads no project file") {
		t.Errorf("windsurf --project:\n%v", r)
	}
	out := mustPhantom(t, env, "mcp", "install", "--project", project)
	for _, f := range []string{".mcp.json", ".cursor/mcp.json", ".gemini/settings.json", "opencode.json", ".vscode/mcp.json", ".zed/settings.json"} {
		if !strings.Contains(out, "installed in "+filepath.Join(project, f)+" (new file)") {
			t.Errorf("--project did not write %s:\n%s", f, out)
		}
	}
	for _, skipped := range []string{"Codex CLI: skipped, reads no project file", "Windsurf: skipped, reads no project file"} {
		if !strings.Contains(out, skipped) {
			t.Errorf("--project does not say %q:\n%s", skipped, out)
		}
	}
}

// TestMcpInstallEntriesReachPhantom starts each installed entry the way its
// agent would, with the environment that agent passes, against a running
// instance whose socket is not at HOME's default path: every entry must
// find the socket and list the tools. Claude Code, Gemini CLI and opencode
// pass their whole environment; Codex a dozen variables plus env_vars; the
// editors are taken at their worst, HOME and PATH only.
func TestMcpInstallEntriesReachPhantom(t *testing.T) {
	env, _ := up(t)
	env.Vars = append(env.Vars, "CODEX_HOME="+filepath.Join(env.Home, ".codex"), "CLAUDE_CONFIG_DIR=")
	for _, a := range []string{"claude", "codex", "cursor", "gemini", "opencode", "vscode", "windsurf", "zed"} {
		mustPhantom(t, env, "mcp", "install", a)
	}
	for _, a := range mcpStatusVia(t, phantomBin, env).Agents {
		t.Run(a.Agent, func(t *testing.T) {
			if a.Status != "installed" {
				t.Fatalf("%+v", a)
			}
			vars := env.Vars
			switch a.Agent {
			case "codex":
				vars = nil
				passed := []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"}
				for _, v := range entryOf(t, a.Agent, a.File)["env_vars"].([]any) {
					passed = append(passed, v.(string))
				}
				for _, k := range passed {
					if v := env.Getenv(k); v != "" {
						vars = append(vars, k+"="+v)
					}
				}
			case "cursor", "vscode", "windsurf", "zed":
				vars = []string{"HOME=" + env.Home, "PATH=" + env.Getenv("PATH")}
			}
			if got := mcpToolsVia(t, a.Command, a.Args, vars); !slices.Contains(got, "list_terminals") {
				t.Errorf("tools through %s's entry: %v", a.Agent, got)
			}
		})
	}
}

// mcpToolsVia runs an MCP server command, initializes a session and
// returns the names of the tools it lists.
func mcpToolsVia(t *testing.T, command string, args, vars []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, command, args...)
	c.Env = vars
	stdin, _ := c.StdinPipe()
	stdout, _ := c.StdoutPipe()
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer stdin.Close()
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"install-test","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"))
	dec := json.NewDecoder(stdout)
	for {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s %v: no tools/list answer (%v); stderr:\n%s", command, args, err, errb.String())
		}
		if m.ID == 2 {
			var names []string
			for _, tool := range m.Result.Tools {
				names = append(names, tool.Name)
			}
			return names
		}
	}
}

// TestMcpInstallAgentHomes: install, status and uninstall also reach the
// agent homes Phantom's agent tabs run with, so an entry written after a
// home was seeded reaches agent tabs; your own files are written as well.
func TestMcpInstallAgentHomes(t *testing.T) {
	env, files := mcpInstallEnv(t)
	homes := map[string]string{
		"claude": filepath.Join(env.Home, ".local/share/phantom/agents/claude", ".claude.json"),
		"codex":  filepath.Join(env.Home, ".local/share/phantom/agents/codex", "config.toml"),
		"gemini": filepath.Join(env.Home, ".local/share/phantom/agents/gemini", ".gemini", "settings.json"),
	}
	for _, f := range homes {
		mustMkdir(t, filepath.Dir(f))
	}
	if r := runPhantomBin(t, phantomBin, env, "mcp", "install", "claude", "codex", "gemini"); r.code != 0 {
		t.Fatalf("phantom mcp install: %v", r)
	}
	hasEntry := func(agent, file string) bool {
		b, _ := os.ReadFile(file)
		return strings.Contains(string(b), "+mcp-server") && strings.Contains(string(b), "--client="+agent)
	}
	for agent, f := range homes {
		if !hasEntry(agent, f) {
			t.Errorf("%s: no phantom entry in its agent home's %s", agent, f)
		}
		if !hasEntry(agent, files[agent]) {
			t.Errorf("%s: no phantom entry in your own %s", agent, files[agent])
		}
	}
	out := runPhantomBin(t, phantomBin, env, "mcp", "status", "claude")
	if !strings.Contains(out.stdout, "Claude Code in Phantom's agent tabs: installed in "+homes["claude"]) {
		t.Errorf("phantom mcp status does not report the agent home:\n%v", out)
	}
	if r := runPhantomBin(t, phantomBin, env, "mcp", "uninstall", "codex"); r.code != 0 {
		t.Fatalf("phantom mcp uninstall codex: %v", r)
	}
	if hasEntry("codex", homes["codex"]) {
		t.Errorf("codex: the entry is still in the agent home %s after uninstall", homes["codex"])
	}
}
