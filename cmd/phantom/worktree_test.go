package main

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

// upWithGit is up(t) with git isolated from the machine's configuration:
// every process of the instance (gitd's git included) reads a global
// config file in the test's HOME, never the system's.
func upWithGit(t *testing.T) *testenv.Env {
	t.Helper()
	env := testenv.New(t)
	gitconfig := filepath.Join(env.Home, ".gitconfig-test")
	if err := os.WriteFile(gitconfig, []byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, kv := range env.Vars {
		if !strings.HasPrefix(kv, "GIT_") {
			vars = append(vars, kv)
		}
	}
	env.Vars = append(vars, "GIT_CONFIG_GLOBAL="+gitconfig, "GIT_CONFIG_NOSYSTEM=1")
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	mustPhantom(t, env, "up")
	return env
}

// gitIn runs git in dir with env's variables and returns its output.
func gitIn(t *testing.T, env *testenv.Env, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir, c.Env = dir, env.Vars
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// runAgentIn is runAgent with the tab started in dir and the bridge
// introduced as client.
func runAgentIn(t *testing.T, env *testenv.Env, dir, client string, script []map[string]any) (tab string, outcomes func() []agentLine) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	scriptPath, outPath := filepath.Join(tmp, "script.json"), filepath.Join(tmp, "out.jsonl")
	b, _ := json.Marshal(script)
	if err := os.WriteFile(scriptPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	tab = strings.TrimSpace(mustPhantom(t, env, "new", "--name", client, "--dir", dir, "--", "sh", "-c",
		`TESTAGENT_CLIENT="$1"; export TESTAGENT_CLIENT; shift; exec "$0" "$@"`,
		testAgent(t), client, phantomBin, scriptPath, outPath))
	read := func() []agentLine { return readAgentLines(outPath) }
	t.Cleanup(func() { killAgent(read()) })
	return tab, read
}

// sheetFor waits for exactly one sheet, for tool, and returns it.
func sheetFor(t *testing.T, env *testenv.Env, tool string) map[string]any {
	t.Helper()
	var got map[string]any
	eventually(t, "a sheet for "+tool, func() (bool, string) {
		s := sheetsJSON(t, env)
		if len(s) == 1 && s[0]["tool"] == tool {
			got = s[0]
		}
		return got != nil, fmt.Sprint(s)
	})
	return got
}

// failure is what an agent step reported as failing: a protocol error or an
// isError result's text; empty when the call succeeded.
func failure(t *testing.T, l agentLine) string {
	t.Helper()
	if l.Error != "" {
		return l.Error
	}
	if r := resultOf(t, l); r.IsError {
		return r.text()
	}
	return ""
}

// TestWorktreeMCP drives gitd's worktree tools end to end: agents running
// the official MCP Go SDK client inside tabs of a real repository, through
// `phantom +mcp-server`, the gateway, authz (sheets answered with the CLI)
// and gitd running the real git.
func TestWorktreeMCP(t *testing.T) {
	env := upWithGit(t)

	// A repository with one commit on main, in the test's HOME.
	repo := filepath.Join(env.Home, "src", "app")
	if err := os.MkdirAll(filepath.Dir(repo), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, env, filepath.Dir(repo), "init", "-q", "-b", "main", repo)
	gitIn(t, env, repo, "commit", "-q", "--allow-empty", "-m", "init")
	folder := filepath.Join(filepath.Dir(repo), "app.worktrees")
	featX, featY := filepath.Join(folder, "feature-x"), filepath.Join(folder, "feature-y")
	notRepo := filepath.Join(env.Home, "plain")
	if err := os.MkdirAll(notRepo, 0o755); err != nil {
		t.Fatal(err)
	}

	// 1. Without a grant a sheet asks; denied, the call fails with the
	// reason, and the tab is turned away without a sheet for a while.
	tab1, read1 := runAgentIn(t, env, repo, "wt-denied", []map[string]any{
		{"op": "call", "tool": "list_worktrees"}, // 0
		{"op": "call", "tool": "list_worktrees"}, // 1
	})
	s := sheetFor(t, env, "list_worktrees")
	if s["capability"] != "CAPABILITY_WORKTREE" || s["reach"] != "SCOPE_TAB" || s["client"] != "wt-denied" ||
		!strings.Contains(fmt.Sprint(s["subject"]), repo) {
		t.Errorf("sheet for list_worktrees from tab %s = %v\nwant capability worktree, reach tab, client wt-denied, subject naming %s", tab1, s, repo)
	}
	mustPhantom(t, env, "sheet", "answer", s["id"].(string), "--deny")
	if f := failure(t, waitStep(t, read1, 0)); !strings.Contains(f, "denied") {
		t.Errorf("denied list_worktrees reported %q, want an error giving the reason (denied)", f)
	}
	l1 := waitStep(t, read1, 1)
	if f := failure(t, l1); !strings.Contains(f, "may ask again") || !strings.Contains(f, tab1) {
		t.Errorf("list_worktrees right after a deny reported %q, want it turned away naming tab %s", f, tab1)
	}
	if ss := sheetsJSON(t, env); len(ss) != 0 {
		t.Errorf("a turned-away call raised sheets: %v", ss)
	}

	// 2. A second agent in another tab of the repository, granted always
	// for its tab, works with worktrees.
	opened := filepath.Join(t.TempDir(), "opened")
	tab2, read2 := runAgentIn(t, env, repo, "wt-agent", []map[string]any{
		{"op": "call", "tool": "list_worktrees"},                                                                     // 0
		{"op": "call", "tool": "add_worktree", "args": map[string]any{"branch": "feature/x"}},                        // 1
		{"op": "call", "tool": "add_worktree", "args": map[string]any{"branch": "feature/y", "open_terminal": true}}, // 2
		{"op": "wait", "file": opened},                                                                               // 3
		{"op": "call", "tool": "remove_worktree", "args": map[string]any{"path": featY}},                             // 4
		{"op": "call", "tool": "remove_worktree", "args": map[string]any{"path": featY, "force": true}},              // 5
		{"op": "call", "tool": "tidy_worktrees", "args": map[string]any{"dry_run": true}},                            // 6
		{"op": "call", "tool": "add_worktree", "args": map[string]any{"branch": "--upload-pack=x"}},                  // 7
		{"op": "call", "tool": "list_worktrees", "args": map[string]any{"repository": notRepo}},                      // 8
	})
	s = sheetFor(t, env, "list_worktrees")
	if s["capability"] != "CAPABILITY_WORKTREE" || s["reach"] != "SCOPE_TAB" || s["client"] != "wt-agent" {
		t.Errorf("sheet for the second agent = %v", s)
	}
	mustPhantom(t, env, "sheet", "answer", s["id"].(string), "--always", "--scope", "tab")
	gs := grantsJSON(t, env)
	if len(gs) != 1 || gs[0]["always"] != true || gs[0]["scope"] != "SCOPE_TAB" {
		t.Errorf("grants after --always --scope tab = %v", gs)
	}

	// list_worktrees: the main worktree, on main, with the agent's tab.
	r0 := resultOf(t, waitStep(t, read2, 0))
	if r0.IsError {
		t.Fatalf("list_worktrees = %s", r0.text())
	}
	var list struct {
		Repository     string `json:"repository"`
		DefaultBranch  string `json:"default_branch"`
		WorktreeFolder string `json:"worktree_folder"`
		Worktrees      []struct {
			Path        string   `json:"path"`
			Branch      string   `json:"branch"`
			Main        bool     `json:"main"`
			Head        string   `json:"head"`
			TerminalIDs []string `json:"terminal_ids"`
		} `json:"worktrees"`
	}
	b, _ := json.Marshal(r0.StructuredContent)
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatalf("list_worktrees structuredContent %s: %v", b, err)
	}
	if list.Repository != repo || list.DefaultBranch != "main" || list.WorktreeFolder != folder || len(list.Worktrees) != 1 {
		t.Errorf("list_worktrees = %s\nwant repository %s, default branch main, folder %s, one worktree", b, repo, folder)
	} else if w := list.Worktrees[0]; w.Path != repo || w.Branch != "main" || !w.Main || len(w.Head) != 40 ||
		!contains(w.TerminalIDs, tab2) || !contains(w.TerminalIDs, tab1) {
		t.Errorf("main worktree = %+v, want %s on main with tabs %s and %s", w, repo, tab1, tab2)
	}

	// add_worktree puts feature/x in the documented default place.
	r1 := resultOf(t, waitStep(t, read2, 1))
	if r1.IsError || !strings.Contains(r1.text(), featX) {
		t.Errorf("add_worktree feature/x = %+v, want it at %s", r1, featX)
	}
	if cb, _ := r1.StructuredContent["created_branch"].(bool); !cb {
		t.Errorf("add_worktree feature/x structuredContent = %v, want created_branch", r1.StructuredContent)
	}
	wl := gitIn(t, env, repo, "worktree", "list", "--porcelain")
	if !strings.Contains(wl, "worktree "+featX+"\n") || !strings.Contains(wl, "branch refs/heads/feature/x\n") {
		t.Errorf("git worktree list after add_worktree:\n%s\nwant %s on feature/x", wl, featX)
	}

	// add_worktree with open_terminal opens a tab in the new worktree.
	r2 := resultOf(t, waitStep(t, read2, 2))
	newTab, _ := r2.StructuredContent["terminal_id"].(string)
	if r2.IsError || newTab == "" {
		t.Fatalf("add_worktree feature/y open_terminal = %+v, want a terminal_id", r2)
	}
	if !strings.Contains(gitIn(t, env, repo, "worktree", "list"), featY) {
		t.Errorf("feature/y not on disk")
	}
	var tb map[string]any
	eventually(t, "the opened tab in ls --json, in the worktree", func() (bool, string) {
		tb = tabByID(tabs(t, env), newTab)
		return tb != nil && tb["directory"] == featY, fmt.Sprint(tb)
	})
	if tb["worktree"] != featY {
		t.Errorf("BUG? tab %s opened in worktree %s: ls --json shows worktree %q (full tab: %v)", newTab, featY, tb["worktree"], tb)
	}
	// 4. Plain `phantom ls` has a WORKTREE column showing it.
	ls := mustPhantom(t, env, "ls")
	if lines := strings.Split(ls, "\n"); !strings.Contains(lines[0], "WORKTREE") {
		t.Errorf("phantom ls header lacks WORKTREE:\n%s", ls)
	}
	found := false
	for _, line := range strings.Split(ls, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == newTab {
			// DIRECTORY and WORKTREE both show the path.
			found = strings.Count(line, featY) >= 2
		}
	}
	if !found {
		t.Errorf("phantom ls does not show worktree %s for tab %s:\n%s", featY, newTab, ls)
	}
	os.WriteFile(opened, nil, 0o600)

	// remove_worktree refuses while the tab works there, then forced.
	if f := failure(t, waitStep(t, read2, 4)); f == "" || !strings.Contains(f, newTab) {
		t.Errorf("remove_worktree of %s with tab %s in it reported %q, want a refusal naming the tab", featY, newTab, f)
	}
	r5 := resultOf(t, waitStep(t, read2, 5))
	if r5.IsError || r5.StructuredContent["path"] != featY {
		t.Errorf("remove_worktree force = %+v", r5)
	}
	if wl := gitIn(t, env, repo, "worktree", "list"); strings.Contains(wl, featY) {
		t.Errorf("git worktree list after a forced remove:\n%s", wl)
	}
	if _, err := os.Stat(featY); !os.IsNotExist(err) {
		t.Errorf("%s after the forced remove: %v, want it gone", featY, err)
	}

	// tidy_worktrees dry_run: a report, nothing changed.
	r6 := resultOf(t, waitStep(t, read2, 6))
	if _, ok := r6.StructuredContent["report"]; r6.IsError || !ok {
		t.Errorf("tidy_worktrees dry_run = %+v, want a report", r6)
	}
	if wl := gitIn(t, env, repo, "worktree", "list"); !strings.Contains(wl, featX) {
		t.Errorf("dry run changed the worktrees:\n%s", wl)
	}

	// 3. Refusals: an option for a branch, a directory outside any
	// repository (its reach is all, beyond the tab grant: allow it once).
	if f := failure(t, waitStep(t, read2, 7)); !strings.Contains(f, "branch") || !strings.Contains(f, "--upload-pack=x") {
		t.Errorf("add_worktree branch --upload-pack=x reported %q, want an invalid argument naming branch", f)
	}
	if strings.Contains(gitIn(t, env, repo, "branch", "--list"), "upload-pack") {
		t.Error("a branch named after an option was created")
	}
	var l8 agentLine
	eventually(t, "list_worktrees of a plain directory to finish", func() (bool, string) {
		for _, sh := range sheetsJSON(t, env) {
			if sh["tool"] == "list_worktrees" {
				// The sheet may have gone meanwhile: not an error.
				phantom(t, env, "sheet", "answer", sh["id"].(string), "--once")
			}
		}
		for _, l := range read2() {
			if l.Step == 8 || l.Op == "fatal" {
				l8 = l
				return true, ""
			}
		}
		return false, fmt.Sprint(read2())
	})
	if f := failure(t, l8); !strings.Contains(f, "not in a git repository") || !strings.Contains(f, notRepo) {
		t.Errorf("list_worktrees of %s reported %q, want an error saying it is not a repository", notRepo, f)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
