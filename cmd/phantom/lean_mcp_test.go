package main

// Issue 24, item 6 end to end: a tools/list a model reads gladly. The
// official Go SDK client, inside a real tab, lists the tools (at most
// 40 KB, a title on each, enums as plain words, descriptions saying which
// calls may wait for the human), calls tools with enum arguments by their
// words and gets words back, and opens a tab without a directory in its
// own tab's directory.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// maxToolsList is the most bytes tools/list's result may take.
const maxToolsList = 40 << 10

func TestLeanToolsList(t *testing.T) {
	env := upWithGit(t)
	proj := filepath.Join(env.Home, "proj")
	mustMkdir(t, proj)
	gitIn(t, env, proj, "init", "-q")
	gitIn(t, env, proj, "commit", "-q", "--allow-empty", "-m", "first")

	tab, read := runAgentIn(t, env, proj, "lean", []map[string]any{
		{"op": "list"},                           // 0
		{"op": "call", "tool": "list_terminals"}, // 1
		{"op": "call", "tool": "tidy_worktrees", "args": map[string]any{ // 2
			"repository": proj, "actions": []map[string]any{{"kind": "prune"}}}},
		{"op": "call", "tool": "tidy_worktrees", "args": map[string]any{ // 3
			"repository": proj, "actions": []map[string]any{{"kind": "KIND_PRUNE"}}}},
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": proj, "min_severity": "error"}},          // 4
		{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": proj, "min_severity": "SEVERITY_ERROR"}}, // 5
		{"op": "call", "tool": "create_terminal", "args": map[string]any{"name": "here"}},                                  // 6
	})

	// tools/list: within budget, a title on every tool, no protobuf enum
	// name anywhere, and the tools needing a permission say they may wait.
	l0 := waitStep(t, read, 0)
	if l0.Error != "" {
		t.Fatalf("tools/list: %s", l0.Error)
	}
	if len(l0.Result) > maxToolsList {
		t.Errorf("tools/list is %d bytes, want at most %d", len(l0.Result), maxToolsList)
	}
	t.Logf("tools/list: %d bytes", len(l0.Result))
	if m := regexp.MustCompile(`"[A-Z][A-Z0-9]*_[A-Z0-9_]+"`).Find(l0.Result); m != nil {
		t.Errorf("tools/list holds the protobuf enum name %s; enums are plain words", m)
	}
	var list struct {
		Tools []struct {
			Name, Title, Description string
		} `json:"tools"`
	}
	if err := json.Unmarshal(l0.Result, &list); err != nil {
		t.Fatal(err)
	}
	mayWait := map[string]bool{}
	for _, tl := range list.Tools {
		if tl.Title == "" {
			t.Errorf("tool %s has no title", tl.Name)
		}
		mayWait[tl.Name] = strings.Contains(tl.Description, "May wait for the human on a permission sheet")
	}
	for name, want := range map[string]bool{"read_output": true, "run_command": true, "tidy_worktrees": true, "list_terminals": false, "open_file": false} {
		if mayWait[name] != want {
			t.Errorf("%s's description says it may wait for the human: %v, want %v", name, mayWait[name], want)
		}
	}

	// Enum words in results: the agent's own tab shows it connected.
	var terms struct {
		Terminals []struct {
			ID         string `json:"id"`
			AgentState string `json:"agent_state"`
		} `json:"terminals"`
	}
	structured(t, waitStep(t, read, 1), &terms)
	for _, tm := range terms.Terminals {
		if tm.ID == tab && tm.AgentState != "working" && tm.AgentState != "idle" {
			t.Errorf("list_terminals shows the calling agent's tab %s in state %q, want \"working\" or \"idle\"", tab, tm.AgentState)
		}
	}

	// An enum argument by its word, a result with words: the sheet for
	// worktree is answered once.
	stop := make(chan struct{})
	answerSheets(t, env, "tidy_worktrees", stop)
	var tidy struct {
		Results []struct {
			Action struct {
				Kind string `json:"kind"`
			} `json:"action"`
			Outcome string `json:"outcome"`
		} `json:"results"`
	}
	structured(t, waitStep(t, read, 2), &tidy)
	if len(tidy.Results) != 1 || tidy.Results[0].Action.Kind != "prune" {
		t.Errorf("tidy_worktrees with kind prune = %+v, want one result whose action's kind is \"prune\"", tidy)
	}
	// The protobuf name is refused, listing the words.
	if r := resultOf(t, waitStep(t, read, 3)); !r.IsError ||
		!strings.Contains(r.text(), `actions[0].kind must be one of prune, repair, move, lock, unlock, got "KIND_PRUNE"`) {
		t.Errorf("tidy_worktrees with kind KIND_PRUNE = %+v, want it refused listing the words", r)
	}
	close(stop)
	if r := resultOf(t, waitStep(t, read, 4)); r.IsError {
		t.Errorf("list_diagnostics with min_severity error: %s", r.text())
	}
	if r := resultOf(t, waitStep(t, read, 5)); !r.IsError ||
		!strings.Contains(r.text(), `min_severity must be one of error, warning, information, hint, got "SEVERITY_ERROR"`) {
		t.Errorf("list_diagnostics with min_severity SEVERITY_ERROR = %+v, want it refused listing the words", r)
	}

	// create_terminal without a directory: the agent's tab's directory.
	var created struct {
		Terminal struct {
			ID        string `json:"id"`
			Directory string `json:"directory"`
			OpenedBy  string `json:"opened_by"`
		} `json:"terminal"`
	}
	structured(t, waitStep(t, read, 6), &created)
	t.Cleanup(func() { phantom(t, env, "close", created.Terminal.ID) })
	if !sameDir(created.Terminal.Directory, proj) || created.Terminal.OpenedBy != tab {
		t.Errorf("create_terminal without a directory from tab %s (in %s) = %+v, want a tab opened by it in %s",
			tab, proj, created.Terminal, proj)
	}
	eventually(t, "the new tab's shell to work in "+proj, func() (bool, string) {
		tb := tabByID(tabs(t, env), created.Terminal.ID)
		d, _ := tb["directory"].(string)
		return sameDir(d, proj), d
	})
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// TestLeanRealClients: the TypeScript SDK client from npm, in a real tab,
// lists the tools (within budget, every one titled, some output schemas
// using $ref) and calls tidy_worktrees, whose outputSchema defines
// TidyItem once in $defs and references it from each of the report's
// lists, on a repository with a prunable worktree: the SDK's own check of
// structuredContent against the outputSchema passes, and so does ajv's
// (scripts/mcp-clients/sdk-client.mjs). The worktree sheet is answered
// once by the human.
func TestLeanRealClients(t *testing.T) {
	nc := realClients(t)
	t.Log(nc.versions)
	env := upWithGit(t)
	project := filepath.Join(env.Home, "project")
	mustMkdir(t, project)
	gitIn(t, env, project, "init", "-q")
	gitIn(t, env, project, "commit", "-q", "--allow-empty", "-m", "first")
	gone := filepath.Join(env.Home, "gone")
	gitIn(t, env, project, "worktree", "add", "-q", "-b", "gone", gone)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	config, server, _ := mcpConfig(t, env, project)
	calls, _ := json.Marshal([]map[string]any{
		{"name": "tidy_worktrees", "arguments": map[string]any{"repository": project, "dry_run": true}},
	})
	stop := make(chan struct{})
	answerSheets(t, env, "tidy_worktrees", stop)
	defer close(stop)
	_, run := clientTab(t, env, project, "sdk-lean", []string{nc.node, nc.sdkClient, config, server, "-", string(calls)})
	r := waitRun(t, run, 0)
	rep := sdkReportOf(t, r)
	t.Logf("tools/list as the TypeScript SDK got it: %d bytes; output schemas with $ref: %v", rep.ToolsListBytes, rep.RefOutputSchemas)
	for _, f := range rep.Failures {
		t.Errorf("SDK client: %s", f)
	}
	if rep.ToolsListBytes == 0 || rep.ToolsListBytes > maxToolsList {
		t.Errorf("tools/list is %d bytes, want at most %d", rep.ToolsListBytes, maxToolsList)
	}
	if len(rep.Untitled) > 0 {
		t.Errorf("tools without a title: %v", rep.Untitled)
	}
	if !slices.Contains(rep.RefOutputSchemas, "tidy_worktrees") {
		t.Errorf("tidy_worktrees' outputSchema has no $ref (those with one: %v); the test calls it for its $ref", rep.RefOutputSchemas)
	}
	c := rep.Calls["tidy_worktrees"]
	if c.IsError || c.Error != "" || !c.Structured || !strings.Contains(c.Text, `"prunable":[{"path":"`+gone+`"`) {
		t.Errorf("tidy_worktrees = %+v; want structured content with %s prunable", c, gone)
	}
	if t.Failed() {
		t.Logf("the SDK client's run:\n%v", r)
	}
}
