package main

// Issue 24 item 4 end to end, by the Go SDK agent in a real tab through
// the MCP socket: read_output waiting for idle honours lines, and a read
// since a cursor after the shell redrew its prompt returns nothing new,
// in real bash, zsh and fish tabs.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// slowPromptTab opens, for zsh and fish, a tab whose prompt takes about
// a second to draw after the shell says it starts (OSC 133 A), as a slow
// prompt theme's does (in the shell itself: a program it ran would make
// the tab busy meanwhile), and returns it; for bash (whose marks come with
// its prompt) the tab given.
func slowPromptTab(t *testing.T, env *testenv.Env, sh, tab string) string {
	t.Helper()
	var file, rc string
	switch filepath.Base(sh) {
	case "zsh":
		file, rc = filepath.Join(env.Home, ".zshrc"), "zmodload zsh/zselect\nslow_prompt() { zselect -t 100 }\nprecmd_functions+=(slow_prompt)\n"
	case "fish":
		file, rc = filepath.Join(env.Getenv("XDG_CONFIG_HOME"), "fish", "config.fish"), "function fish_prompt\n    set -l i 0\n    while test $i -lt 10000\n        set i (math $i + 1)\n    end\n    echo -n 'slow> '\nend\n"
	default:
		return tab
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	slow := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "slow-prompt"))
	runTabIdle(t, env, slow)
	return slow
}

// TestReadOutputWaitAndRepaintMCP: while the human's tab prints 30,000
// lines, the agent asks for 2 lines waiting for idle and gets the newest
// 2 (not the oldest 64 KiB), with a note; then the tab is resized back
// and forth (each shell redraws its prompt on SIGWINCH) and a read since
// the wait's cursor returns no lines. In zsh and fish the prompt takes a
// second to draw after its start mark: the wait ends once it is drawn,
// so it is not new output either.
func TestReadOutputWaitAndRepaintMCP(t *testing.T) {
	for _, sh := range []string{"/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			env, tab := shellUp(t, sh)
			tab = slowPromptTab(t, env, sh, tab)
			repainted := filepath.Join(t.TempDir(), "repainted")
			// A slow prompt's own sleep keeps the tab busy a moment: retried.
			eventually(t, "the human's command typed into tab "+tab, func() (bool, string) {
				r := phantom(t, env, "run", tab, "--", "sleep 4; seq 1 30000")
				return r.code == 0, r.String()
			})
			_, read := runAgent(t, env, []map[string]any{
				readCall(map[string]any{"terminal_id": tab, "lines": 2, "wait_for": "idle", "wait_seconds": 60}), // 0
				{"op": "wait", "file": repainted},                                             // 1
				readCall(map[string]any{"terminal_id": tab, "cursor": "$STEP:0.next_cursor"}), // 2
			})
			mustPhantom(t, env, "sheet", "answer", waitSheet(t, env, "read_output"), "--always", "--scope", "all")

			var rd readResult
			structured(t, waitStepWithin(t, read, 0, 2*testenv.WaitTimeout), &rd)
			if !rd.WaitMatched || len(rd.Lines) != 2 || !slices.Contains(rd.Lines, "30000") || rd.Note == "" {
				t.Errorf("2 lines waiting for idle after 30,000 lines = %d lines %.200q, matched %v, note %q; want the newest 2 with a note",
					len(rd.Lines), rd.Lines, rd.WaitMatched, rd.Note)
			}

			tc, _ := humanClients(t, env)
			for _, size := range [][2]int32{{60, 20}, {100, 30}, {80, 24}} {
				ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitTimeout)
				_, err := tc.ResizeTerminal(ctx, &terminalv1.ResizeTerminalRequest{TerminalId: tab, Cols: size[0], Rows: size[1]})
				cancel()
				if err != nil {
					t.Fatalf("resize tab %s to %v: %v", tab, size, err)
				}
				time.Sleep(300 * time.Millisecond) // the shell redraws its prompt
			}
			os.WriteFile(repainted, nil, 0o600)
			var since readResult
			structured(t, waitStep(t, read, 2), &since)
			if len(since.Lines) != 0 {
				t.Errorf("a read since the cursor after %s redrew its prompt returned %q; want nothing new", filepath.Base(sh), since.Lines)
			}
		})
	}
}
