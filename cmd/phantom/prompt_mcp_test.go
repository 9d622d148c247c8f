package main

// Issue 23, item 5, end to end: run_command types only into an empty
// command line. The human half types a line in their shell tab with
// `phantom send` from outside Phantom; an agent in another tab (the Go
// SDK client over the real socket) calls run_command there, and the
// human answers its sheet from outside. Real bash, zsh and fish tabs.

import (
	"fmt"
	"github.com/phantom-dev/phantom/authz/audit"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// stepAnsweringSheets waits for step i of an agent run, answering every
// sheet that shows up meanwhile the way answer says (--once, --always),
// as the human at their own terminal.
func stepAnsweringSheets(t *testing.T, env *testenv.Env, read func() []agentLine, i int, answer string) agentLine {
	t.Helper()
	eventually(t, fmt.Sprintf("agent step %d, its sheets answered %s", i, answer), func() (bool, string) {
		lines := read()
		if slices.ContainsFunc(lines, func(l agentLine) bool { return l.Step == i || l.Op == "fatal" }) {
			return true, ""
		}
		for _, s := range sheetsJSON(t, env) {
			phantom(t, env, "sheet", "answer", s["id"].(string), answer)
		}
		return false, fmt.Sprint(lines)
	})
	return waitStep(t, read, i)
}

// lastLine is the last non-blank line of tab's screen.
func lastLine(t *testing.T, env *testenv.Env, tab string) string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(mustPhantom(t, env, "read", tab), "\n "), "\n")
	return lines[len(lines)-1]
}

// TestRunCommandEmptyLineMCP: the human's half-typed `rm -rf …/scratch`
// (not entered) keeps the agent's approved run_command out: the call
// fails saying why without quoting the line, nothing runs (no marker,
// scratch still there), and the human's text stays on the line. Once the
// human cleared it (Ctrl-U), run_command runs, and its result,
// read_output's last_command and `phantom read --last-command` show the
// command the shell ran. Then the race: a key the human types right
// before the agent's command is not joined either.
func TestRunCommandEmptyLineMCP(t *testing.T) {
	for _, sh := range []string{"/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			if _, err := os.Stat(sh); err != nil {
				t.Skipf("%s not installed", sh)
			}
			t.Parallel()
			env, human := shellUp(t, sh)
			dir, err := os.MkdirTemp("", "prompt")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			scratch := filepath.Join(dir, "scratch")
			if err := os.Mkdir(scratch, 0o700); err != nil {
				t.Fatal(err)
			}
			marker, raceMarker := filepath.Join(dir, "ran"), filepath.Join(dir, "raced")
			cleared, racing := filepath.Join(dir, "cleared"), filepath.Join(dir, "racing")
			half := "rm -rf " + scratch
			mustPhantom(t, env, "send", "-l", human, half)
			eventually(t, "the half-typed line in the human's tab", func() (bool, string) {
				l := lastLine(t, env, human)
				return strings.Contains(l, half), l
			})

			cmd := "touch " + marker
			_, read := runAgent(t, env, []map[string]any{
				{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": human, "command": cmd}}, // 0: refused
				{"op": "wait", "file": cleared}, // 1
				func() map[string]any { m := runWait(human, cmd, 30); m["retry"] = true; return m }(), // 2: runs
				readCall(map[string]any{"terminal_id": human, "last_command": true}),                  // 3
				{"op": "wait", "file": racing}, // 4
				{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": human, "command": "touch " + raceMarker}}, // 5: refused
			})

			r := resultOf(t, stepAnsweringSheets(t, env, read, 0, "--always"))
			if !r.IsError || !strings.Contains(r.text(), "empty command line") || !strings.Contains(r.text(), "not entered") ||
				!strings.Contains(r.text(), "create_terminal") {
				t.Fatalf("run_command into a half-typed line: %s\nwant refused, saying the line holds text not entered", r.text())
			}
			if strings.Contains(r.text(), scratch) || strings.Contains(r.text(), "rm -rf") {
				t.Errorf("the refusal quotes the human's line: %s", r.text())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the refused command ran")
			}
			if _, err := os.Stat(scratch); err != nil {
				t.Errorf("the human's line ran: %v", err)
			}
			// (fish may show a suggestion after it.)
			if l := lastLine(t, env, human); !strings.Contains(l, half) || strings.Contains(l, "touch") {
				t.Errorf("the human's line is no longer as they typed it: %q", l)
			}

			// The human clears the line; the agent's retried call runs.
			mustPhantom(t, env, "send", human, "C-u")
			if err := os.WriteFile(cleared, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			var run runResult
			structured(t, stepAnsweringSheets(t, env, read, 2, "--always"), &run)
			checkFinished(t, "touch", run, 0)
			if run.Result.Command != cmd || strings.Contains(run.Result.Note, "different command line") {
				t.Errorf("result command %q (note %q), want %q", run.Result.Command, run.Result.Note, cmd)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("the command did not run: %v", err)
			}
			if _, err := os.Stat(scratch); err != nil {
				t.Errorf("the human's cleared line ran: %v", err)
			}
			var rd readResult
			structured(t, waitStep(t, read, 3), &rd)
			if rd.LastCommand == nil || rd.LastCommand.Command != cmd {
				t.Errorf("read_output's last_command = %+v, want %q", rd.LastCommand, cmd)
			}
			if r := phantom(t, env, "read", human, "--last-command"); r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("%q finished", cmd)) {
				t.Errorf("phantom read --last-command:\n%v\nwant %q, exit 0", r, cmd)
			}
			runTabIdle(t, env, human)

			// The race: the human's key goes in right before the agent's
			// command (no sheet: the grant stands).
			mustPhantom(t, env, "send", "-l", human, "x")
			if err := os.WriteFile(racing, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			r = resultOf(t, permStepNoSheet(t, env, read, 5))
			if !r.IsError || !strings.Contains(r.text(), "empty command line") {
				t.Errorf("run_command right after the human's key: %s\nwant refused", r.text())
			}
			eventually(t, "the human's key alone on the line", func() (bool, string) {
				l := lastLine(t, env, human)
				return strings.Contains(l, " x"), l
			})
			if l := lastLine(t, env, human); strings.Contains(l, "touch") {
				t.Errorf("joined with the human's key: %q", l)
			}
			if _, err := os.Stat(raceMarker); err == nil {
				t.Error("the refused command ran")
			}
			// The audit log holds what reached the shell: each allowed
			// command that was not typed is followed by a run_not_typed
			// line naming it, which never quotes the human's text.
			notTyped := map[string]bool{}
			for _, e := range auditJSON(t, func(args ...string) string { return mustPhantom(t, env, args...) }) {
				if e.Event == audit.RunNotTyped && e.Target == human {
					if strings.Contains(e.Subject, half) {
						t.Errorf("the audit line quotes the human's text: %+v", e)
					}
					for _, c := range []string{cmd, "touch " + raceMarker} {
						notTyped[c] = notTyped[c] || strings.Contains(e.Subject, c)
					}
				}
			}
			if !notTyped[cmd] || !notTyped["touch "+raceMarker] {
				t.Errorf("run_not_typed lines for the refused commands: %v, want both", notTyped)
			}
		})
	}
}
