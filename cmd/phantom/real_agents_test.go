package main

// The real agent CLIs in real agent tabs (invariant 7): Claude Code, Codex
// CLI and Gemini CLI, installed from npm at the versions scripts/agent-versions
// pins, start in `phantom new --agent` tabs of an isolated instance, reach
// Phantom's MCP server through the entries `phantom mcp install` writes,
// keep their state from one tab to the next, write nothing the sandbox
// refuses, leave the human's own agent files alone (invariant 6: those are
// commands the human's unsandboxed runs execute), and each connection is
// placed in the agent's own tab.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// agentCLIs installs the pinned agent CLIs into .tools/agents unless the
// stamp says they are there (as scripts/setup does), and returns the
// directory of their launchers. It skips only when npm is absent.
func agentCLIs(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pins, err := os.ReadFile(filepath.Join(root, "scripts", "agent-versions"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".tools", "agents")
	bin := filepath.Join(dir, "node_modules", ".bin")
	sum := sha256.Sum256(pins)
	stamp := filepath.Join(dir, ".versions.sha256")
	if b, _ := os.ReadFile(stamp); strings.TrimSpace(string(b)) == hex.EncodeToString(sum[:]) {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm here: the real agent CLIs cannot be installed; ./scripts/setup installs npm and them")
	}
	os.Remove(stamp)
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error"},
		strings.Fields(string(pins))...)
	t.Logf("installing the agent CLIs: npm %s", strings.Join(args, " "))
	if out, err := exec.Command(npm, args...).CombinedOutput(); err != nil {
		t.Fatalf("npm install of the agent CLIs (scripts/agent-versions) into %s: %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(stamp, []byte(hex.EncodeToString(sum[:])+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin
}

// agentBench is an isolated instance whose agents claude, codex and gemini
// run job scripts: each agent's program is `sh JOB`, and JOB is rewritten
// before each tab, so one configuration serves every run.
type agentBench struct {
	env     *testenv.Env
	bin     string // the phantom binary outside the temporary directories
	project string // the agent tabs' directory
	clis    string // the agent CLIs' launchers
}

// cliRun is what one command of an agent tab printed and how it exited.
type cliRun struct {
	cmd  string
	out  string
	code int
}

func (r cliRun) String() string { return fmt.Sprintf("$ %s\n(exit %d)\n%s", r.cmd, r.code, r.out) }

// uidMapRefused matches bubblewrap failing to map its user namespace, as
// it does in a tab without the namespace walls.
var uidMapRefused = regexp.MustCompile(`uid.map`)

// sandboxNoise matches what a program prints when the sandbox refused one
// of its writes.
var sandboxNoise = regexp.MustCompile(`(?i)EACCES|EROFS|EPERM|permission denied|read-only file system|operation not permitted`)

// job returns the path of agent's job script.
func (b *agentBench) job(agent string) string { return filepath.Join(b.project, ".jobs", agent+".sh") }

// run opens an agent tab for agent (named name) that runs cmds, each
// with the agent's CLI as its program, one after the other under
// `timeout --foreground`; it waits for them and returns the tab and what
// each printed. Output goes to the tab's own directory, which the sandbox
// lets it write (a tab's /tmp may be its own).
func (b *agentBench) run(t *testing.T, agent, name string, cmds ...[]string) (string, []cliRun) {
	t.Helper()
	tab, runs := b.start(t, agent, name, cmds...)
	for _, r := range runs {
		if r.code != 0 {
			t.Errorf("in tab %s: %s exited %d", tab, r.cmd, r.code)
		}
		if m := sandboxNoise.FindString(r.out); m != "" {
			t.Errorf("in tab %s: %s printed %q: the sandbox refused one of its writes", tab, r.cmd, m)
		}
	}
	return tab, runs
}

// start is run without judging the outcome.
func (b *agentBench) start(t *testing.T, agent, name string, cmds ...[]string) (string, []cliRun) {
	t.Helper()
	out := filepath.Join(b.project, ".jobs", name)
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "out=%s\ncd %s\n", shellQuote(out), shellQuote(b.project))
	for i, c := range cmds {
		limit := "100"
		if len(c) == 0 || strings.HasPrefix(c[0], "-") {
			limit = "8" // an interactive session on the tab's terminal, stopped after a look
		}
		fmt.Fprintf(&s, "timeout --foreground -k 5 %s %s", limit, shellQuote(filepath.Join(b.clis, agent)))
		for _, a := range c {
			s.WriteString(" " + shellQuote(a))
		}
		if limit == "100" {
			fmt.Fprintf(&s, " >\"$out/%d.log\" 2>&1", i)
		}
		fmt.Fprintf(&s, "\necho $? >\"$out/%d.code\"\n", i)
	}
	s.WriteString("touch \"$out/done\"\nexec sleep 600\n")
	if err := os.WriteFile(b.job(agent), []byte(s.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	tab := strings.TrimSpace(mustPhantom(t, b.env, "new", "--agent", agent, "--dir", b.project, "--name", name))
	t.Cleanup(func() { phantom(t, b.env, "close", tab) })
	deadline := time.Now().Add(150 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(out, "done")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s in tab %s did not finish within 150 s; the tab shows:\n%s", agent, tab, phantom(t, b.env, "read", tab, "-n", "60").stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	runs := make([]cliRun, len(cmds))
	for i, c := range cmds {
		log, _ := os.ReadFile(filepath.Join(out, strconv.Itoa(i)+".log"))
		code, _ := os.ReadFile(filepath.Join(out, strconv.Itoa(i)+".code"))
		runs[i] = cliRun{cmd: agent + " " + strings.Join(c, " "), out: string(log)}
		runs[i].code, _ = strconv.Atoi(strings.TrimSpace(string(code)))
		t.Logf("in tab %s:\n%v", tab, runs[i])
	}
	return tab, runs
}

// connectedIn checks that the gateway placed a connection of client in
// tab: its log's msg=connected line names both.
func (b *agentBench) connectedIn(t *testing.T, client, tab string) {
	t.Helper()
	log, _ := os.ReadFile(filepath.Join(b.env.Layout.Logs, "gateway.log"))
	var lines []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "msg=connected") && strings.Contains(l, "client="+client) {
			if strings.Contains(l, "tab="+tab+" ") || strings.HasSuffix(l, "tab="+tab) {
				return
			}
			lines = append(lines, l)
		}
	}
	t.Errorf("no connection of %s placed in its tab %s; the gateway's connections of %s:\n%s", client, tab, client, strings.Join(lines, "\n"))
}

// newAgentBench starts the instance with the three agents configured and
// `phantom mcp install` run for them, as a user would.
func newAgentBench(t *testing.T) *agentBench {
	t.Helper()
	clis := agentCLIs(t)
	env, bin, _ := instanceOutsideTemp(t)
	b := &agentBench{env: env, bin: bin, project: filepath.Join(env.Home, "project"), clis: clis}
	for _, d := range []string{filepath.Join(b.project, ".jobs"), env.Layout.Config, filepath.Join(env.Home, ".gemini")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	agents := map[string][]string{}
	for _, a := range []string{"claude", "codex", "gemini"} {
		agents[a] = []string{"/bin/sh", b.job(a)}
	}
	cfg, _ := json.Marshal(map[string]any{"shell": "/bin/bash", "agents": agents})
	if err := os.WriteFile(filepath.Join(env.Layout.Config, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	// Node 22 from scripts/setup first: the CLIs' launchers are node scripts.
	if node, err := filepath.Abs("../../.tools/node/node_modules/.bin"); err == nil {
		env.Vars = append(env.Vars, "PATH="+node+string(os.PathListSeparator)+env.Getenv("PATH"))
	}
	env.Vars = append(env.Vars, "GEMINI_API_KEY=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
	t.Cleanup(func() { phantom(t, env, "down") })
	// Started, and the entries written, by the copy outside /tmp, so that
	// the bridge the agents start is reachable from every tab.
	for _, args := range [][]string{{"up"}, {"mcp", "install", "claude", "codex", "gemini"}} {
		c := exec.Command(bin, args...)
		c.Env, c.Dir = env.Vars, env.Home
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("phantom %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Gemini CLI starts no MCP server in a folder the user has not trusted.
	trusted, _ := json.Marshal(map[string]string{b.project: "TRUST_FOLDER"})
	if err := os.WriteFile(filepath.Join(env.Home, ".gemini", "trustedFolders.json"), trusted, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// humanFiles reads the human's own agent files, to check later that no
// agent tab changed them.
func humanFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, f := range []string{".claude.json", ".codex/config.toml", ".gemini/settings.json"} {
		b, err := os.ReadFile(filepath.Join(home, f))
		if err != nil {
			t.Fatalf("phantom mcp install wrote no %s: %v", f, err)
		}
		files[f] = string(b)
	}
	return files
}

// TestRealAgents runs each agent CLI twice in agent tabs: the first run
// connects to Phantom (or, for Codex, completes a list_terminals call
// against a fake model on 127.0.0.1) and adds an MCP server entry; the
// second, in a new tab, must see that entry.
func TestRealAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three real agent CLIs")
	}
	b := newAgentBench(t)
	before := humanFiles(t, b.env.Home)

	t.Run("group", func(t *testing.T) {
		t.Run("claude", func(t *testing.T) {
			t.Parallel()
			tab, runs := b.run(t, "claude", "claude-1", []string{"mcp", "list"}, []string{"mcp", "add", "-s", "user", "kept", "--", "/bin/true"})
			if !regexp.MustCompile(`phantom:.*Connected`).MatchString(runs[0].out) {
				t.Errorf("claude mcp list does not show phantom connected:\n%s", runs[0].out)
			}
			b.connectedIn(t, "claude", tab)
			_, runs = b.run(t, "claude", "claude-2", []string{"mcp", "list"})
			if !strings.Contains(runs[0].out, "kept:") {
				t.Errorf("a new claude tab lost the entry the first added:\n%s", runs[0].out)
			}
		})
		t.Run("gemini", func(t *testing.T) {
			t.Parallel()
			tab, runs := b.run(t, "gemini", "gemini-1", []string{"mcp", "list"}, []string{"mcp", "add", "-s", "user", "kept", "/bin/true"})
			if !regexp.MustCompile(`phantom.*Connected`).MatchString(runs[0].out) {
				t.Errorf("gemini mcp list does not show phantom connected:\n%s", runs[0].out)
			}
			b.connectedIn(t, "gemini", tab)
			_, runs = b.run(t, "gemini", "gemini-2", []string{"mcp", "list"})
			if !strings.Contains(runs[0].out, "kept") {
				t.Errorf("a new gemini tab lost the entry the first added:\n%s", runs[0].out)
			}
		})
		t.Run("codex", func(t *testing.T) { t.Parallel(); testRealCodex(t, b) })
	})

	after := humanFiles(t, b.env.Home)
	for f, was := range before {
		if after[f] != was {
			t.Errorf("an agent tab changed your ~/%s (your unsandboxed runs execute what it says):\nbefore:\n%s\nafter:\n%s", f, was, after[f])
		}
	}
	if home := config.DefaultAgentHomes()["claude"].Path(b.env.Home); !strings.Contains(readFile(t, filepath.Join(home, ".claude.json")), `"kept"`) {
		t.Errorf("Claude Code's entry is not in its agent home %s", home)
	}
}

// testRealCodex runs `codex exec` against scripts/fake-model.py, which asks
// for list_terminals and quotes the result, then checks the entry added in
// the first tab is seen in the second, and that Codex's own sandbox runs
// a command inside the tab's.
func testRealCodex(t *testing.T, b *agentBench) {
	py := worldPython3(t)
	dir := t.TempDir()
	port, log := filepath.Join(dir, "port"), filepath.Join(dir, "fake.log")
	fake := exec.Command(py, "../../scripts/fake-model.py", "--port-file", port, "--log", log, "--lifetime", "200")
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Kill(); fake.Wait() })
	var p []byte
	eventually(t, "the fake model to listen", func() (bool, string) {
		p, _ = os.ReadFile(port)
		return len(strings.TrimSpace(string(p))) > 0, ""
	})
	provider := fmt.Sprintf(`model_providers.fake={name="fake model on 127.0.0.1",base_url="http://127.0.0.1:%s/v1",wire_api="responses"}`, strings.TrimSpace(string(p)))
	tab, runs := b.run(t, "codex", "codex-1",
		[]string{"exec", "--skip-git-repo-check", "-c", `model="fake-model"`, "-c", `model_provider="fake"`, "-c", provider, "Which terminals are open in Phantom?"},
		[]string{"mcp", "add", "kept", "--", "/bin/true"})
	if !regexp.MustCompile(`tool result received: .*"id":"t[0-9]`).MatchString(readFile(t, log)) {
		t.Errorf("the fake model received no list_terminals result naming a tab; its log:\n%s\ncodex exec:\n%v", readFile(t, log), runs[0])
	}
	b.connectedIn(t, "codex", tab)
	_, runs = b.run(t, "codex", "codex-2", []string{"mcp", "list"})
	if !strings.Contains(runs[0].out, "kept") {
		t.Errorf("a new codex tab lost the entry the first added:\n%s", runs[0].out)
	}
	t.Run("no shared background server", func(t *testing.T) {
		// Codex's TUI hands its session to a background server, one per
		// CODEX_HOME, which would run in the first tab's sandbox for every
		// later tab: the agent home turns it off.
		tab, runs := b.start(t, "codex", "codex-tui", []string{"-c", `model="fake-model"`, "-c", `model_provider="fake"`, "-c", provider})
		if runs[0].code != 124 {
			t.Errorf("Codex's TUI did not run until stopped (exit %d); the tab shows:\n%s", runs[0].code, phantom(t, b.env, "read", tab, "-n", "40").stdout)
		}
		sock := filepath.Join(config.DefaultAgentHomes()["codex"].Path(b.env.Home), "app-server-control", "app-server-control.sock")
		if _, err := os.Stat(sock); err == nil {
			t.Errorf("Codex's TUI in an agent tab started its shared background server (%s)", sock)
		}
	})
	t.Run("nested sandbox", func(t *testing.T) {
		// Codex runs every shell command under its own bubblewrap sandbox;
		// inside a tab's, that takes the namespace walls (another branch):
		// without them bwrap cannot write /proc/self/uid_map.
		_, runs := b.start(t, "codex", "codex-sandbox", []string{"sandbox", "--", "cat", "/etc/hostname"})
		if r := runs[0]; r.code != 0 && uidMapRefused.MatchString(r.out) {
			t.Skipf("needs the namespace walls: Codex's bubblewrap cannot map its user namespace in a sandboxed tab:\n%v", r)
		} else if r.code != 0 || sandboxNoise.MatchString(r.out) {
			t.Errorf("Codex's own sandbox does not run inside an agent tab:\n%v", r)
		}
	})
}

// readFile returns path's contents, or "" when it cannot be read.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}
