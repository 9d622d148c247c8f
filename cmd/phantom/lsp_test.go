package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// lspUp starts an instance whose daemons find gopls (scripts/setup puts
// it in .tools/bin), with a Go module with a type error in its HOME.
func lspUp(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	tools := filepath.Join(filepath.Dir(file), "..", "..", ".tools", "bin")
	t.Setenv("PATH", tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Skip("gopls is not installed (scripts/setup installs it into .tools/bin)")
	}
	env := upWithGit(t)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(env.Layout.Logs, "lspd.log"))
			t.Logf("lspd log:\n%s", b)
		}
	})
	mod := filepath.Join(env.Home, "src", "mod")
	lspWrite(t, mod, "go.mod", "module example.com/mod\n\ngo 1.21\n")
	lspWrite(t, mod, "main.go", "package main\n\nfunc main() {\n\tvar n int = \"one\"\n\t_ = n\n}\n")
	return env, mod
}

func lspWrite(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// diagResp is list_diagnostics' structuredContent.
type diagResp struct {
	Files []struct {
		Path        string         `json:"path"`
		Current     bool           `json:"current"`
		Settled     bool           `json:"settled"`
		Disk        map[string]any `json:"disk"`
		Reflects    map[string]any `json:"reflects"`
		Diagnostics []struct {
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"diagnostics"`
	} `json:"files"`
	Settled bool `json:"settled"`
}

// decodeStep decodes the structuredContent of the agent's step i into v.
func decodeStep(t *testing.T, read func() []agentLine, i int, v any) {
	t.Helper()
	r := resultOf(t, waitStep(t, read, i))
	if r.IsError {
		t.Fatalf("step %d: %s", i, r.text())
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("step %d: %s: %v", i, b, err)
	}
}

// TestLanguageServerMCP drives lspd end to end: an agent running the
// official MCP Go SDK client in a tab of a Go module with a type error
// asks, through `phantom +mcp-server`, the gateway and authz, for the
// diagnostics (settled and reflecting the disk), fixes the file and asks
// again, lists the servers and restarts gopls.
func TestLanguageServerMCP(t *testing.T) {
	env, mod := lspUp(t)
	fixed, idFile := filepath.Join(t.TempDir(), "fixed"), filepath.Join(t.TempDir(), "server-id")
	tab, read := runAgentIn(t, env, mod, "lsp-agent", []map[string]any{
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": "main.go", "wait_ms": 90000}}, // 0
		{"op": "wait", "file": fixed}, // 1
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"wait_ms": 60000}},                      // 2
		{"op": "call", "tool": "list_language_servers"},                                                           // 3
		{"op": "wait", "file": idFile},                                                                            // 4
		{"op": "call", "tool": "restart_language_server", "args": map[string]any{"server_id": "$FILE:" + idFile}}, // 5
	})
	// An agent's servers are its tab's: "go:<root>@<tab>".
	id := "go:" + mod + "@" + tab
	writeAtomically(t, idFile, id)

	// The type error, settled, reflecting the file on disk.
	var d0 diagResp
	decodeStep(t, read, 0, &d0)
	main := filepath.Join(mod, "main.go")
	if !d0.Settled || len(d0.Files) != 1 || d0.Files[0].Path != main || !d0.Files[0].Current ||
		len(d0.Files[0].Diagnostics) == 0 || d0.Files[0].Diagnostics[0].Line != 4 || !strings.Contains(d0.Files[0].Diagnostics[0].Message, "cannot use") {
		t.Fatalf("list_diagnostics main.go = %+v\nwant one settled, current file with the type error on line 4", d0)
	}

	// Fixed on disk: the directory listing (the tab's) is clean and settled.
	lspWrite(t, mod, "main.go", "package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n")
	os.WriteFile(fixed, nil, 0o600)
	var d2 diagResp
	decodeStep(t, read, 2, &d2)
	if !d2.Settled || len(d2.Files) != 1 || !d2.Files[0].Current || len(d2.Files[0].Diagnostics) != 0 || d2.Files[0].Reflects["sha256"] != d2.Files[0].Disk["sha256"] {
		t.Fatalf("list_diagnostics of the tab's directory after the fix = %+v\nwant main.go settled, current, clean", d2)
	}

	// The server is listed, ready, with a pid and memory; a restart counts.
	var l3 struct {
		Servers []struct {
			ID     string `json:"id"`
			State  string `json:"state"`
			PID    int    `json:"pid"`
			Memory string `json:"memory_bytes"`
		} `json:"servers"`
	}
	decodeStep(t, read, 3, &l3)
	if len(l3.Servers) != 1 || l3.Servers[0].ID != id || l3.Servers[0].State != "ready" || l3.Servers[0].PID == 0 || l3.Servers[0].Memory == "" {
		t.Fatalf("list_language_servers = %+v, want %s ready with a pid and memory", l3, id)
	}
	var r4 struct {
		Server struct {
			Restarts int `json:"restarts"`
			PID      int `json:"pid"`
		} `json:"server"`
	}
	decodeStep(t, read, 5, &r4)
	if r4.Server.Restarts != 1 || r4.Server.PID == l3.Servers[0].PID {
		t.Fatalf("restart_language_server = %+v, want restarts 1 and a new pid", r4)
	}
}

// TestConfigureLanguageServerMCP: configure_language_server from a tab
// needs the configure grant. Denied, nothing changes; allowed once, a
// configuration that cannot start is refused with the reason and the old
// one keeps working; a good one is used from then on.
func TestConfigureLanguageServerMCP(t *testing.T) {
	env, mod := lspUp(t)
	// Without the grant: the human denies (and that tab is turned away for
	// a while, so the granted calls come from a second tab).
	deniedTab, denied := runAgentIn(t, env, mod, "lsp-denied", []map[string]any{
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": "main.go", "wait_ms": 90000}},                                      // 0
		{"op": "call", "tool": "configure_language_server", "args": map[string]any{"language": "go", "command": "gopls", "args": []string{"serve"}}}, // 1
	})
	if r := resultOf(t, waitStep(t, denied, 0)); r.IsError {
		t.Fatalf("list_diagnostics: %s", r.text())
	}
	s := sheetFor(t, env, "configure_language_server")
	if s["capability"] != "CAPABILITY_CONFIGURE" || !strings.Contains(fmt.Sprint(s["subject"]), "gopls") {
		t.Errorf("sheet for configure_language_server = %v, want capability configure naming the command", s)
	}
	mustPhantom(t, env, "sheet", "answer", s["id"].(string), "--deny")
	if f := failure(t, waitStep(t, denied, 1)); !strings.Contains(f, "denied") {
		t.Errorf("configure_language_server denied reported %q, want the denial", f)
	}
	if _, err := os.Stat(filepath.Join(env.Layout.State, "lspd.json")); !os.IsNotExist(err) {
		t.Errorf("a denied configure saved settings: %v", err)
	}

	// With the grant: a bad command is refused with the reason, the old
	// configuration keeps answering; a good one is used by this tab's
	// server of the workspace only, and not saved.
	configTab, read := runAgentIn(t, env, mod, "lsp-config", []map[string]any{
		{"op": "call", "tool": "configure_language_server", "args": map[string]any{"language": "go", "command": "/nonexistent/gopls"}},               // 0
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": "main.go", "wait_ms": 60000}},                                      // 1
		{"op": "call", "tool": "configure_language_server", "args": map[string]any{"language": "go", "command": "gopls", "args": []string{"serve"}}}, // 2
		{"op": "call", "tool": "list_language_servers"}, // 3
	})
	s = sheetFor(t, env, "configure_language_server")
	mustPhantom(t, env, "sheet", "answer", s["id"].(string), "--always", "--scope", "tab")
	if f := failure(t, waitStep(t, read, 0)); !strings.Contains(f, "/nonexistent/gopls") || !strings.Contains(f, "previous one") {
		t.Errorf("configure_language_server with a missing command reported %q, want it refused naming the command and keeping the previous one", f)
	}
	var d1 diagResp
	decodeStep(t, read, 1, &d1)
	if !d1.Settled || len(d1.Files) != 1 || len(d1.Files[0].Diagnostics) == 0 {
		t.Errorf("list_diagnostics after a refused configure = %+v, want the old server still answering", d1)
	}
	var c2 struct {
		Command []string `json:"command"`
	}
	decodeStep(t, read, 2, &c2)
	if strings.Join(c2.Command, " ") != "gopls serve" {
		t.Errorf("configure_language_server = %+v, want command gopls serve", c2)
	}
	if _, err := os.Stat(filepath.Join(env.Layout.State, "lspd.json")); !os.IsNotExist(err) {
		t.Errorf("an agent's configuration was saved for every workspace: %v", err)
	}
	var l3 struct {
		Servers []struct {
			ID      string   `json:"id"`
			Command []string `json:"command"`
			State   string   `json:"state"`
			Sandbox string   `json:"sandbox"`
		} `json:"servers"`
	}
	decodeStep(t, read, 3, &l3)
	for _, sv := range l3.Servers {
		if !strings.HasSuffix(sv.ID, "@"+configTab) {
			t.Errorf("tab %s's agent sees server %s, not of its own confinement", configTab, sv.ID)
		}
		if sv.ID == "go:"+mod+"@"+configTab && sv.State != "ready" && sv.State != "indexing" {
			t.Errorf("the configured server is %s, want it up (ready or indexing)", sv.State)
		}
		if !strings.Contains(sv.Sandbox, "sandbox") {
			t.Errorf("server %s of an agent runs %q, want it in a sandbox", sv.ID, sv.Sandbox)
		}
	}
	// The human sees every tab's servers.
	commands := map[string]string{}
	for _, sv := range humanServers(t, env).Servers {
		commands[sv.ID] = strings.Join(sv.Command, " ")
	}
	if commands["go:"+mod+"@"+configTab] != "gopls serve" || commands["go:"+mod+"@"+deniedTab] != "gopls" {
		t.Errorf("list_language_servers (the human's) after configure = %+v\nwant gopls serve for tab %s's server only, gopls for tab %s's", commands, configTab, deniedTab)
	}
}

// writeAtomically writes body to path so that a reader sees all or
// nothing.
func writeAtomically(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// TestLanguageServerMCPCAndPython: from tabs in a C project and a Python
// project, agents on the Go SDK client see clangd's missing include and
// pylsp's undefined name through list_diagnostics; each server is then
// killed with SIGKILL (its pid from list_language_servers), and the next
// list_diagnostics answers again with a server listed as restarted.
func TestLanguageServerMCPCAndPython(t *testing.T) {
	langs := []struct {
		name, server string
		check        string // a shell command that must succeed, or the test skips
		files        map[string]string
		file, want   string
	}{
		{"c", "clangd", "true", map[string]string{".git/HEAD": "ref: refs/heads/main\n", "main.c": "#include \"missing.h\"\n\nint main(void) { return 0; }\n"}, "main.c", "not found"},
		{"python", "pylsp", `"$(sed -n '1s/^#!//p' "$(command -v pylsp)")" -c 'import pyflakes'`,
			map[string]string{"pyproject.toml": "[project]\nname = \"m\"\n", "main.py": "def main():\n    return undefined_thing\n"}, "main.py", "undefined name"},
	}
	for _, l := range langs {
		if _, err := exec.LookPath(l.server); err != nil {
			t.Skipf("%s is not installed: %v", l.server, err)
		}
		if out, err := exec.Command("sh", "-c", l.check).CombinedOutput(); err != nil {
			t.Skipf("%s: %v\n%s", l.check, err, out)
		}
	}
	env, _ := lspUp(t)
	type agent struct {
		dir, id, killed string
		read            func() []agentLine
	}
	agents := make([]agent, len(langs))
	for i, l := range langs {
		a := &agents[i]
		a.dir = filepath.Join(env.Home, "src", l.name)
		for name, body := range l.files {
			lspWrite(t, filepath.Dir(filepath.Join(a.dir, name)), filepath.Base(name), body)
		}
		a.killed = filepath.Join(t.TempDir(), "killed")
		var tab string
		tab, a.read = runAgentIn(t, env, a.dir, "lsp-"+l.name, []map[string]any{
			{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": l.file, "wait_ms": 90000}}, // 0
			{"op": "call", "tool": "list_language_servers"},                                                      // 1
			{"op": "wait", "file": a.killed},                                                                     // 2
			{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": l.file, "wait_ms": 90000}}, // 3
			{"op": "call", "tool": "list_language_servers"},                                                      // 4
		})
		a.id = l.name + ":" + a.dir + "@" + tab
	}
	type servers struct {
		Servers []struct {
			ID        string `json:"id"`
			State     string `json:"state"`
			PID       int    `json:"pid"`
			Restarts  int    `json:"restarts"`
			LastError string `json:"last_error"`
		} `json:"servers"`
	}
	find := func(s servers, id string) (int, int, string) {
		for _, x := range s.Servers {
			if x.ID == id {
				return x.PID, x.Restarts, x.State
			}
		}
		return 0, 0, ""
	}
	wantError := func(step int, l string, d diagResp, want string) {
		t.Helper()
		if !d.Settled || len(d.Files) != 1 || !d.Files[0].Current || len(d.Files[0].Diagnostics) == 0 || !strings.Contains(d.Files[0].Diagnostics[0].Message, want) {
			t.Fatalf("%s step %d: list_diagnostics = %+v\nwant one settled, current file with %q", l, step, d, want)
		}
	}
	for i, l := range langs {
		a := agents[i]
		var d0 diagResp
		decodeStep(t, a.read, 0, &d0)
		wantError(0, l.name, d0, l.want)
		var s1 servers
		decodeStep(t, a.read, 1, &s1)
		pid, _, _ := find(s1, a.id)
		if pid == 0 {
			t.Fatalf("%s: list_language_servers = %+v, want %s with a pid", l.name, s1, a.id)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill -9 %s's %d: %v", l.server, pid, err)
		}
		// The agent asks again once the server is dead (a zombie until
		// lspd reaps it), not merely signalled.
		eventually(t, fmt.Sprintf("%s's server %d to die", l.name, pid), func() (bool, string) {
			st, err := procfs.Default.Stat(pid)
			return err != nil || st.State == 'Z', fmt.Sprint(st.State)
		})
		lspWrite(t, filepath.Dir(a.killed), filepath.Base(a.killed), "")
		var d3 diagResp
		decodeStep(t, a.read, 3, &d3)
		wantError(3, l.name, d3, l.want)
		var s4 servers
		decodeStep(t, a.read, 4, &s4)
		if after, restarts, state := find(s4, a.id); restarts < 1 || after == pid || after == 0 || state != "ready" {
			t.Fatalf("%s: after kill -9 of %d, list_language_servers = %+v\nwant %s ready with a new pid and restarts ≥ 1", l.name, pid, s4, a.id)
		}
	}
}
