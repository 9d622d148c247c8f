package main

// Invariant 5, first half: no free tool, and no CLI call from inside a
// tab, returns text that reading a tab needs a grant for. The human's
// tab holds a secret in everything its programs say of it — the command
// line its shell reports, a title set with OSC 2, a directory reported
// with OSC 7 — and agents in other tabs (a real MCP client over the real
// socket, sandboxed and not) call every free tool and the CLI's read
// paths.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// leakSecret is in everything the human's tab says of itself.
const leakSecret = "sk-live-"

// TestAdversarialNoTabTextForFree: with the human's tab showing a secret
// as its last command, title and directory, neither list_terminals nor
// any other free tool, nor `phantom ls [--json]` or `phantom status
// --json` run inside a sandboxed or a plain tab, returns it; an agent
// still sees the last commands of its own tab and of the tab it opened;
// the human, outside Phantom, still sees everything.
func TestAdversarialNoTabTextForFree(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	env := adversaryUp(t, "SHELL="+bash)
	human, _ := settledShell(t, env)
	token := "export API_TOKEN=" + leakSecret + "SECRET123"
	mustPhantom(t, env, "send", human, `printf '\033]2;%s\007' `+leakSecret+"TITLE", "Enter")
	mustPhantom(t, env, "send", human, token, "Enter")
	lastCommandIs(t, env, human, token)
	// The shell reports its real directory at each prompt: the OSC 7 one
	// holds while the next command runs.
	mustPhantom(t, env, "send", human, `printf '\033]7;file://localhost/`+leakSecret+`DIR\007'; sleep 1000`, "Enter")
	eventually(t, "the human's tab to show the secret title and directory", func() (bool, string) {
		h := tabByID(tabs(t, env), human)
		return h["title"] == leakSecret+"TITLE" && h["directory"] == "/"+leakSecret+"DIR", fmt.Sprint(h)
	})

	t.Run("agent with its own and an opened tab", func(t *testing.T) {
		// The agent types into its opened tab itself: the human's keys
		// there would make the tab the human's (terminald's adoption).
		typed := filepath.Join(t.TempDir(), "typed")
		mine, read, release := bashAgent(t, env, "echo own-marker", []map[string]any{
			{"op": "call", "tool": "create_terminal", "args": map[string]any{}},
			{"op": "wait", "file": typed},
			{"op": "call", "tool": "send_keys", "args": map[string]any{"terminal_id": "$STEP:0.terminal.id", "keys": []string{"echo opened-marker", "Enter"}}},
			{"op": "wait", "file": "$WAIT"},
			{"op": "call", "tool": "list_terminals", "args": map[string]any{}},
		})
		var created struct {
			Terminal struct {
				ID string `json:"id"`
			} `json:"terminal"`
		}
		structured(t, waitStep(t, read, 0), &created)
		opened := created.Terminal.ID
		runTabIdle(t, env, opened)
		if err := os.WriteFile(typed, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		waitStep(t, read, 2)
		lastCommandIs(t, env, opened, "echo opened-marker")
		release()
		var list struct {
			Terminals []struct {
				ID          string `json:"id"`
				LastCommand *struct {
					Command string `json:"command"`
				} `json:"last_command"`
			} `json:"terminals"`
		}
		structured(t, waitStep(t, read, 4), &list)
		got := map[string]string{}
		for _, tm := range list.Terminals {
			if tm.LastCommand != nil {
				got[tm.ID] = tm.LastCommand.Command
			}
		}
		if got[mine] != "echo own-marker" || got[opened] != "echo opened-marker" {
			t.Errorf("the agent sees last commands %v; want its own tab %s's and its opened tab %s's", got, mine, opened)
		}
		noLeak(t, "the agent in "+mine, agentOutput(read()))
	})

	for _, flags := range [][]string{nil, {"--sandbox"}} {
		name := "plain tab"
		if flags != nil {
			name = "sandboxed tab"
		}
		t.Run(name, func(t *testing.T) {
			a := newAttacker(t, env, "redact", flags...)
			calls := append(freeTools(human, a.dir),
				// Refused at once (the tab is busy), and denied by the human:
				// neither refusal may quote the tab.
				map[string]any{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": human, "command": "true"}},
				map[string]any{"op": "call", "tool": "read_output", "args": map[string]any{"terminal_id": human}})
			run := a.agent("test", calls...)
			deny(t, env, agentAsksHuman(t, env, run.read, len(calls)-1, a.tab, "read_output", "read the human's tab"))
			eventually(t, "the agent's calls", func() (bool, string) {
				lines := run.read()
				return len(lines) > 0 && lines[len(lines)-1].Done || hasFatal(lines), fmt.Sprint(lines)
			})
			lines := run.read()
			if hasFatal(lines) {
				t.Fatalf("the agent failed: %v", lines)
			}
			for _, l := range lines {
				if l.Op != "call" {
					continue
				}
				r := resultOf(t, l)
				if wantErr := l.Step >= len(calls)-2; r.IsError != wantErr {
					t.Errorf("step %d (%v): isError %v, want %v: %s", l.Step, calls[l.Step]["tool"], r.IsError, wantErr, r.text())
				}
				if l.Step == 0 && !strings.Contains(r.text(), `"`+human+`"`) {
					t.Errorf("list_terminals = %+v; want a list with the human's tab %s", r, human)
				}
			}
			noLeak(t, "the agent in the "+name, agentOutput(lines))
			bin := a.own(phantomBin, "phantom")
			for _, args := range [][]string{{"ls", "--json"}, {"ls"}, {"status", "--json"}, {"window", "ls"}} {
				r := a.run(shellCmd(append([]string{bin}, args...)...))
				noLeak(t, "phantom "+strings.Join(args, " ")+" in the "+name, r.String())
				switch {
				case r.code != 0 && flags == nil && args[0] == "ls":
					t.Errorf("phantom %s in the %s failed: %v", strings.Join(args, " "), name, r)
				case r.code != 0:
					// Refused (window ls is the human's), or, from a
					// sandboxed tab, no daemon's socket within reach.
					t.Logf("phantom %s in the %s: %v", strings.Join(args, " "), name, r)
				case args[0] == "ls" && !strings.Contains(r.out, human):
					t.Errorf("phantom %s in the %s lists no tab %s: %v", strings.Join(args, " "), name, human, r)
				}
			}
		})
	}

	t.Run("agent outside every tab", func(t *testing.T) {
		// An MCP client the human started outside Phantom is still an
		// agent: it sees no tab in full.
		dir := t.TempDir()
		script, out := filepath.Join(dir, "script.json"), filepath.Join(dir, "out.jsonl")
		b, _ := json.Marshal(append(freeTools(human, dir), map[string]any{"op": "exit"}))
		if err := os.WriteFile(script, b, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(testAgent(t), phantomBin, script, out)
		cmd.Env = env.Vars
		if err := cmd.Run(); err != nil {
			t.Fatalf("the agent outside every tab: %v", err)
		}
		lines := readAgentLines(out)
		if hasFatal(lines) {
			t.Fatalf("the agent outside every tab failed: %s", agentOutput(lines))
		}
		noLeak(t, "the agent outside every tab", agentOutput(lines))
		ts, _ := resultOf(t, lines[1]).StructuredContent["terminals"].([]any)
		if len(ts) < 2 {
			t.Errorf("list_terminals outside every tab = %v; want every tab", ts)
		}
		for _, tm := range ts {
			if m, _ := tm.(map[string]any); m["last_command"] != nil {
				t.Errorf("the agent outside every tab sees tab %v's last command %v", m["id"], m["last_command"])
			}
		}
	})

	// The human, outside Phantom, sees everything.
	h := tabByID(tabs(t, env), human)
	last, _ := h["last_command"].(map[string]any)
	if h["title"] != leakSecret+"TITLE" || h["directory"] != "/"+leakSecret+"DIR" || last["command"] != token {
		t.Errorf("the human sees their tab as %v; want its program's title, OSC 7 directory and last command", h)
	}
	if out := mustPhantom(t, env, "ls"); !strings.Contains(out, leakSecret+"TITLE") {
		t.Errorf("phantom ls shows the human no program title:\n%s", out)
	}
}

// freeTools is a test agent script calling every free tool that answers
// without starting an editor or a language server, the human's tab as
// the target where one is taken; dir is the agent's own directory. Every
// call succeeds.
func freeTools(human, dir string) []map[string]any {
	call := func(tool string, args map[string]any) map[string]any {
		return map[string]any{"op": "call", "tool": tool, "args": args}
	}
	return []map[string]any{
		call("list_terminals", map[string]any{}),
		call("list_groups", map[string]any{}),
		call("list_theme_colors", map[string]any{}),
		call("focus_terminal", map[string]any{"terminal_id": human}),
		call("update_terminal", map[string]any{"terminal_id": human, "icon": "x"}),
		call("create_group", map[string]any{"name": "redact"}),
		call("move_to_group", map[string]any{"terminal_id": human, "group_id": "$STEP:5.group.id"}),
		call("move_to_group", map[string]any{"terminal_id": human, "group_id": ""}),
		call("update_group", map[string]any{"group_id": "$STEP:5.group.id", "name": "redact2"}),
		call("create_terminal", map[string]any{}),
		call("list_panes", map[string]any{}),
		call("list_language_servers", map[string]any{}),
		call("list_diagnostics", map[string]any{"path": dir}),
		call("list_terminals", map[string]any{}),
	}
}

// bashAgent opens a bash tab in which the human first types first (its
// last command) and then starts the test agent with script. A step
// {"op":"wait","file":"$WAIT"} waits until release is called.
func bashAgent(t *testing.T, env *testenv.Env, first string, script []map[string]any) (tab string, read func() []agentLine, release func()) {
	t.Helper()
	dir := t.TempDir()
	wait := filepath.Join(dir, "go")
	for _, s := range script {
		if s["file"] == "$WAIT" {
			s["file"] = wait
		}
	}
	path := filepath.Join(dir, "agent")
	b, _ := json.Marshal(append(script, map[string]any{"op": "exit"}))
	if err := os.WriteFile(path+".json", b, 0o600); err != nil {
		t.Fatal(err)
	}
	read = func() []agentLine { return readAgentLines(path + ".jsonl") }
	t.Cleanup(func() { killAgent(read()) })
	tab = strings.TrimSpace(mustPhantom(t, env, "new", "--name", "agent"))
	runTabIdle(t, env, tab)
	mustPhantom(t, env, "send", tab, first, "Enter")
	lastCommandIs(t, env, tab, first)
	mustPhantom(t, env, "send", tab, shellCmd(testAgent(t), phantomBin, path+".json", path+".jsonl"), "Enter")
	release = func() {
		if err := os.WriteFile(wait, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return tab, read, release
}

// lastCommandIs waits until the human's list shows cmd as tab's last
// command and the tab idle.
func lastCommandIs(t *testing.T, env *testenv.Env, tab, cmd string) {
	t.Helper()
	eventually(t, "last command "+cmd+" in tab "+tab, func() (bool, string) {
		tm := tabByID(tabs(t, env), tab)
		last, _ := tm["last_command"].(map[string]any)
		return last["command"] == cmd && tm["idle"] == true, fmt.Sprint(tm)
	})
}

// noLeak fails if out holds the human's secret.
func noLeak(t *testing.T, who, out string) {
	t.Helper()
	if i := strings.Index(out, leakSecret); i >= 0 {
		t.Errorf("%s got the human's secret: …%s…", who, out[max(0, i-200):min(len(out), i+100)])
	}
}

// agentOutput is everything an agent run reported.
func agentOutput(lines []agentLine) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "step %d %s: %s %s\n", l.Step, l.Op, l.Result, l.Error)
	}
	return b.String()
}

func hasFatal(lines []agentLine) bool {
	for _, l := range lines {
		if l.Op == "fatal" {
			return true
		}
	}
	return false
}
