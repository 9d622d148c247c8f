package main

// Issue 15 end to end: run_command with wait_seconds, read_output with
// last_command, wait_for and cursors, list_terminals' last command, and
// `phantom run --wait`, in real bash, zsh and fish tabs and a sh tab
// without shell integration, through the MCP socket by the Go SDK agent.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// runResult is a run_command result's structuredContent.
type runResult struct {
	Result       cmdResult `json:"result"`
	StillRunning bool      `json:"still_running"`
	NextCursor   string    `json:"next_cursor"`
	EndedBy      string    `json:"ended_by"`
}

// cmdResult is a CommandResult as protojson writes it.
type cmdResult struct {
	Command      string   `json:"command"`
	ExitCode     *int     `json:"exit_code"`
	FinishedAt   string   `json:"finished_at"`
	DurationMS   string   `json:"duration_ms"`
	Output       []string `json:"output"`
	Truncated    bool     `json:"truncated"`
	TotalLines   string   `json:"total_lines"`
	OutputCursor string   `json:"output_cursor"`
	Compaction   struct {
		BlankLinesRemoved int    `json:"blank_lines_removed"`
		LinesCut          int    `json:"lines_cut"`
		BytesCut          string `json:"bytes_cut"`
	} `json:"compaction"`
	Note string `json:"note"`
}

// readResult is a read_output result's structuredContent with issue 15's
// fields.
type readResult struct {
	readPage
	LastCommand  *cmdResult `json:"last_command"`
	WaitMatched  bool       `json:"wait_matched"`
	WaitTimedOut bool       `json:"wait_timed_out"`
	MatchedSeq   string     `json:"matched_seq"`
}

// structured decodes a successful tool call's structuredContent into v.
func structured(t *testing.T, l agentLine, v any) {
	t.Helper()
	r := resultOf(t, l)
	if r.IsError {
		t.Fatalf("step %d failed: %s", l.Step, r.text())
	}
	b, _ := json.Marshal(r.StructuredContent)
	rv := reflect.ValueOf(v).Elem()
	rv.Set(reflect.Zero(rv.Type())) // fields absent from this result stay unset
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("step %d: %v\n%s", l.Step, err, b)
	}
}

// shellUp starts Phantom with shell as the default shell and returns the
// environment and its first tab, once that tab is idle at its prompt.
func shellUp(t *testing.T, shell string) (*testenv.Env, string) {
	t.Helper()
	return shellUpWith(t, shell, nil)
}

// shellUpWith is shellUp with setup (if not nil) run on the environment
// before Phantom starts: more variables, a config.json.
func shellUpWith(t *testing.T, shell string, setup func(*testenv.Env)) (*testenv.Env, string) {
	t.Helper()
	env := testenv.New(t)
	if setup != nil {
		setup(env)
	}
	// No zsh-newuser-install menu in a home without .zshrc.
	if err := os.WriteFile(filepath.Join(env.Home, ".zshrc"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env.Vars = append(env.Vars, "SHELL="+shell)
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	mustPhantom(t, env, "up")
	tab := tabs(t, env)[0]["id"].(string)
	runTabIdle(t, env, tab)
	return env, tab
}

// runTabIdle waits until list_terminals shows tab idle.
func runTabIdle(t *testing.T, env *testenv.Env, tab string) {
	t.Helper()
	eventually(t, "tab "+tab+" idle", func() (bool, string) {
		ts := tabs(t, env)
		return tabByID(ts, tab)["idle"] == true, fmt.Sprint(ts)
	})
}

func runWait(tab, command string, wait int, extra ...any) map[string]any {
	args := map[string]any{"terminal_id": tab, "command": command, "wait_seconds": wait}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	return map[string]any{"op": "call", "tool": "run_command", "args": args}
}

func readCall(args map[string]any) map[string]any {
	return map[string]any{"op": "call", "tool": "read_output", "args": args}
}

// checkFinished checks a finished command's result.
func checkFinished(t *testing.T, name string, r runResult, exit int, output ...string) {
	t.Helper()
	switch {
	case r.StillRunning || r.EndedBy != "exit_mark":
		t.Errorf("%s: still_running %v, ended_by %q; want ended by its exit mark", name, r.StillRunning, r.EndedBy)
	case r.Result.ExitCode == nil || *r.Result.ExitCode != exit:
		t.Errorf("%s: exit_code %v, want %d", name, r.Result.ExitCode, exit)
	case r.Result.FinishedAt == "" || r.Result.DurationMS == "" && exit != 0:
		t.Errorf("%s: finished_at %q, duration_ms %q", name, r.Result.FinishedAt, r.Result.DurationMS)
	}
	if err := sameLines(r.Result.Output, output); err != nil {
		t.Errorf("%s: output %q, want %q: %v", name, r.Result.Output, output, err)
	}
}

// TestRunWaitShells runs commands and waits for them in bash, zsh and
// fish tabs through the MCP socket: exit codes 0, 1 and 143 (a signal),
// exactly the command's own output, one sheet for run and read, the last
// command in read_output (and not in list_terminals: the tab is not the
// agent's), a command outliving its wait
// continued with its cursor and wait_for, and reads since a cursor.
func TestRunWaitShells(t *testing.T) {
	for _, sh := range []string{"/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			env, tab := shellUp(t, sh)
			kill := "sh -c 'kill -TERM $$'"
			agent, read := runAgent(t, env, []map[string]any{
				runWait(tab, `printf 'one\ntwo\n'`, 30),                            // 0
				runWait(tab, "false", 30),                                          // 1
				runWait(tab, kill, 30),                                             // 2
				readCall(map[string]any{"terminal_id": tab, "last_command": true}), // 3
				{"op": "call", "tool": "list_terminals"},                           // 4
				runWait(tab, "sleep 2; echo slept-done", 1),                        // 5
				readCall(map[string]any{"terminal_id": tab, "cursor": "$STEP:5.next_cursor", "wait_for": "^slept-done$", "wait_seconds": 30}), // 6
				readCall(map[string]any{"terminal_id": tab, "cursor": "$STEP:6.next_cursor", "wait_for": "idle", "wait_seconds": 30}),         // 7
				readCall(map[string]any{"terminal_id": tab, "cursor": "$STEP:7.next_cursor"}),                                                 // 8
				readCall(map[string]any{"terminal_id": tab, "cursor": "$STEP:8.next_cursor"}),                                                 // 9
				{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": tab, "command": "echo new-line-marker"}},          // 10
				readCall(map[string]any{"terminal_id": tab, "cursor": "$STEP:9.next_cursor", "wait_for": "^new-line-marker$"}),                // 11
				func() map[string]any { m := runWait(tab, "# nothing to run", 30); m["retry"] = true; return m }(),                            // 12 (retried: busy until the prompt is back)
			})
			// One sheet asks for run and read together.
			id := permSheet(t, env, "test", agent, "run_command", "CAPABILITY_RUN", "SCOPE_ALL", "and read: it returns the output")["id"].(string)
			mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all") // each later step is another call

			var r runResult
			structured(t, waitStep(t, read, 0), &r)
			checkFinished(t, "printf", r, 0, "one", "two")
			structured(t, permStepNoSheet(t, env, read, 1), &r)
			checkFinished(t, "false", r, 1)
			structured(t, permStepNoSheet(t, env, read, 2), &r)
			// bash says "Terminated"; the others print nothing.
			checkFinished(t, "kill", r, 143, r.Result.Output...)
			if r.Result.Command != kill {
				t.Errorf("command = %q, want %q", r.Result.Command, kill)
			}

			var rd readResult
			structured(t, permStepNoSheet(t, env, read, 3), &rd)
			if c := rd.LastCommand; c == nil || c.Command != kill || c.ExitCode == nil || *c.ExitCode != 143 {
				t.Errorf("last_command = %+v, want %q with exit code 143", c, kill)
			}

			var ls struct {
				Terminals []struct {
					ID          string     `json:"id"`
					LastCommand *cmdResult `json:"last_command"`
				} `json:"terminals"`
			}
			structured(t, waitStep(t, read, 4), &ls)
			// The tab is not the agent's own nor opened for it: the free
			// list leaves its last command out, whatever grant the agent
			// holds (read_output, step 3, reads it).
			for _, tm := range ls.Terminals {
				if tm.ID == tab && tm.LastCommand != nil {
					t.Errorf("list_terminals shows the agent the last command of tab %s, which is not its own: %+v", tab, tm.LastCommand)
				}
			}

			structured(t, waitStep(t, read, 5), &r)
			if !r.StillRunning || r.NextCursor == "" || r.Result.ExitCode != nil || r.EndedBy != "" {
				t.Errorf("sleep 2 with a 1 s wait = %+v, want still_running with a cursor", r)
			}
			structured(t, waitStep(t, read, 6), &rd)
			if !rd.WaitMatched || len(rd.Lines) == 0 || rd.Lines[0] != "slept-done" || rd.MatchedSeq != rd.FirstSeq {
				t.Errorf("wait_for slept-done = %+v, want it matched and read from the matching line", rd)
			}
			structured(t, waitStep(t, read, 7), &rd)
			if !rd.WaitMatched {
				t.Errorf("wait_for idle = %+v, want matched", rd)
			}
			structured(t, waitStep(t, read, 8), &rd)
			var since readResult
			structured(t, waitStep(t, read, 9), &since)
			if len(since.Lines) != 0 {
				t.Errorf("a read since the last cursor, with nothing printed since, returned %q", since.Lines)
			}
			structured(t, waitStep(t, read, 10), &struct{}{})
			structured(t, waitStep(t, read, 11), &rd)
			if !rd.WaitMatched || len(rd.Lines) == 0 || rd.Lines[0] != "new-line-marker" {
				t.Errorf("read since the cursor, waiting for the new line = %+v", rd)
			}
			// A comment runs nothing (zsh, without interactive_comments,
			// runs "#" and fails): either way the wait ends.
			structured(t, waitStep(t, read, 12), &r)
			if r.StillRunning || r.EndedBy == "" {
				t.Errorf("a comment line: %+v, want it ended", r)
			}
		})
	}
}

// TestRunWaitOutput checks, in a bash tab, the output of a command that
// prints more than max_lines (its last lines, truncated, the cursor
// reading all of them exactly), token thrift (blank runs collapsed, a
// long line cut with a marker, the response saying so), a command that
// clears the screen, and a sh tab without shell integration whose command
// ends by idleness.
func TestRunWaitOutput(t *testing.T) {
	env, tab := shellUp(t, "/usr/bin/bash")
	shTab := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "plain-sh", "--", "sh"))
	runTabIdle(t, env, shTab)
	bigTab := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "big"))
	runTabIdle(t, env, bigTab)
	pagesOut := filepath.Join(t.TempDir(), "pages.jsonl")
	agent, read := runAgent(t, env, []map[string]any{
		runWait(tab, "seq 1 500", 30, "max_lines", 10),                                                       // 0
		readCall(map[string]any{"terminal_id": tab, "cursor": "$STEP:0.result.output_cursor", "lines": 500}), // 1
		runWait(tab, `printf 'a\n\n\n\nb\n'; head -c 5000 /dev/zero | tr '\0' x; echo; echo end`, 30),        // 2
		runWait(tab, "echo before-clear; clear; echo after-clear", 30),                                       // 3
		runWait(shTab, "echo sh-out-1; echo sh-out-2", 30),                                                   // 4
		runWait(shTab, "sleep 1; echo sh-slept", 30),                                                         // 5
		runWait(tab, "printf no-newline", 30),                                                                // 6
		runWait(bigTab, "seq 1 100000", 50),                                                                  // 7
		{"op": "pages", "tool": "read_output", "follow": "next", "out": pagesOut,
			"args": map[string]any{"terminal_id": bigTab, "cursor": "$STEP:7.result.output_cursor", "max_bytes": 65536}}, // 8
	})
	// Standing: every later step is another call, which a once would not
	// cover.
	id := waitSheet(t, env, "run_command")
	mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all")

	var r runResult
	structured(t, waitStep(t, read, 0), &r)
	var want []string
	for i := 491; i <= 500; i++ {
		want = append(want, fmt.Sprint(i))
	}
	checkFinished(t, "seq", r, 0, want...)
	if !r.Result.Truncated || r.Result.TotalLines != "500" || !strings.Contains(r.Result.Note, "output_cursor") {
		t.Errorf("seq 1 500 with max_lines 10: truncated %v, total_lines %s, note %q", r.Result.Truncated, r.Result.TotalLines, r.Result.Note)
	}
	var rd readResult
	structured(t, permStepNoSheet(t, env, read, 1), &rd)
	want = nil
	for i := 1; i <= 500; i++ {
		want = append(want, fmt.Sprint(i))
	}
	if err := sameLines(rd.Lines, want); err != nil {
		t.Errorf("reading the output from output_cursor: %v", err)
	}

	structured(t, waitStep(t, read, 2), &r)
	long := strings.Repeat("x", keepLineForTest) + fmt.Sprintf("[… %d more bytes cut]", 5000-keepLineForTest)
	checkFinished(t, "thrift", r, 0, "a", "", "b", long, "end")
	if c := r.Result.Compaction; c.BlankLinesRemoved != 2 || c.LinesCut != 1 || c.BytesCut != "4000" ||
		!strings.Contains(r.Result.Note, "2 blank lines were removed") {
		t.Errorf("compaction = %+v, note %q; want 2 blank lines removed and 1 line cut by 4000 bytes", c, r.Result.Note)
	}

	structured(t, waitStep(t, read, 3), &r)
	checkFinished(t, "clear", r, 0, "after-clear")
	if !strings.Contains(r.Result.Note, "cleared the screen") {
		t.Errorf("clear: note %q does not say the screen was cleared", r.Result.Note)
	}

	structured(t, waitStep(t, read, 4), &r)
	if r.StillRunning || r.EndedBy != "idle" || r.Result.ExitCode != nil || !strings.Contains(r.Result.Note, "exit code is unknown") {
		t.Errorf("sh tab: %+v, want ended by idle without an exit code", r)
	}
	if err := sameLines(r.Result.Output, []string{"sh-out-1", "sh-out-2"}); err != nil {
		t.Errorf("sh tab output %q: %v", r.Result.Output, err)
	}
	structured(t, waitStep(t, read, 5), &r)
	if r.StillRunning || r.EndedBy != "idle" || fmt.Sprint(r.Result.Output) != "[sh-slept]" {
		t.Errorf("sh tab, sleep then echo: %+v", r)
	}
	_ = agent

	structured(t, waitStep(t, read, 6), &r)
	checkFinished(t, "printf without a newline", r, 0, "no-newline")

	// 100,000 lines: the last 200 returned, the count right, and the
	// cursor reads every line still held, in order, with the trimmed ones
	// counted (the scrollback keeps 100,000 lines, prompts included).
	structured(t, waitStepWithin(t, read, 7, 2*time.Minute), &r)
	want = nil
	for i := 99801; i <= 100000; i++ {
		want = append(want, fmt.Sprint(i))
	}
	checkFinished(t, "seq 1 100000", r, 0, want...)
	if !r.Result.Truncated || r.Result.TotalLines != "100000" {
		t.Errorf("seq 1 100000: truncated %v, total_lines %s", r.Result.Truncated, r.Result.TotalLines)
	}
	waitStepWithin(t, read, 8, 2*time.Minute)
	pages := readPagesFile(t, pagesOut)
	lines := joinPages(t, pages, 65536)
	trimmed, _ := strconv.Atoi(cmpOr(pages[0].TrimmedLines, "0"))
	want = nil
	for i := 1 + trimmed; i <= 100000; i++ {
		want = append(want, fmt.Sprint(i))
	}
	if len(lines) < len(want) {
		t.Fatalf("read %d lines from output_cursor, want at least %d", len(lines), len(want))
	}
	if err := sameLines(lines[:len(want)], want); err != nil || trimmed > 10 {
		t.Errorf("output read from output_cursor (%d trimmed): %v", trimmed, err)
	}
}

// keepLineForTest is how much of a long line thrift keeps
// (terminald's keepLine).
const keepLineForTest = 1000

// TestRunCLIWait: `phantom run TAB --wait -- CMD` prints exactly the
// command's output and exits with its status; `phantom read
// --last-command` does the same for the last command; `phantom read
// --since` prints only what is new.
func TestRunCLIWait(t *testing.T) {
	env, tab := shellUp(t, "/usr/bin/bash")
	r := phantom(t, env, "run", tab, "--wait", "--", `echo cli-out; printf 'two  \n'; (exit 3)`)
	if r.code != 3 || r.stdout != "cli-out\ntwo\n" {
		t.Errorf("phantom run --wait:\n%v\nwant exit 3 and the two lines", r)
	}
	r = phantom(t, env, "read", tab, "--last-command")
	if r.code != 3 || r.stdout != "cli-out\ntwo\n" || !strings.Contains(r.stderr, "exit status 3") {
		t.Errorf("phantom read --last-command:\n%v", r)
	}
	r = phantom(t, env, "run", tab, "--wait=1", "--", "sleep 3; echo cli-late")
	if r.code != runStillRunning || !strings.Contains(r.stderr, "--since ") {
		t.Fatalf("phantom run --wait=1 of a longer command:\n%v\nwant exit 124 and how to continue", r)
	}
	cursor := strings.TrimSpace(r.stderr[strings.LastIndex(r.stderr, "--since ")+len("--since "):])
	r = phantom(t, env, "read", tab, "--since", cursor, "--wait-for", "^cli-late$", "--wait", "30", "--show-cursor")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "cli-late\n") {
		t.Errorf("phantom read --since --wait-for:\n%v", r)
	}
	runTabIdle(t, env, tab)
	r = phantom(t, env, "read", tab, "--show-cursor", "-n", "1")
	cursor = strings.TrimSpace(strings.TrimPrefix(r.stderr, "cursor:"))
	r = phantom(t, env, "read", tab, "--since", cursor)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("phantom read --since with nothing new:\n%v", r)
	}
	mustPhantom(t, env, "run", tab, "--", "echo", "cli-new")
	eventually(t, "cli-new after the cursor", func() (bool, string) {
		r = phantom(t, env, "read", tab, "--since", cursor)
		return strings.Contains(r.stdout, "\ncli-new\n"), r.String()
	})
	if strings.Contains(r.stdout, "cli-late") {
		t.Errorf("read --since returned old lines:\n%s", r.stdout)
	}
}

// TestRunWaitNeedsRead: with a standing run grant but no read grant,
// run_command without a wait asks nothing more, and with a wait a sheet
// asks again (the output needs read). Then wait_for finds the line a dev
// server prints when it is ready and returns from it on.
func TestRunWaitNeedsRead(t *testing.T) {
	env, tab := shellUp(t, "/usr/bin/bash")
	dev := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "dev"))
	runTabIdle(t, env, dev)
	agent, read := runAgent(t, env, []map[string]any{
		{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": tab, "command": "echo plain-run"}}, // 0
		// Retried: the tab is busy until the shell is back at its prompt.
		func() map[string]any { m := runWait(tab, "echo waited-run", 30); m["retry"] = true; return m }(),                                                // 1
		{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": dev, "command": "sleep 1; python3 -m http.server 0"}},                // 2
		readCall(map[string]any{"terminal_id": dev, "cursor": "$STEP:2.next_cursor", "wait_for": `Serving HTTP on \S+ port [0-9]+`, "wait_seconds": 60}), // 3
	})
	id := permSheet(t, env, "test", agent, "run_command", "CAPABILITY_RUN", "SCOPE_ALL", "echo plain-run")["id"].(string)
	if s := sheetsJSON(t, env)[0]; strings.Contains(fmt.Sprint(s["subject"]), "read") {
		t.Errorf("a run without a wait asks for read: %v", s)
	}
	mustPhantom(t, env, "sheet", "answer", id, "--always")
	waitStep(t, read, 0)
	id = permSheet(t, env, "test", agent, "run_command", "CAPABILITY_RUN", "SCOPE_ALL", "and read: it returns the output")["id"].(string)
	mustPhantom(t, env, "sheet", "answer", id, "--always") // read as well: step 3 reads

	var r runResult
	structured(t, waitStep(t, read, 1), &r)
	checkFinished(t, "echo", r, 0, "waited-run")
	structured(t, permStepNoSheet(t, env, read, 2), &struct{}{})
	var rd readResult
	structured(t, waitStepWithin(t, read, 3, 2*time.Minute), &rd)
	if !rd.WaitMatched || len(rd.Lines) == 0 || !strings.HasPrefix(rd.Lines[0], "Serving HTTP on ") || rd.MatchedSeq != rd.FirstSeq {
		t.Errorf("wait_for the dev server = %+v", rd)
	}
}
