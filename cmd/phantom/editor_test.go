package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/editord/nvim"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// editorUp starts an instance whose editord finds Neovim, with a project
// of two numbered files in its HOME.
func editorUp(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	if _, err := exec.LookPath("nvim"); err != nil {
		t.Skip("nvim is not installed (scripts/setup installs Debian's neovim)")
	}
	env, _ := up(t)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(env.Layout.Logs, "editord.log"))
			t.Logf("editord log:\n%s", b)
		}
	})
	proj := filepath.Join(env.Home, "proj")
	lspWrite(t, proj, "a.txt", numbered("a", 60))
	lspWrite(t, proj, "b.txt", numbered("b", 10))
	return env, proj
}

// numbered is n lines "<name> line <i>".
func numbered(name string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", name, i)
	}
	return b.String()
}

// editorPane is a pane as the editor tools return it.
type editorPane struct {
	PaneID  string `json:"pane_id"`
	Focused bool   `json:"focused"`
	Row     int    `json:"row"`
	Col     int    `json:"col"`
	File    struct {
		TabID    string `json:"tab_id"`
		Path     string `json:"path"`
		Modified bool   `json:"modified"`
	} `json:"file"`
	CursorLine int `json:"cursor_line"`
	First      int `json:"first_visible_line"`
	Last       int `json:"last_visible_line"`
}

// editorOpened is open_file's, open_file_in_split's and reveal_line's
// "opened".
type editorOpened struct {
	Opened struct {
		Pane       editorPane `json:"pane"`
		TerminalID string     `json:"terminal_id"`
		Started    bool       `json:"started"`
		Notes      []string   `json:"notes"`
	} `json:"opened"`
	Line int `json:"line"`
}

// editorPanes is list_panes'.
type editorPanes struct {
	Running    bool         `json:"running"`
	TerminalID string       `json:"terminal_id"`
	Panes      []editorPane `json:"panes"`
	Tabs       []struct {
		TabID string `json:"tab_id"`
		Path  string `json:"path"`
	} `json:"tabs"`
}

func (p editorPanes) tabOf(path string) string {
	for _, f := range p.Tabs {
		if f.Path == path {
			return f.TabID
		}
	}
	return ""
}

// editorLua runs Lua in the editor of window, as the human's own tools
// could: the test's view of what Neovim really shows.
func editorLua(t *testing.T, env *testenv.Env, window, code string, result any, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := nvim.Dial(ctx, env.Layout.EditorSocket(window))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.ExecLua(ctx, code, result, args...); err != nil {
		t.Fatalf("lua %q: %v", code, err)
	}
}

// TestEditorMCP drives editord end to end: an agent running the official
// MCP Go SDK client in a tab asks, through the bridge and the gateway, for
// its window's editor. Neovim starts in a new tab of that window; files
// open, split, get revealed with a gutter sign, a modified one is refused
// closing (and kept when forced), and the human attached to the editor's
// tab sees the revealed line.
func TestEditorMCP(t *testing.T) {
	env, proj := editorUp(t)
	tmp := t.TempDir()
	aTab, bTab, edited := filepath.Join(tmp, "a-tab"), filepath.Join(tmp, "b-tab"), filepath.Join(tmp, "edited")
	_, read := runAgentIn(t, env, proj, "editor-agent", []map[string]any{
		{"op": "call", "tool": "list_panes"},                                                                                                    // 0
		{"op": "call", "tool": "open_file", "args": map[string]any{"path": "a.txt", "line": 30}},                                                // 1
		{"op": "call", "tool": "open_file_in_split", "args": map[string]any{"path": "b.txt", "line": 99, "direction": "below"}},                 // 2
		{"op": "call", "tool": "reveal_line", "args": map[string]any{"path": filepath.Join(proj, "a.txt"), "line": 45, "message": "look here"}}, // 3
		{"op": "call", "tool": "list_panes"},                                                                                                    // 4
		{"op": "wait", "file": edited},                                                                                                          // 5
		{"op": "call", "tool": "close_tab", "args": map[string]any{"tab_id": "$FILE:" + bTab}},                                                  // 6
		{"op": "call", "tool": "close_tab", "args": map[string]any{"tab_id": "$FILE:" + bTab, "force": true}},                                   // 7
		{"op": "call", "tool": "open_file", "args": map[string]any{"path": "missing.txt"}},                                                      // 8
		{"op": "call", "tool": "focus_tab", "args": map[string]any{"tab_id": "$FILE:" + aTab}},                                                  // 9
		{"op": "call", "tool": "open_file", "args": map[string]any{"path": "new.txt", "create": true}},                                          // 10
	})
	a, b := filepath.Join(proj, "a.txt"), filepath.Join(proj, "b.txt")

	var p0 editorPanes
	decodeStep(t, read, 0, &p0)
	if p0.Running {
		t.Fatalf("list_panes before any editor = %+v, want running false", p0)
	}

	var o1 editorOpened
	decodeStep(t, read, 1, &o1)
	editorTab := o1.Opened.TerminalID
	if !o1.Opened.Started || editorTab == "" || o1.Opened.Pane.File.Path != a || o1.Opened.Pane.CursorLine != 30 {
		t.Fatalf("open_file a.txt:30 = %+v\nwant a started editor showing %s at line 30", o1, a)
	}
	// The mark follows the tab's foreground process, which terminald
	// samples: on a loaded machine it may lag the editor's start a little.
	var et map[string]any
	eventually(t, "list_terminals to mark the editor's tab "+editorTab, func() (bool, string) {
		et = tabByID(tabs(t, env), editorTab)
		return et != nil && et["editor"] == true, fmt.Sprint(et)
	})
	window, _ := et["window_id"].(string)

	var o2 editorOpened
	decodeStep(t, read, 2, &o2)
	if o2.Opened.Started || o2.Opened.Pane.File.Path != b || o2.Opened.Pane.CursorLine != 10 ||
		len(o2.Opened.Notes) != 1 || !strings.Contains(o2.Opened.Notes[0], "clamped to 10") {
		t.Fatalf("open_file_in_split b.txt:99 = %+v\nwant b.txt in the same editor, clamped to its line 10, and a note saying so", o2)
	}

	var o3 editorOpened
	decodeStep(t, read, 3, &o3)
	if o3.Line != 45 || o3.Opened.Pane.File.Path != a || o3.Opened.Pane.CursorLine != 45 || o3.Opened.Pane.PaneID != o1.Opened.Pane.PaneID {
		t.Fatalf("reveal_line a.txt:45 = %+v\nwant line 45 in the pane already showing a.txt (%s)", o3, o1.Opened.Pane.PaneID)
	}
	// The sign is in the gutter, the message beside it: Neovim says so.
	var mark struct {
		Lnum int    `msgpack:"lnum"`
		Text string `msgpack:"text"`
	}
	editorLua(t, env, window, `
		local buf = vim.fn.bufnr(...)
		local placed = vim.fn.sign_getplaced(buf, {group = 'phantom'})[1].signs
		local ns = vim.api.nvim_create_namespace('phantom')
		local marks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {details = true})
		return {lnum = placed[1] and placed[1].lnum or 0, text = marks[1] and marks[1][4].virt_text[1][1] or ''}`,
		&mark, a)
	if mark.Lnum != 45 || !strings.Contains(mark.Text, "look here") {
		t.Errorf("after reveal_line, a.txt's sign is on line %d with %q; want line 45, \"look here\"", mark.Lnum, mark.Text)
	}

	var p4 editorPanes
	decodeStep(t, read, 4, &p4)
	if !p4.Running || p4.TerminalID != editorTab || len(p4.Panes) != 2 || p4.tabOf(a) == "" || p4.tabOf(b) == "" {
		t.Fatalf("list_panes = %+v\nwant the editor of tab %s with two panes and both files", p4, editorTab)
	}
	if top, bottom := p4.Panes[0], p4.Panes[1]; top.File.Path != a || bottom.File.Path != b || bottom.Row <= top.Row || bottom.Col != top.Col {
		t.Errorf("panes %+v: want a.txt on top and b.txt below it", p4.Panes)
	}

	// The human attached to the editor's tab sees a.txt around line 45
	// and the reveal's message.
	in := &instance{env: env}
	cl := in.attach(t, 100, 30, nil, editorTab)
	cl.send("\x1b") // nothing: Neovim is in normal mode already
	cl.waitFor("a.txt's revealed line on the attached screen", func(text string) bool {
		return strings.Contains(text, "a line 45") && strings.Contains(text, "look here")
	})

	// The human edits b.txt in the editor without saving.
	editorLua(t, env, window, `vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 1, false, {'HUMAN EDIT'})`, nil, b)
	os.WriteFile(aTab, []byte(p4.tabOf(a)), 0o600)
	os.WriteFile(bTab, []byte(p4.tabOf(b)), 0o600)
	os.WriteFile(edited, nil, 0o600)

	if r := resultOf(t, waitStep(t, read, 6)); !r.IsError || !strings.Contains(r.text(), "unsaved changes") {
		t.Errorf("close_tab of the modified b.txt = %s; want a refusal naming the unsaved changes", r.text())
	}
	var c7 struct {
		Kept bool `json:"changes_kept_hidden"`
	}
	decodeStep(t, read, 7, &c7)
	var kept string
	editorLua(t, env, window, `return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, 1, false)[1]`, &kept, b)
	if disk, _ := os.ReadFile(b); !c7.Kept || kept != "HUMAN EDIT" || string(disk) != numbered("b", 10) {
		t.Errorf("forced close_tab: kept %v, buffer's first line %q, disk %q; want the change kept in the editor and the file untouched", c7.Kept, kept, disk)
	}

	if r := resultOf(t, waitStep(t, read, 8)); !r.IsError || !strings.Contains(r.text(), "does not exist") {
		t.Errorf("open_file of a missing file = %s; want an error saying it does not exist", r.text())
	}
	var f9 struct {
		Pane editorPane `json:"pane"`
	}
	decodeStep(t, read, 9, &f9)
	if f9.Pane.File.Path != a || !f9.Pane.Focused {
		t.Errorf("focus_tab a.txt = %+v, want the focused pane showing it", f9.Pane)
	}
	var o10 editorOpened
	decodeStep(t, read, 10, &o10)
	if _, err := os.Stat(filepath.Join(proj, "new.txt")); o10.Opened.Pane.File.Path != filepath.Join(proj, "new.txt") || err == nil {
		t.Errorf("open_file new.txt with create = %+v (stat: %v); want an unsaved buffer and no file on disk", o10, err)
	}

}

// TestEditorWindows: an agent acts on its own window's editor, and a
// process outside every tab is refused plainly.
func TestEditorWindows(t *testing.T) {
	env, proj := editorUp(t)
	tc, _ := humanClients(t, env)
	w2, err := tc.CreateWindow(t.Context(), &terminalv1.CreateWindowRequest{Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	_, read1 := runAgentIn(t, env, proj, "agent-w1", []map[string]any{
		{"op": "call", "tool": "open_file", "args": map[string]any{"path": "a.txt"}},
	})
	var o1 editorOpened
	decodeStep(t, read1, 0, &o1)

	_, read2 := agentInWindow(t, env, w2.GetWindow().GetId(), proj, []map[string]any{
		{"op": "call", "tool": "list_panes"},
		{"op": "call", "tool": "open_file", "args": map[string]any{"path": "b.txt"}},
	})
	var p0 editorPanes
	decodeStep(t, read2, 0, &p0)
	if p0.Running {
		t.Errorf("list_panes in window %s = %+v; want no editor (the other window's is not its)", w2.GetWindow().GetId(), p0)
	}
	var o2 editorOpened
	decodeStep(t, read2, 1, &o2)
	if !o2.Opened.Started || o2.Opened.TerminalID == o1.Opened.TerminalID {
		t.Errorf("open_file in window 2 = %+v; want its own, new editor (window 1's is in tab %s)", o2, o1.Opened.TerminalID)
	}
	if tb := tabByID(tabs(t, env), o2.Opened.TerminalID); tb == nil || tb["window_id"] != w2.GetWindow().GetId() {
		t.Errorf("window 2's editor tab = %v, want it in window %s", tb, w2.GetWindow().GetId())
	}

	// Outside every tab: the same agent, started by the test itself.
	tmp := t.TempDir()
	script, outside := filepath.Join(tmp, "script.json"), filepath.Join(tmp, "outside.jsonl")
	os.WriteFile(script, []byte(`[{"op":"call","tool":"open_file","args":{"path":"/etc/hostname"}}]`), 0o600)
	cmd := exec.Command(testAgent(t), phantomBin, script, outside)
	cmd.Env = env.Vars
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := resultOf(t, waitStep(t, func() []agentLine { return readAgentLines(outside) }, 0))
	if !r.IsError || !strings.Contains(r.text(), "does not run inside a Phantom tab") {
		t.Errorf("open_file from outside every tab = %s; want a plain refusal", r.text())
	}
}

// agentInWindow runs the test agent with script in a new tab of window,
// in dir.
func agentInWindow(t *testing.T, env *testenv.Env, window, dir string, script []map[string]any) (string, func() []agentLine) {
	t.Helper()
	tmp := t.TempDir()
	path, out := filepath.Join(tmp, "script.json"), filepath.Join(tmp, "out.jsonl")
	b, _ := json.Marshal(script)
	os.WriteFile(path, b, 0o600)
	tab := strings.TrimSpace(mustPhantom(t, env, "new", "--window", window, "--dir", dir, "--", testAgent(t), phantomBin, path, out))
	read := func() []agentLine { return readAgentLines(out) }
	t.Cleanup(func() { killAgent(read()) })
	return tab, read
}

// TestEditorAdversarial: from a shell in one window, an agent cannot
// reach another window's editor through editord, nor make that window's
// agent drive a Neovim of its own by squatting the editor's socket.
func TestEditorAdversarial(t *testing.T) {
	env, proj := editorUp(t)
	grpcurl := grpcurlPath(t)
	tc, _ := humanClients(t, env)
	w2, err := tc.CreateWindow(t.Context(), &terminalv1.CreateWindowRequest{Name: "human"})
	if err != nil {
		t.Fatal(err)
	}
	win := w2.GetWindow().GetId()
	sock := env.Layout.EditorSocket(win)
	a := newAttacker(t, env, "attacker") // in the first window

	// Squatting: the attacker's own Neovim listens on window 2's socket
	// before window 2 has an editor.
	a.run(shellCmd("sh", "-c", `nohup nvim --headless --clean --listen "$0" >/dev/null 2>&1 &`, sock))
	eventually(t, "the attacker's Neovim to listen on "+sock, func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, fmt.Sprint(err)
	})
	victim, read := agentInWindow(t, env, win, proj, []map[string]any{
		{"op": "call", "tool": "open_file", "args": map[string]any{"path": "a.txt", "line": 5}},
		{"op": "wait", "file": filepath.Join(proj, "go-on")},
		{"op": "call", "tool": "list_panes"},
	})
	var o editorOpened
	decodeStep(t, read, 0, &o)
	if tb := tabByID(tabs(t, env), o.Opened.TerminalID); !o.Opened.Started || tb == nil || tb["window_id"] != win || tb["editor"] != true {
		t.Fatalf("open_file in window %s with a squatter on its socket = %+v (tab %v); want a fresh editor of its own", win, o, tb)
	}

	// Straight to editord with the victim's tab in the hidden field, and
	// plainly (which acts on the attacker's own window).
	data := fmt.Sprintf(`{"path":%q,"line":9,"message":"pwned","caller_tab_id":%q}`, filepath.Join(proj, "b.txt"), victim)
	r := a.run(shellCmd("timeout", "10", grpcurl, "-plaintext", "-unix", "-d", data, env.Layout.DaemonSocket("editord"), "phantom.editor.v1.EditorService/RevealLine"))
	if !refused(r) || !strings.Contains(r.out, "PermissionDenied") || !strings.Contains(r.out, "caller_tab_id") {
		t.Errorf("RevealLine naming the victim's tab from the attacker's: want PermissionDenied naming caller_tab_id, got %v", r)
	}
	r = a.run(shellCmd("timeout", "10", grpcurl, "-plaintext", "-unix", "-d", "{}", env.Layout.DaemonSocket("editord"), "phantom.editor.v1.EditorService/ListPanes"))
	if strings.Contains(r.out, "a.txt") || strings.Contains(r.out, o.Opened.TerminalID) {
		t.Errorf("ListPanes from the attacker's tab showed window %s's editor: %v", win, r)
	}
	var placed int
	editorLua(t, env, win, `return #vim.fn.sign_getplaced(vim.fn.bufnr(...), {group = '*'})[1].signs`, &placed, filepath.Join(proj, "a.txt"))
	os.WriteFile(filepath.Join(proj, "go-on"), nil, 0o600)
	var p editorPanes
	decodeStep(t, read, 2, &p)
	if placed != 0 || len(p.Tabs) != 1 || p.tabOf(filepath.Join(proj, "a.txt")) == "" {
		t.Errorf("after the attacks, window %s's editor has %d signs and files %+v; want none and just a.txt", win, placed, p.Tabs)
	}
}

// TestEditAdopts: `phantom edit FILE:LINE` typed in a shell tab makes that
// Neovim the window's editor, which the agent's tools then drive; a second
// `phantom edit` opens its file in it.
func TestEditAdopts(t *testing.T) {
	env, proj := editorUp(t)
	shell := strings.TrimSpace(mustPhantom(t, env, "new", "--dir", proj, "--name", "human"))
	in := &instance{env: env}
	cl := in.attach(t, 100, 30, nil, shell)
	time.Sleep(300 * time.Millisecond) // the shell's first prompt
	cl.send(shellQuote(phantomBin) + " edit a.txt:12\r")
	cl.waitFor("Neovim showing a.txt", func(text string) bool { return strings.Contains(text, "a line 12") })
	eventually(t, "the shell tab to be marked as the editor", func() (bool, string) {
		tb := tabByID(tabs(t, env), shell)
		return tb["editor"] == true, fmt.Sprint(tb)
	})
	_, read := runAgentIn(t, env, proj, "agent", []map[string]any{
		{"op": "call", "tool": "reveal_line", "args": map[string]any{"path": "b.txt", "line": 3}},
		{"op": "call", "tool": "list_panes"},
	})
	var o editorOpened
	decodeStep(t, read, 0, &o)
	if o.Opened.Started || o.Opened.TerminalID != shell {
		t.Fatalf("reveal_line = %+v; want the human's editor in tab %s, not a new one", o, shell)
	}
	var p editorPanes
	decodeStep(t, read, 1, &p)
	if p.tabOf(filepath.Join(proj, "a.txt")) == "" || p.tabOf(filepath.Join(proj, "b.txt")) == "" {
		t.Errorf("list_panes = %+v, want a.txt and b.txt open", p)
	}
	cl.waitFor("b.txt's line 3 on the human's screen", func(text string) bool { return strings.Contains(text, "b line 3") })
}

func TestSplitFileLine(t *testing.T) {
	exists := func(p string) bool { return p == "odd:7" }
	for _, c := range []struct {
		arg  string
		path string
		line int
	}{
		{"", "", 0},
		{"a.go", "a.go", 0},
		{"a.go:12", "a.go", 12},
		{"dir/a.go:0", "dir/a.go:0", 0},
		{"a.go:-3", "a.go:-3", 0},
		{"a.go:+3", "a.go:+3", 0},
		{"a.go:x", "a.go:x", 0},
		{":5", ":5", 0},
		{"odd:7", "odd:7", 0}, // an existing file named so
		{"c:/x:9", "c:/x", 9},
	} {
		path, line := splitFileLine(c.arg, exists)
		if path != c.path || line != c.line {
			t.Errorf("splitFileLine(%q) = %q, %d; want %q, %d", c.arg, path, line, c.path, c.line)
		}
	}
}

func FuzzSplitFileLine(f *testing.F) {
	for _, s := range []string{"a.go:12", "x:", ":1", "a:b:3", "a:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		path, line := splitFileLine(arg, func(string) bool { return false })
		if line < 0 {
			t.Fatalf("splitFileLine(%q): negative line %d", arg, line)
		}
		if line == 0 && path != arg {
			t.Fatalf("splitFileLine(%q) = %q without a line: the argument must stay whole", arg, path)
		}
		if line > 0 && (path == "" || !strings.HasPrefix(arg, path+":") || strconv.Itoa(line) != strings.TrimLeft(arg[len(path)+1:], "0")) {
			t.Fatalf("splitFileLine(%q) = %q, %d: not the argument split", arg, path, line)
		}
	})
}
