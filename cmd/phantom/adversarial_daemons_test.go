package main

// The human is a process outside the whole instance (DESIGN.md, invariant
// 1): what a daemon starts — here the git hooks gitd runs for an agent's
// add_worktree — is inside Phantom however it forks, so it cannot list or
// answer sheets, list or accept grants, or attach.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hookProbe is a git hook that plays the human from below gitd: it runs
// the human-only commands of the CLI, directly and from a double-forked,
// setsid orphan, and records each command's output and exit status in
// dir as NAME.out and NAME.rc.
func hookProbe(dir string) string {
	try := func(name string, args ...string) string {
		out := filepath.Join(dir, name)
		return fmt.Sprintf("%s >%s 2>&1 </dev/null; echo $? >%s.tmp; mv %s.tmp %s.rc\n",
			shellCmd(append([]string{phantomBin}, args...)...), sq(out+".out"), sq(out), sq(out), sq(out))
	}
	human := try("sheets", "sheet", "list", "--json") +
		try("grants", "grants", "--json") +
		try("accept", "grants", "accept", "g1") +
		// attach wants a terminal: script gives it one.
		fmt.Sprintf("script -qec %s /dev/null >%s 2>&1 </dev/null; echo $? >%s.tmp; mv %s.tmp %s.rc\n",
			sq("stty cols 80 rows 24; exec timeout 10 "+shellCmd(phantomBin, "attach")), sq(filepath.Join(dir, "attach.out")), sq(filepath.Join(dir, "attach")),
			sq(filepath.Join(dir, "attach")), sq(filepath.Join(dir, "attach")))
	orphan := try("orphan-sheets", "sheet", "list", "--json") + try("orphan-grants", "grants", "--json")
	return "#!/bin/sh\n" + human +
		// The orphan outlives git and gitd's wait: without gitd as its
		// subreaper it would be re-parented to init, outside Phantom.
		"setsid sh -c " + sq("sleep 0.3; "+orphan) + " >/dev/null 2>&1 </dev/null &\n"
}

func TestAdversarialDaemonDescendants(t *testing.T) {
	t.Parallel()
	env := adversaryUp(t)
	repo := filepath.Join(env.Home, "src", "app")
	if err := os.MkdirAll(filepath.Dir(repo), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, env, filepath.Dir(repo), "init", "-q", "-b", "main", repo)
	gitIn(t, env, repo, "commit", "-q", "--allow-empty", "-m", "init")

	// The agent's own repository carries the hook, as any agent could
	// write it: this tab is not sandboxed, so git running it is no
	// escape in itself — acting as the human from it would be.
	marks := t.TempDir()
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	if err := os.WriteFile(hook, []byte(hookProbe(marks)), 0o755); err != nil {
		t.Fatal(err)
	}
	grantsBefore := grantIDs(t, env)

	tab, read := runAgentIn(t, env, repo, "hooked", []map[string]any{
		{"op": "call", "tool": "add_worktree", "args": map[string]any{"branch": "feature"}}, // 0
	})
	s := agentAsksHuman(t, env, read, 0, tab, "add_worktree", "add_worktree from a repository with a planted hook")
	mustPhantom(t, env, "sheet", "answer", s["id"].(string), "--once")
	if f := failure(t, waitStep(t, read, 0)); f != "" {
		t.Fatalf("add_worktree after a once answer failed: %s", f)
	}

	for _, name := range []string{"sheets", "grants", "accept", "attach", "orphan-sheets", "orphan-grants"} {
		var rc, out string
		eventually(t, "the hook's "+name+" to finish", func() (bool, string) {
			b, err := os.ReadFile(filepath.Join(marks, name+".rc"))
			rc = strings.TrimSpace(string(b))
			o, _ := os.ReadFile(filepath.Join(marks, name+".out"))
			out = string(o)
			return err == nil, "files in " + marks + ": " + strings.Join(listDir(marks), " ")
		})
		if rc == "0" || !strings.Contains(out, "inside Phantom") {
			t.Errorf("a git hook gitd ran (%s) was not refused as a process inside Phantom: exit %s, output:\n%s", name, rc, out)
		}
	}
	if got := grantIDs(t, env); !slices.Equal(got, grantsBefore) {
		t.Errorf("grants changed while the hook ran: before %v, after %v", grantsBefore, got)
	}
	if ss := sheetIDs(t, env); len(ss) != 0 {
		t.Errorf("sheets left open after the hook ran: %v", ss)
	}
}

// listDir names what dir holds, for failure messages.
func listDir(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
