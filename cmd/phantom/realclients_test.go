package main

// Real MCP clients, as users run them: the MCP Inspector CLI and a
// TypeScript SDK client (scripts/mcp-clients/sdk-client.mjs), pinned by
// scripts/mcp-clients/package-lock.json and installed by scripts/setup into
// .tools/node. Each runs inside a real tab of one isolated instance, reads
// the config `phantom mcp install` writes, and starts the bridge with the
// environment stripped the way Codex, the TypeScript SDK's default and
// Inspector 2.x strip it: nothing of Phantom's (PHANTOM_*, XDG_*) reaches
// the bridge, which must still find the gateway and be placed in its tab.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// nodeClients is where scripts/setup installed the clients.
type nodeClients struct {
	node      string // Node 22, from npm (Inspector 2.x needs >= 22.19)
	inspector string // the Inspector's launcher script
	sdkClient string // scripts/mcp-clients/sdk-client.mjs
	versions  string // for the log: which client versions ran
}

// realClients finds the installed clients. It skips the test only when no
// Node.js is there at all; installed clients that are missing or differ
// from the committed lock fail it, since scripts/setup would fix that.
func realClients(t *testing.T) nodeClients {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	clients, tools := filepath.Join(root, "scripts", "mcp-clients"), filepath.Join(root, ".tools", "node")
	modules := filepath.Join(tools, "node_modules")
	nc := nodeClients{
		node:      filepath.Join(modules, ".bin", "node"),
		inspector: filepath.Join(modules, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"),
		sdkClient: filepath.Join(clients, "sdk-client.mjs"),
	}
	if _, err := os.Stat(nc.node); err != nil {
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("no Node.js here (none on PATH, none in .tools/node): the real MCP clients cannot run; ./scripts/setup installs them")
		}
		t.Fatalf("the real MCP clients are not installed in %s: run ./scripts/setup", tools)
	}
	// The same stamp scripts/setup writes: a hash of the manifest and lock.
	var pinned []byte
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(clients, f))
		if err != nil {
			t.Fatal(err)
		}
		pinned = append(pinned, b...)
	}
	sum := sha256.Sum256(pinned)
	if stamp, _ := os.ReadFile(filepath.Join(tools, ".lock.sha256")); strings.TrimSpace(string(stamp)) != hex.EncodeToString(sum[:]) {
		t.Fatalf("%s holds other versions than scripts/mcp-clients/package-lock.json pins: run ./scripts/setup", tools)
	}
	nodeVersion, err := exec.Command(nc.node, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", nc.node, err, nodeVersion)
	}
	version := func(pkg string) string {
		var p struct{ Version string }
		b, _ := os.ReadFile(filepath.Join(modules, pkg, "package.json"))
		json.Unmarshal(b, &p)
		return p.Version
	}
	nc.versions = fmt.Sprintf("node %s, @modelcontextprotocol/inspector %s, @modelcontextprotocol/sdk %s, ajv %s",
		strings.TrimSpace(string(nodeVersion)), version("@modelcontextprotocol/inspector"),
		version("@modelcontextprotocol/sdk"), version("ajv"))
	return nc
}

// mcpConfig has `phantom mcp install` write Claude Code's project config
// (.mcp.json, mcpServers — the format the Inspector's --config reads) in dir,
// and returns its path, the server's name in it and the client name its
// bridge announces.
func mcpConfig(t *testing.T, env *testenv.Env, dir string) (path, server, client string) {
	t.Helper()
	path, server = filepath.Join(dir, ".mcp.json"), "phantom"
	mustPhantom(t, env, "mcp", "install", "--project", dir, "claude")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	for _, a := range cfg.MCPServers[server].Args {
		if c, ok := strings.CutPrefix(a, "--client="); ok {
			client = c
		}
	}
	if cfg.MCPServers[server].Command == "" || client == "" {
		t.Fatalf("%s has no %s entry running the bridge with --client:\n%s", path, server, b)
	}
	return path, server, client
}

// clientRun is what one client command printed and how it exited.
type clientRun struct {
	cmd            string
	stdout, stderr string
	code           int
}

func (r clientRun) String() string {
	return fmt.Sprintf("$ %s\nexit %d\nstdout:\n%s\nstderr:\n%s", r.cmd, r.code, r.stdout, r.stderr)
}

// clientTab opens a tab in dir that runs cmds one after the other, each
// under `env -i` with only HOME, PATH and TERM (fewer variables than any
// client passes on) and without a terminal on stdin, bounded by timeout.
// The tab is sandboxed as agent tabs are, so the bridge must reach the
// gateway from inside the sandbox. It returns the tab and a function
// reporting command i once it finished.
func clientTab(t *testing.T, env *testenv.Env, dir, name string, cmds ...[]string) (string, func(i int) (clientRun, bool)) {
	t.Helper()
	// In the tab's own directory: a sandboxed tab has a /tmp of its own.
	out, err := os.MkdirTemp(dir, "."+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	var script strings.Builder
	script.WriteString(`out=$1 i=0
step() {
	timeout -k 5 90 env -i HOME="$HOME" PATH="$PATH" TERM="$TERM" "$@" </dev/null >"$out/$i.out" 2>"$out/$i.err"
	echo $? >"$out/$i.tmp" && mv "$out/$i.tmp" "$out/$i.code"
	i=$((i+1))
}
`)
	for _, c := range cmds {
		script.WriteString("step")
		for _, a := range c {
			script.WriteString(" " + shellQuote(a))
		}
		script.WriteString("\n")
	}
	tab := strings.TrimSpace(mustPhantom(t, env, "new", "--sandbox", "--dir", dir, "--name", name, "--", "sh", "-c", script.String(), "sh", out))
	// Closing hangs up whatever still runs, and withdraws its sheets, so a
	// failed subtest leaves nothing for the next one to trip over.
	t.Cleanup(func() { phantom(t, env, "close", tab) })
	return tab, func(i int) (clientRun, bool) {
		code, err := os.ReadFile(filepath.Join(out, strconv.Itoa(i)+".code"))
		if err != nil {
			return clientRun{}, false
		}
		r := clientRun{cmd: strings.Join(cmds[i], " ")}
		r.code, _ = strconv.Atoi(strings.TrimSpace(string(code)))
		b, _ := os.ReadFile(filepath.Join(out, strconv.Itoa(i)+".out"))
		r.stdout = string(b)
		b, _ = os.ReadFile(filepath.Join(out, strconv.Itoa(i)+".err"))
		r.stderr = string(b)
		return r, true
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// waitRun waits until command i of a client tab finished.
func waitRun(t *testing.T, run func(int) (clientRun, bool), i int) clientRun {
	t.Helper()
	var r clientRun
	eventually(t, fmt.Sprintf("client command %d to finish", i), func() (bool, string) {
		var ok bool
		r, ok = run(i)
		return ok, ""
	})
	return r
}

// clientSheet waits for the sheet command i of a client tab raises for tool,
// failing with what the client printed if it finished without one, and
// checks that the sheet names the client's tab and project, and that the
// bridge asking had none of Phantom's variables. The sheet is left open.
func clientSheet(t *testing.T, env *testenv.Env, run func(int) (clientRun, bool), i int, client, tab, project, tool, target string) string {
	t.Helper()
	var s map[string]any
	eventually(t, "a sheet for "+tool, func() (bool, string) {
		if r, done := run(i); done {
			t.Fatalf("the client finished without a sheet for %s:\n%v", tool, r)
		}
		if l := sheetsJSON(t, env); len(l) == 1 && l[0]["tool"] == tool {
			s = l[0]
		}
		return s != nil, mustPhantom(t, env, "sheet", "list")
	})
	if s["client"] != client || s["tab_id"] != tab || s["project"] != project ||
		!strings.Contains(fmt.Sprint(s["subject"]), "tab "+target) {
		t.Errorf("sheet = %v\nwant client %s, tab %s (the client's), project %s, subject naming tab %s",
			s, client, tab, project, target)
	}
	// While the call waits, the tab shows the agent connected from it.
	eventually(t, "tab "+tab+" to show client "+client, func() (bool, string) {
		tb := tabByID(tabs(t, env), tab)
		return tb["agent_client"] == client, fmt.Sprint(tb)
	})
	// The bridge waits on this sheet: its environment is the one the client
	// gave it.
	if pid, _ := s["pid"].(float64); pid <= 0 {
		t.Errorf("sheet = %v names no pid: cannot check which variables the bridge got", s)
	} else {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", int(pid)))
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", int(pid)))
		var keys []string
		for _, kv := range bytes.Split(bytes.TrimRight(environ, "\x00"), []byte{0}) {
			k, _, _ := strings.Cut(string(kv), "=")
			keys = append(keys, k)
		}
		t.Logf("the bridge (pid %d) got %d variables: %s", int(pid), len(keys), strings.Join(keys, " "))
		if err != nil || !bytes.Contains(cmdline, []byte("+mcp-server")) ||
			slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, "PHANTOM_") || strings.HasPrefix(k, "XDG_") }) {
			t.Errorf("the sheet's process %d (%q, %v) should be a bridge without PHANTOM_* or XDG_* variables; it has %v",
				int(pid), bytes.ReplaceAll(cmdline, []byte{0}, []byte(" ")), err, keys)
		}
	}
	id, _ := s["id"].(string)
	return id
}

// TestRealClients runs the MCP Inspector CLI and a TypeScript SDK client
// against one instance: the tools are listed, list_terminals and
// read_output of another tab work, and the read's sheet names the client's
// own tab and project although the client passed the bridge no hint.
func TestRealClients(t *testing.T) {
	nc := realClients(t)
	t.Log(nc.versions)
	env, _ := up(t)
	target := permTarget(t, env, "realclients-target-marker")
	project := filepath.Join(env.Home, "project")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	config, server, client := mcpConfig(t, env, project)

	t.Run("Inspector", func(t *testing.T) {
		inspector := func(args ...string) []string {
			// The Inspector looks for an OS keychain (there is none) and says
			// so on every run unless told where its secrets go.
			return append([]string{"MCP_INSPECTOR_SECRET_STORE=memory", nc.node, nc.inspector, "--cli",
				"--config", config, "--server", server, "--format", "json"}, args...)
		}
		readArgs, _ := json.Marshal(map[string]any{"terminal_id": target, "lines": 50})
		tab, run := clientTab(t, env, project, "inspector",
			// --strict: the Inspector's own check that the tool schemas are
			// portable across clients fails the run (exit 6) on an error.
			inspector("--method", "tools/list", "--strict"),
			inspector("--method", "tools/call", "--tool-name", "list_terminals"),
			inspector("--method", "tools/call", "--tool-name", "read_output", "--tool-args-json", string(readArgs)),
		)

		var list struct {
			Result struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		r := waitRun(t, run, 0)
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.code != 0 {
			t.Fatalf("tools/list: %v\n%v", err, r)
		}
		var names []string
		for _, tl := range list.Result.Tools {
			names = append(names, tl.Name)
			if tl.InputSchema["type"] != "object" {
				t.Errorf("tool %s: inputSchema %v", tl.Name, tl.InputSchema)
			}
		}
		t.Logf("tools/list: %d tools", len(names))
		if len(names) < 15 || !slices.Contains(names, "list_terminals") || !slices.Contains(names, "read_output") {
			t.Errorf("tools/list gave %d tools %v; want 15 or more, list_terminals and read_output among them", len(names), names)
		}

		r = waitRun(t, run, 1)
		if res := inspectorResult(t, r); res.IsError || !strings.Contains(res.text(), `"id":"`+tab+`"`) ||
			!strings.Contains(res.text(), `"id":"`+target+`"`) {
			t.Errorf("list_terminals should list the client's tab %s and %s:\n%v", tab, target, r)
		}

		id := clientSheet(t, env, run, 2, client, tab, project, "read_output", target)
		mustPhantom(t, env, "sheet", "answer", id, "--once")
		r = waitRun(t, run, 2)
		if res := inspectorResult(t, r); res.IsError || !strings.Contains(res.text(), "realclients-target-marker") {
			t.Errorf("read_output of %s should show its marker:\n%v", target, r)
		}
	})

	t.Run("TypeScriptSDK", func(t *testing.T) {
		tab, run := clientTab(t, env, project, "sdk-client", []string{nc.node, nc.sdkClient, config, server, target})
		id := clientSheet(t, env, run, 0, client, tab, project, "read_output", target)
		mustPhantom(t, env, "sheet", "answer", id, "--once")
		r := waitRun(t, run, 0)

		rep := sdkReportOf(t, r)
		t.Logf("%s negotiated %s; %d tools; the bridge got %v", rep.Client, rep.ProtocolVersion, len(rep.Tools), rep.BridgeEnv)
		for _, f := range rep.Failures {
			t.Errorf("SDK client: %s", f)
		}
		if len(rep.Tools) < 15 {
			t.Errorf("tools/list gave %d tools %v; want 15 or more", len(rep.Tools), rep.Tools)
		}
		if c := rep.Calls["list_terminals"]; c.IsError || c.Error != "" || !strings.Contains(c.Text, `"id":"`+tab+`"`) {
			t.Errorf("list_terminals = %+v; want the client's tab %s listed", c, tab)
		}
		if c := rep.Calls["read_output"]; c.IsError || c.Error != "" || !strings.Contains(c.Text, "realclients-target-marker") {
			t.Errorf("read_output = %+v; want %s's marker", c, target)
		}
		if t.Failed() {
			t.Logf("the SDK client's run:\n%v", r)
		}
	})
}

// inspectorResult is the tools/call result the Inspector printed with
// --format json ({"result": …}).
func inspectorResult(t *testing.T, r clientRun) toolResult {
	t.Helper()
	var out struct {
		Result *toolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Result == nil {
		t.Fatalf("the Inspector printed no result: %v\n%v", err, r)
	}
	return *out.Result
}

// sdkReport is what scripts/mcp-clients/sdk-client.mjs prints: what the
// TypeScript SDK client saw, and every failure in words.
type sdkReport struct {
	Client           string   `json:"client"`
	ProtocolVersion  string   `json:"protocol_version"`
	BridgeEnv        []string `json:"bridge_env"`
	Tools            []string `json:"tools"`
	ToolsListBytes   int      `json:"tools_list_bytes"`
	Untitled         []string `json:"untitled"`
	RefOutputSchemas []string `json:"ref_output_schemas"`
	Calls            map[string]struct {
		IsError           bool           `json:"is_error"`
		Text              string         `json:"text"`
		Structured        bool           `json:"structured"`
		StructuredContent map[string]any `json:"structured_content"`
		Error             string         `json:"error"`
		Progress          []progressNote `json:"progress"`
	} `json:"calls"`
	Failures []string `json:"failures"`
}

// sdkReportOf reads the report the SDK client printed last.
func sdkReportOf(t *testing.T, r clientRun) sdkReport {
	t.Helper()
	var rep sdkReport
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("the SDK client printed no JSON report: %v\n%v", err, r)
	}
	return rep
}
