package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEditorSpeed measures open_file and reveal_line through the whole
// path an agent uses (the MCP Go SDK client in a tab, the bridge, the
// gateway, editord, Neovim) against a direct msgpack-RPC call doing the
// same in the same Neovim, alternating call by call in one process. It
// reports figures and asserts only that nothing failed. Set
// PHANTOM_BENCH=1 to run it.
func TestEditorSpeed(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	const n = 1000
	env, proj := editorUp(t)
	a := filepath.Join(proj, "a.txt")
	// The window's editor, started by a first call; the agent runs in w1.
	sock := env.Layout.EditorSocket("w1")
	_, read := runAgentIn(t, env, proj, "bench-agent", []map[string]any{
		{"op": "call", "tool": "open_file", "args": map[string]any{"path": "a.txt"}},
		{"op": "bench", "n": n, "nvim": sock, "tool": "open_file", "args": map[string]any{"path": "a.txt", "line": 30},
			"lua": `local path, line = ...
				vim.cmd('edit +' .. line .. ' ' .. vim.fn.fnameescape(path))`, "lua_args": []any{a, 30}},
		{"op": "bench", "n": n, "nvim": sock, "tool": "reveal_line", "args": map[string]any{"path": "a.txt", "line": 45, "message": "here"},
			"lua": `local path, line = ...
				vim.api.nvim_win_set_cursor(0, {line, 0})
				vim.cmd('normal! zz')
				vim.fn.sign_unplace('bench')
				vim.fn.sign_define('Bench', {text = '>'})
				vim.fn.sign_place(0, 'bench', 'Bench', vim.fn.bufnr(path), {lnum = line})`, "lua_args": []any{a, 45}},
	})
	for i, tool := range []string{1: "open_file", 2: "reveal_line"} {
		if tool == "" {
			continue
		}
		l := benchStep(t, read, i)
		if l.Error != "" {
			t.Fatalf("%s bench: %s", tool, l.Error)
		}
		var r struct{ Gateway, Direct []int64 }
		if err := json.Unmarshal(l.Result, &r); err != nil {
			t.Fatal(err)
		}
		durs := func(ns []int64) []time.Duration {
			d := make([]time.Duration, len(ns))
			for i, v := range ns {
				d[i] = time.Duration(v)
			}
			return d
		}
		t.Logf("%-12s %d calls each, alternating: through the gateway %s; direct msgpack-RPC %s", tool, n, stats(durs(r.Gateway)), stats(durs(r.Direct)))
	}
}

// benchStep waits for the agent's step i, for as long as a bench takes.
func benchStep(t *testing.T, read func() []agentLine, i int) agentLine {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		for _, l := range read() {
			if l.Step == i || l.Op == "fatal" {
				return l
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("agent step %d did not end within 10 minutes", i)
	return agentLine{}
}
