package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/editord/editor"
	"github.com/phantom-dev/phantom/editord/nvim"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// deputyUp starts an instance outside the temporary directories (see
// instanceOutsideTemp: a sandboxed tab may write /tmp, so a home there
// would prove nothing), from the copy of phantom that lives there too, with
// git isolated from the machine's configuration as adversaryUp does. It
// returns the instance and the phantom binary its daemons run. Attacker
// tabs keep their job files in the test's original temporary directory,
// which their sandbox may write. vars (KEY=VALUE) go to the daemons.
func deputyUp(t *testing.T, vars ...string) (*testenv.Env, string) {
	t.Helper()
	tmp := os.TempDir()
	env, bin, _ := instanceOutsideTemp(t)
	t.Setenv("TMPDIR", tmp)
	gitconfig := filepath.Join(env.Home, ".gitconfig-test")
	if err := os.WriteFile(gitconfig, []byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Vars = slices.DeleteFunc(env.Vars, func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	env.Vars = append(env.Vars, "GIT_CONFIG_GLOBAL="+gitconfig, "GIT_CONFIG_NOSYSTEM=1")
	env.Vars = append(env.Vars, vars...)
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	up := exec.Command(bin, "up")
	up.Env, up.Dir = env.Vars, env.Home
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("phantom up: %v\n%s", err, out)
	}
	return env, bin
}

// plantedCode is what a hostile agent writes into its own repository: one
// script that every planted git feature runs with its name. It records
// that it ran (in the attacker's directory, which the sandbox may write),
// tries to write a marker into the human's home and Phantom's state
// directory, and asks for the human's sheets and grants; then, as a
// filter, passes its input through.
const plantedCode = `#!/bin/sh
kind=$1; ran=%[1]s/ran-$kind
{
	echo ran
	for d in %[2]s %[3]s; do
		if echo escaped >"$d/escaped-$kind"; then echo "wrote $d"; else echo "refused $d"; fi
	done
	%[4]s sheet list --json; echo "sheet-exit=$?"
	%[4]s grants; echo "grants-exit=$?"
} >>"$ran" 2>&1 </dev/null
case $kind in smudge|clean) exec cat ;; esac
exit 0
`

// TestDeputyGitPlantedCode: a sandboxed agent plants a post-checkout hook,
// a smudge and clean filter (with a .gitattributes), core.fsmonitor and a
// textconv driver in its own repository, then calls list_worktrees and
// add_worktree (one with open_terminal) through MCP; the human answers
// each sheet once. What git ran for gitd ran inside the agent's sandbox:
// it could not write the human's home or Phantom's state, could not list
// sheets or grants; the grants are unchanged; and the tab opened for the
// agent is sandboxed and marked as the agent's.
func TestDeputyGitPlantedCode(t *testing.T) {
	env, bin := deputyUp(t)
	repo := filepath.Join(env.Home, "src", "app")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, env, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.txt filter=evil diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, env, repo, "add", ".")
	gitIn(t, env, repo, "commit", "-q", "-m", "init")

	a := newAttacker(t, env, "deputy", "--sandbox", "--dir", repo)
	if tb := tabByID(tabs(t, env), a.tab); tb["sandboxed"] != true {
		t.Skipf("the attacker's tab is not sandboxed on this kernel: %v", tb)
	}
	outsideHome, outsideState := env.Home, env.Layout.State
	escaped := func() []string {
		var out []string
		for _, d := range []string{outsideHome, outsideState} {
			m, _ := filepath.Glob(filepath.Join(d, "escaped-*"))
			out = append(out, m...)
		}
		return out
	}
	grantsBefore := grantIDs(t, env)

	// The agent plants everything from its sandboxed tab: its own
	// repository is its to write.
	evil := filepath.Join(repo, ".git", "evil.sh")
	script := fmt.Sprintf(plantedCode, sq(a.dir), sq(outsideHome), sq(outsideState), sq(bin))
	plant := strings.Join([]string{
		"set -e",
		"cat >" + sq(evil) + " <<'EOF'\n" + script + "EOF",
		"chmod +x " + sq(evil),
		"printf '#!/bin/sh\\nexec %s post-checkout\\n' " + sq(evil) + " >" + sq(filepath.Join(repo, ".git", "hooks", "post-checkout")),
		"chmod +x " + sq(filepath.Join(repo, ".git", "hooks", "post-checkout")),
		"git -C " + sq(repo) + " config filter.evil.smudge " + sq(evil+" smudge"),
		"git -C " + sq(repo) + " config filter.evil.clean " + sq(evil+" clean"),
		"git -C " + sq(repo) + " config diff.evil.textconv " + sq(evil+" textconv"),
		"git -C " + sq(repo) + " config core.fsmonitor " + sq(evil+" fsmonitor"),
		"git -C " + sq(repo) + " config core.sshCommand " + sq(evil+" ssh"),
		// A changed file makes git status re-hash it: the clean filter.
		"echo changed >>" + sq(filepath.Join(repo, "a.txt")),
	}, "\n")
	if r := a.run(plant); r.code != 0 {
		t.Fatalf("planting from the sandboxed tab: %v", r)
	}

	run := a.agent("deputy-agent",
		map[string]any{"op": "call", "tool": "list_worktrees"},                                                                       // 0
		map[string]any{"op": "call", "tool": "add_worktree", "args": map[string]any{"branch": "feature/evil"}},                       // 1
		map[string]any{"op": "call", "tool": "add_worktree", "args": map[string]any{"branch": "feature/tab", "open_terminal": true}}, // 2
	)
	for i, tool := range []string{"list_worktrees", "add_worktree", "add_worktree"} {
		if f := failure(t, answerOnce(t, env, run.read, i, a.tab, tool, i == 0)); f != "" {
			t.Errorf("step %d, %s, answered once, failed: %s", i, tool, f)
		}
	}

	if e := escaped(); len(e) != 0 {
		t.Errorf("code planted in the repository wrote outside the agent's sandbox: %v", e)
	}
	folder := filepath.Join(filepath.Dir(repo), "app.worktrees")
	if _, err := os.Stat(filepath.Join(folder, "feature-evil", "a.txt")); err != nil {
		t.Errorf("add_worktree did not check out feature/evil: %v", err)
	}
	ran := map[string]string{}
	for _, kind := range []string{"post-checkout", "smudge", "clean", "fsmonitor", "textconv", "ssh"} {
		b, err := os.ReadFile(filepath.Join(a.dir, "ran-"+kind))
		if err != nil {
			continue
		}
		ran[kind] = string(b)
		out := string(b)
		if strings.Contains(out, "wrote ") || !strings.Contains(out, "refused "+outsideHome) {
			t.Errorf("%s ran with writes outside the sandbox:\n%s", kind, out)
		}
		if strings.Contains(out, "sheet-exit=0") || strings.Contains(out, "grants-exit=0") {
			t.Errorf("%s, run by gitd, listed the human's sheets or grants:\n%s", kind, out)
		}
	}
	// git runs these for worktree add; the others only where git needs
	// them (a status that re-hashes, a diff, a fetch).
	for _, kind := range []string{"post-checkout", "smudge"} {
		if ran[kind] == "" {
			t.Errorf("the planted %s never ran (so nothing was proved); ran: %v", kind, ran)
		}
	}
	t.Logf("planted code that ran: %v", ran)
	if got := grantIDs(t, env); !slices.Equal(got, grantsBefore) {
		t.Errorf("grants after once answers = %v, want them unchanged %v", got, grantsBefore)
	}

	// The tab add_worktree opened for the agent is sandboxed and the
	// agent's.
	var added struct {
		TerminalID string `json:"terminal_id"`
	}
	b, _ := json.Marshal(resultOf(t, waitStep(t, run.read, 2)).StructuredContent)
	if err := json.Unmarshal(b, &added); err != nil || added.TerminalID == "" {
		t.Fatalf("add_worktree with open_terminal = %s, want a terminal_id", b)
	}
	tb := tabByID(tabs(t, env), added.TerminalID)
	if tb["sandboxed"] != true || tb["name_set_by_agent"] != true {
		t.Errorf("tab %s opened by add_worktree for a sandboxed agent = %v, want sandboxed and its name set by the agent", added.TerminalID, tb)
	}
}

// answerOnce answers, as the human, every sheet step i of an agent run
// raises from tab for tool with --once, until the step ends, and returns
// its outcome. With mustAsk the step must raise a sheet first: a call
// decided without the human would prove nothing about answers given once.
func answerOnce(t *testing.T, env *testenv.Env, read func() []agentLine, i int, tab, tool string, mustAsk bool) agentLine {
	t.Helper()
	if mustAsk {
		s := agentAsksHuman(t, env, read, i, tab, tool, "planted git code")
		mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
	}
	var out agentLine
	eventually(t, fmt.Sprintf("step %d, %s, to end", i, tool), func() (bool, string) {
		if s := sheetOf(t, env, tab, tool); s != nil {
			phantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
		}
		for _, l := range read() {
			if l.Op == "fatal" {
				t.Fatalf("the agent failed: %s", l.Error)
			}
			if l.Step == i {
				out = l
				return true, ""
			}
		}
		return false, fmt.Sprint(read())
	})
	return out
}

// TestDeputyEditorTab: the editor editord opens for open_file from a
// sandboxed agent runs Neovim in the agent's sandbox, in a tab marked as
// the agent's (its name and client), listening on a socket of its own
// that editord reaches: open_file and reveal_line work end to end. With
// the human's own, unsandboxed editor open in the window (`phantom edit`),
// the sandboxed agent never drives it: it gets its own sandboxed editor,
// and the human's Neovim never shows the agent's file.
func TestDeputyEditorTab(t *testing.T) {
	if _, err := exec.LookPath("nvim"); err != nil {
		t.Skip("no nvim")
	}
	env, bin := deputyUp(t)
	// The agent works in its own directory (its job files are there too:
	// its sandbox's /tmp is private).
	a := newAttacker(t, env, "deputy-editor", "--sandbox")
	if tb := tabByID(tabs(t, env), a.tab); tb["sandboxed"] != true {
		t.Skipf("the attacker's tab is not sandboxed on this kernel: %v", tb)
	}
	work := a.dir
	t.Cleanup(func() {
		if t.Failed() {
			outs, _ := filepath.Glob(filepath.Join(a.dir, "job*.out"))
			for _, o := range outs {
				b, _ := os.ReadFile(o)
				t.Logf("%s:\n%s", o, b)
			}
			b, _ := os.ReadFile(filepath.Join(env.Layout.Logs, "editord.log"))
			t.Logf("editord log:\n%s", b)
		}
	})
	for _, f := range []string{"a.txt", "human.txt"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("hello\nsecond\nthird\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The human's editor, unsandboxed, in the same window.
	human := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "human-editor", "--dir", work, "--", bin, "edit", "human.txt"))
	t.Cleanup(func() { phantom(t, env, "close", human) })
	eventually(t, "the human's editor tab to be the window's editor", func() (bool, string) {
		tb := tabByID(tabs(t, env), human)
		return tb["editor"] == true, fmt.Sprint(tb)
	})
	humanTab := tabByID(tabs(t, env), human)
	if humanTab["sandboxed"] == true {
		t.Fatalf("the human's editor tab is sandboxed: %v", humanTab)
	}
	window := fmt.Sprint(humanTab["window_id"])
	if w := fmt.Sprint(tabByID(tabs(t, env), a.tab)["window_id"]); w != window {
		t.Fatalf("the agent's tab is in window %s, the human's editor in %s", w, window)
	}

	run := a.agent("deputy-editor",
		map[string]any{"op": "call", "tool": "open_file", "args": map[string]any{"path": "a.txt", "line": 2}},
		map[string]any{"op": "call", "tool": "reveal_line", "args": map[string]any{"path": "a.txt", "line": 3, "message": "here"}},
		map[string]any{"op": "call", "tool": "list_panes", "args": map[string]any{}},
	)
	var editorTab string
	for i, tool := range []string{"open_file", "reveal_line", "list_panes"} {
		l := answerOnce(t, env, run.read, i, a.tab, tool, false)
		if f := failure(t, l); f != "" {
			t.Fatalf("%s from a sandboxed agent failed: %s", tool, f)
		}
		sc := resultOf(t, l).StructuredContent
		var term any
		if o, ok := sc["opened"].(map[string]any); ok {
			term = o["terminal_id"]
		} else {
			term = sc["terminal_id"]
		}
		if i == 0 {
			editorTab = fmt.Sprint(term)
		}
		if fmt.Sprint(term) != editorTab || editorTab == human {
			t.Fatalf("%s from the sandboxed agent answered from editor tab %v (first %s, the human's %s): %v", tool, term, editorTab, human, sc)
		}
		if tool == "reveal_line" {
			if line := sc["line"]; line != float64(3) {
				t.Errorf("reveal_line = line %v, want 3: %v", line, sc)
			}
		}
	}
	tb := tabByID(tabs(t, env), editorTab)
	if tb["sandboxed"] != true || tb["name_set_by_agent"] != true || tb["editor"] != true || fmt.Sprint(tb["window_id"]) != window {
		t.Errorf("editor tab opened for a sandboxed agent = %v, want sandboxed, named by the agent, an editor of window %s", tb, window)
	}
	if tb["agent_client"] != "deputy-editor" {
		t.Errorf("editor tab opened for agent deputy-editor has agent_client %v, want deputy-editor", tb["agent_client"])
	}
	// The human's Neovim saw nothing of it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nvim.Dial(ctx, env.Layout.EditorSocket(window))
	if err != nil {
		t.Fatalf("reach the human's editor: %v", err)
	}
	defer c.Close()
	st, err := editor.New(c).State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range st.Tabs {
		if filepath.Base(f.Path) == "a.txt" {
			t.Errorf("the human's editor shows the sandboxed agent's file: %+v", st.Tabs)
		}
	}
}
