package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/testenv"
)

var (
	agentOnce sync.Once
	agentBin  string
	agentErr  error
)

// testAgent builds gateway/internal/testagent, an agent stand-in that
// drives the official MCP Go SDK client through `phantom +mcp-server`, or
// returns PHANTOM_TEST_AGENT, the same built beforehand (see TestMain).
func testAgent(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("PHANTOM_TEST_AGENT"); bin != "" {
		return bin
	}
	agentOnce.Do(func() {
		agentBin = filepath.Join(filepath.Dir(phantomBin), "testagent")
		out, err := exec.Command("go", "build", "-o", agentBin, "../../gateway/internal/testagent").CombinedOutput()
		if err != nil {
			agentErr = fmt.Errorf("build testagent: %v\n%s", err, out)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentBin
}

// agentLine is one outcome the test agent wrote.
type agentLine struct {
	Step   int             `json:"step"`
	Op     string          `json:"op"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	Done   bool            `json:"done"`
	// Progress are a call's notifications/progress, for a step with
	// "progress" (waits_mcp_test.go).
	Progress []progressNote `json:"progress"`
}

// toolResult is a tools/call result as the SDK client reports it.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

func (r toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// runAgent opens a tab running the test agent with script and returns a
// function reading the outcomes written so far.
func runAgent(t *testing.T, env *testenv.Env, script []map[string]any) (tab string, outcomes func() []agentLine) {
	t.Helper()
	return runAgentVia(t, env, phantomBin, script)
}

// runAgentVia is runAgent with the agent starting bin as its phantom
// binary, e.g. a wrapper that strips the bridge's environment.
func runAgentVia(t *testing.T, env *testenv.Env, bin string, script []map[string]any) (tab string, outcomes func() []agentLine) {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	scriptPath, outPath := filepath.Join(dir, "script.json"), filepath.Join(dir, "out.jsonl")
	b, _ := json.Marshal(script)
	os.WriteFile(scriptPath, b, 0o600)
	tab = strings.TrimSpace(mustPhantom(t, env, "new", "--name", "agent", "--", "sh", "-c",
		`echo own-tab-marker; exec "$0" "$@"`, testAgent(t), bin, scriptPath, outPath))
	read := func() []agentLine { return readAgentLines(outPath) }
	t.Cleanup(func() { killAgent(read()) })
	return tab, read
}

// readAgentLines reads the outcomes a test agent wrote to path so far.
func readAgentLines(path string) []agentLine {
	b, _ := os.ReadFile(path)
	var out []agentLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var a agentLine
		if json.Unmarshal([]byte(l), &a) == nil {
			out = append(out, a)
		}
	}
	return out
}

// agentPID is the pid an agent run reported on connecting, or 0.
func agentPID(lines []agentLine) int {
	for _, l := range lines {
		if l.Op == "connected" {
			var c struct {
				PID int `json:"pid"`
			}
			json.Unmarshal(l.Result, &c)
			return c.PID
		}
	}
	return 0
}

// killAgent kills the agent run whose outcomes are lines, if it connected.
func killAgent(lines []agentLine) {
	if pid := agentPID(lines); pid > 0 {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// waitStep waits until the agent reported step i (or failed) and returns it.
func waitStep(t *testing.T, read func() []agentLine, i int) agentLine {
	t.Helper()
	return waitStepWithin(t, read, i, testenv.WaitTimeout)
}

// waitStepWithin is waitStep for a step that may take up to d.
func waitStepWithin(t *testing.T, read func() []agentLine, i int, d time.Duration) agentLine {
	t.Helper()
	var got agentLine
	testenv.EventuallyWithin(t, d, fmt.Sprintf("agent step %d", i), func() (bool, string) {
		lines := read()
		for _, l := range lines {
			if l.Step == i || l.Op == "fatal" {
				got = l
				return true, ""
			}
		}
		return false, fmt.Sprint(lines)
	})
	if got.Op == "fatal" {
		t.Fatalf("agent failed: %s", got.Error)
	}
	return got
}

func resultOf(t *testing.T, l agentLine) toolResult {
	t.Helper()
	if l.Error != "" {
		t.Fatalf("step %d (%s) failed: %s", l.Step, l.Op, l.Error)
	}
	var r toolResult
	if err := json.Unmarshal(l.Result, &r); err != nil {
		t.Fatalf("step %d result %s: %v", l.Step, l.Result, err)
	}
	return r
}

// answerSheets answers every sheet asking for tool with --once until stop
// is closed.
func answerSheets(t *testing.T, env *testenv.Env, tool string, stop chan struct{}) {
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			r := phantom(t, env, "sheet", "list", "--json")
			var l struct {
				Sheets []struct {
					ID   string `json:"id"`
					Tool string `json:"tool"`
				} `json:"sheets"`
			}
			json.Unmarshal([]byte(r.stdout), &l)
			for _, s := range l.Sheets {
				if s.Tool == tool {
					phantom(t, env, "sheet", "answer", s.ID, "--once")
				}
			}
		}
	}()
}

// TestMCPAgentInTab runs the official MCP Go SDK client inside a real tab,
// through `phantom +mcp-server`, against the real daemons: the tool list,
// calls, protocol errors, a read granted through a sheet, and terminald
// killed and restarted mid-session.
func TestMCPAgentInTab(t *testing.T) {
	env, _ := up(t)
	killDir, _ := os.MkdirTemp("", "kill")
	t.Cleanup(func() { os.RemoveAll(killDir) })
	killed, restarted := filepath.Join(killDir, "killed"), filepath.Join(killDir, "restarted")
	tab, read := runAgent(t, env, []map[string]any{
		{"op": "list"},                           // 0
		{"op": "call", "tool": "list_terminals"}, // 1
		{"op": "call", "tool": "no_such_tool"},   // 2
		{"op": "call", "tool": "read_output", "args": map[string]any{"terminal_id": 7}},                              // 3
		{"op": "call", "tool": "create_terminal", "args": map[string]any{"command": []string{"sh"}}},                 // 4
		{"op": "call", "tool": "read_output", "args": map[string]any{"terminal_id": "$PHANTOM_TAB_ID", "lines": 50}}, // 5
		{"op": "call", "tool": "read_output", "args": map[string]any{"terminal_id": "t999"}},                         // 6
		{"op": "wait", "file": killed},                          // 7
		{"op": "call", "tool": "list_terminals"},                // 8
		{"op": "ping"},                                          // 9
		{"op": "list"},                                          // 10
		{"op": "wait", "file": restarted},                       // 11
		{"op": "call", "tool": "list_terminals", "retry": true}, // 12
	})

	// tools/list: every terminal and group tool, with schemas and hints.
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"inputSchema"`
			Annotations map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	l0 := waitStep(t, read, 0)
	if err := json.Unmarshal(l0.Result, &list); err != nil || l0.Error != "" {
		t.Fatalf("tools/list: %v %s", err, l0.Error)
	}
	names := map[string]int{}
	for i, tl := range list.Tools {
		names[tl.Name] = i
	}
	for _, want := range []string{"list_terminals", "read_output", "create_terminal", "run_command", "focus_terminal",
		"update_terminal", "list_groups", "create_group", "update_group", "move_to_group", "list_theme_colors"} {
		i, ok := names[want]
		if !ok {
			t.Errorf("tools/list lacks %s", want)
			continue
		}
		tl := list.Tools[i]
		if _, openWorld := tl.Annotations["openWorldHint"]; tl.Description == "" || tl.InputSchema["type"] != "object" || openWorld {
			t.Errorf("tool %s = %+v", want, tl)
		}
	}
	if i, ok := names["read_output"]; ok && list.Tools[i].Annotations["readOnlyHint"] != true {
		t.Errorf("read_output annotations = %v", list.Tools[i].Annotations)
	}

	// list_terminals lists the agent's own tab, with the agent's state.
	r1 := resultOf(t, waitStep(t, read, 1))
	if r1.IsError || !strings.Contains(r1.text(), `"id":"`+tab+`"`) {
		t.Errorf("list_terminals = %+v, want the tab %s", r1, tab)
	}
	if ts, _ := r1.StructuredContent["terminals"].([]any); len(ts) < 2 {
		t.Errorf("structuredContent = %v", r1.StructuredContent)
	}
	eventually(t, "the tab to show the test agent", func() (bool, string) {
		tb := tabByID(tabs(t, env), tab)
		return tb["agent_client"] == "test" && tb["agent_state"] != "AGENT_STATE_UNSPECIFIED", fmt.Sprint(tb)
	})

	// An unknown tool is a protocol error (-32602); bad arguments are
	// results with isError naming the schema's field.
	if l := waitStep(t, read, 2); !strings.Contains(l.Error, "unknown tool") {
		t.Errorf("unknown tool: %+v", l)
	}
	if r := resultOf(t, waitStep(t, read, 3)); !r.IsError || !strings.Contains(r.text(), "terminal_id must be a string, got 7") {
		t.Errorf("wrong argument type: %+v", r)
	}
	if r := resultOf(t, waitStep(t, read, 4)); !r.IsError || !strings.Contains(r.text(), `unknown field "command"`) {
		t.Errorf("hidden field: %+v", r)
	}

	// read_output on its own tab needs `read`: a sheet asks, the human
	// (this test, outside every tab) allows it once.
	stop := make(chan struct{})
	answerSheets(t, env, "read_output", stop)
	r5 := resultOf(t, waitStep(t, read, 5))
	close(stop)
	if r5.IsError || !strings.Contains(r5.text(), "own-tab-marker") {
		t.Errorf("read_output of its own tab = %+v, want its lines", r5)
	}
	if r6 := resultOf(t, waitStep(t, read, 6)); !r6.IsError || !strings.Contains(r6.text(), "t999") {
		t.Errorf("read_output of a missing tab = %+v, want isError naming it", r6)
	}

	// Kill terminald: its tools fail naming it; the session lives on.
	pid, err := daemonPID(env.Layout, "terminald")
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	eventually(t, "terminald to die", func() (bool, string) { return !running(pid), "" })
	os.WriteFile(killed, nil, 0o600)
	if r8 := resultOf(t, waitStep(t, read, 8)); !r8.IsError || !strings.Contains(r8.text(), "terminald") {
		t.Errorf("list_terminals with terminald down = %+v, want isError naming terminald", r8)
	}
	if l := waitStep(t, read, 9); l.Error != "" {
		t.Errorf("ping with terminald down: %s", l.Error)
	}
	if l := waitStep(t, read, 10); l.Error != "" {
		t.Errorf("tools/list with terminald down: %s", l.Error)
	}
	mustPhantom(t, env, "up")
	os.WriteFile(restarted, nil, 0o600)
	if r12 := resultOf(t, waitStep(t, read, 12)); r12.IsError {
		t.Errorf("list_terminals after terminald restarted = %+v", r12)
	}
}

// dialMCP connects to the gateway from the test process (outside every
// tab) and sends a hello; it returns the connection and the first line.
func dialMCP(t *testing.T, env *testenv.Env, hello map[string]any) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.Dial("unix", env.Layout.MCPSocket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h := map[string]any{"hello": "phantom", "version": 1, "pid": os.Getpid(), "client": "raw", "tab_state": ""}
	for k, v := range hello {
		h[k] = v
	}
	b, _ := json.Marshal(h)
	c.Write(append(b, '\n'))
	br := bufio.NewReaderSize(c, 1<<20)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, _ := br.ReadString('\n')
	return c, br, line
}

// TestMCPHandshakeRefusals checks the refusals a real socket peer can
// cause: another pid, a forged tab-state file, a tab that is not the
// caller's, and through the bridge, another tab's state file.
func TestMCPHandshakeRefusals(t *testing.T) {
	env, _ := up(t)
	check := func(name string, hello map[string]any, code string) {
		t.Helper()
		_, br, line := dialMCP(t, env, hello)
		if !strings.Contains(line, `"code":"`+code+`"`) {
			t.Errorf("%s: first line %q, want refusal %s", name, line, code)
		}
		if rest, err := br.ReadString('\n'); err == nil {
			t.Errorf("%s: connection not closed after the refusal: %q", name, rest)
		}
	}
	check("pid mismatch", map[string]any{"pid": os.Getpid() + 1}, "pid_mismatch")
	check("unknown version", map[string]any{"version": 7}, "unknown_version")
	check("control characters in the client", map[string]any{"client": "a\x1b]0;x\x07"}, "bad_hello")

	// Tab A runs a bridge claiming tab B's state file.
	tabB := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c", "sleep 1000"))
	stateB := filepath.Join(env.Layout.TabStateDir(), tabB+".json")
	check("the test process claiming a tab", map[string]any{"tab_state": stateB}, "not_in_tab")

	// A copy of a genuine state file outside the directory is forged.
	forged := filepath.Join(t.TempDir(), tabB+".json")
	b, err := os.ReadFile(stateB)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(forged, b, 0o600)
	check("forged tab-state file", map[string]any{"tab_state": forged}, "bad_tab_state")

	errFile := filepath.Join(t.TempDir(), "bridge.err")
	tabA := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c",
		`PHANTOM_TAB_STATE="$1" "$0" +mcp-server --client=liar </dev/null >"$2.out" 2>"$2"; echo "exit $?" >>"$2"; sleep 1000`,
		phantomBin, stateB, errFile))
	eventually(t, "the lying bridge to be refused", func() (bool, string) {
		b, _ := os.ReadFile(errFile)
		return strings.Contains(string(b), "exit 1"), string(b)
	})
	b, _ = os.ReadFile(errFile)
	if !strings.Contains(string(b), "not_in_tab") || !strings.Contains(string(b), tabB) {
		t.Errorf("bridge in tab %s claiming %s printed %q, want a not_in_tab refusal", tabA, tabB, b)
	}
	if out, _ := os.ReadFile(errFile + ".out"); len(out) != 0 {
		t.Errorf("the bridge wrote to stdout: %q", out)
	}
}

// TestMCPRawProtocol speaks JSON-RPC over the socket directly: unknown
// methods keep the connection, bad lines get the right codes, a client
// leaving mid-call withdraws its sheet, and a huge line ends it.
func TestMCPRawProtocol(t *testing.T) {
	env, _ := up(t)
	c, br, line := dialMCP(t, env, nil)
	if !strings.Contains(line, `"hello":"ok"`) {
		t.Fatalf("hello answer %q", line)
	}
	ask := func(req string) string {
		t.Helper()
		c.Write([]byte(req + "\n"))
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %s: %v", req, err)
		}
		return l
	}
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	if got := ask(initialize); !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Errorf("initialize → %s", got)
	}
	for req, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`: `"code":-32601`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`:            `"id":2,"result":{}`,
		`{oops`: `"id":null,"error":{"code":-32700`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`:                                                            `"code":-32600`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_terminals","arguments":{"a":1}}}`: `"isError":true`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_terminals"}}`:                     `"structuredContent":{"terminals":[`,
	} {
		if got := ask(req); !strings.Contains(got, want) {
			t.Errorf("%s → %s, want %s", req, got, want)
		}
	}

	// A client that leaves while its call waits for a sheet: the sheet is
	// withdrawn.
	c2, br2, line := dialMCP(t, env, nil)
	if !strings.Contains(line, `"hello":"ok"`) {
		t.Fatalf("hello answer %q", line)
	}
	c2.Write([]byte(initialize + "\n"))
	if got, _ := br2.ReadString('\n'); !strings.Contains(got, `"id":0,"result"`) {
		t.Fatalf("initialize → %s", got)
	}
	first := tabs(t, env)[0]["id"].(string)
	c2.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_output","arguments":{"terminal_id":"` + first + `"}}}` + "\n"))
	sheets := func() string { return phantom(t, env, "sheet", "list", "--json").stdout }
	eventually(t, "a sheet for the read", func() (bool, string) { s := sheets(); return strings.Contains(s, "read_output"), s })
	c2.Close()
	eventually(t, "the sheet to be withdrawn", func() (bool, string) { s := sheets(); return !strings.Contains(s, "read_output"), s })

	// Still serving on the first connection; then a line over 4 MiB ends it.
	if got := ask(`{"jsonrpc":"2.0","id":6,"method":"ping"}`); !strings.Contains(got, `"id":6`) {
		t.Errorf("ping after the other client left: %s", got)
	}
	huge := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`
	go c.Write([]byte(huge + "\n"))
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, _ := br.ReadString('\n')
	if !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, "longer than") {
		t.Errorf("huge line → %q", got)
	}
	if rest, err := br.ReadString('\n'); err == nil {
		t.Errorf("connection open after a huge line: %q", rest)
	}
	_ = strconv.Itoa
}

// TestBridgeDiscover checks the order in which the bridge looks for the
// socket and the tab-state hint, and what it says it tried.
func TestBridgeDiscover(t *testing.T) {
	const (
		flagSock = "/flag.sock"
		envSock  = "/env.sock"
		ancSock  = "/anc.sock"
		dfltSock = "/default.sock"
		envTab   = "/run/tabs/t1.json"
		ancTab   = "/run/tabs/t2.json"
	)
	noAncestor := ancestorVars{read: 3, last: 1}
	ancestor := ancestorVars{pid: 42, comm: "codex", socket: ancSock, tabState: ancTab, read: 2, last: 42}
	sameSocket := ancestor
	sameSocket.socket = envSock + "/."
	dflt := func() (string, error) { return dfltSock, nil }
	noHome := func() (string, error) { return "", errors.New("neither XDG_CACHE_HOME nor HOME is set") }
	for _, tc := range []struct {
		name     string
		flag     string
		env      map[string]string
		anc      ancestorVars
		dflt     func() (string, error)
		want     target
		wantWalk bool
	}{{
		name: "flag and full environment: no walk",
		flag: flagSock, env: map[string]string{envSocket: envSock, envTabState: envTab}, anc: ancestor, dflt: dflt,
		want: target{socket: flagSock, from: "--socket", tabState: envTab},
	}, {
		name: "environment",
		env:  map[string]string{envSocket: envSock, envTabState: envTab}, anc: ancestor, dflt: dflt,
		want: target{socket: envSock, from: envSocket, tried: []string{"--socket not given"}, tabState: envTab},
	}, {
		name: "stripped environment: the nearest ancestor's socket and tab",
		anc:  ancestor, dflt: dflt, wantWalk: true,
		want: target{socket: ancSock, from: "PHANTOM_MCP_SOCKET of ancestor pid 42 (codex)",
			tried: []string{"--socket not given", "PHANTOM_MCP_SOCKET not set"}, tabState: ancTab},
	}, {
		name: "socket in the environment, tab from the ancestor naming the same socket",
		env:  map[string]string{envSocket: envSock}, anc: sameSocket, dflt: dflt, wantWalk: true,
		want: target{socket: envSock, from: envSocket, tried: []string{"--socket not given"}, tabState: ancTab},
	}, {
		name: "an ancestor of another instance gives no tab hint",
		env:  map[string]string{envSocket: envSock}, anc: ancestor, dflt: dflt, wantWalk: true,
		want: target{socket: envSock, from: envSocket, tried: []string{"--socket not given"}},
	}, {
		name: "nothing but the default",
		anc:  noAncestor, dflt: dflt, wantWalk: true,
		want: target{socket: dfltSock, from: "default", tried: []string{"--socket not given", "PHANTOM_MCP_SOCKET not set",
			"no ancestor process has PHANTOM_MCP_SOCKET (read 3 processes up to pid 1)"}},
	}, {
		name: "not even a default",
		anc:  noAncestor, dflt: noHome, wantWalk: true,
		want: target{tried: []string{"--socket not given", "PHANTOM_MCP_SOCKET not set",
			"no ancestor process has PHANTOM_MCP_SOCKET (read 3 processes up to pid 1)",
			"default path unknown: neither XDG_CACHE_HOME nor HOME is set"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			walks := 0
			got := discover(tc.flag, func(k string) string { return tc.env[k] },
				func() ancestorVars { walks++; return tc.anc }, tc.dflt)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("discover =\n%#v\nwant\n%#v", got, tc.want)
			}
			if want := map[bool]int{false: 0, true: 1}[tc.wantWalk]; walks != want {
				t.Errorf("walked the ancestors %d times, want %d", walks, want)
			}
		})
	}
}

// fakeProc lays out a directory like /proc: for each process a stat file
// and an environ file (environ nil: a directory, so that reading fails).
func fakeProc(t *testing.T, procs []fakeProcess) procfs.FS {
	t.Helper()
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(p.pid))
		os.MkdirAll(dir, 0o755)
		stat := fmt.Sprintf("%d (%s) S %d %d %d 0 -1 %s%d\n", p.pid, p.comm, p.ppid, p.pid, p.pid, strings.Repeat("0 ", 13), 100+p.pid)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		if p.environ == nil {
			os.Mkdir(filepath.Join(dir, "environ"), 0o755)
		} else {
			os.WriteFile(filepath.Join(dir, "environ"), []byte(strings.Join(p.environ, "\x00")+"\x00"), 0o644)
		}
	}
	return procfs.FS{Root: root}
}

type fakeProcess struct {
	pid, ppid int
	comm      string
	environ   []string
}

func TestBridgeWalkAncestors(t *testing.T) {
	init1 := fakeProcess{1, 0, "init", []string{"PATH=/bin"}}
	terminald := fakeProcess{10, 1, "phantom", nil} // unreadable, like a non-dumpable daemon
	shell := fakeProcess{20, 10, "bash", []string{"HOME=/h", "PHANTOM_MCP_SOCKET=/s.sock", "PHANTOM_TAB_STATE=/run/tabs/t1.json", "PHANTOM_MCP_SOCKET=/shadowed.sock"}}
	agent := fakeProcess{30, 20, "codex", []string{"HOME=/h", "PHANTOM_MCP_SOCKET="}}
	for _, tc := range []struct {
		name    string
		procs   []fakeProcess
		from    int
		want    ancestorVars
		summary string
	}{{
		name:  "nearest with the variable; an empty one does not count; first match wins",
		procs: []fakeProcess{init1, terminald, shell, agent},
		from:  30,
		want:  ancestorVars{pid: 20, comm: "bash", socket: "/s.sock", tabState: "/run/tabs/t1.json", read: 2, last: 20},
	}, {
		name:  "none up to pid 1, an unreadable process skipped",
		procs: []fakeProcess{init1, terminald, {31, 10, "codex", []string{"HOME=/h"}}},
		from:  31,
		want:  ancestorVars{read: 2, last: 1, unreadable: []string{"pid 10 (phantom): is a directory"}},
		summary: "no ancestor process has PHANTOM_MCP_SOCKET (read 2 processes up to pid 1; " +
			"could not read pid 10 (phantom): is a directory)",
	}, {
		name:    "a parent that is gone ends the walk",
		procs:   []fakeProcess{{30, 77, "codex", []string{"A=1"}}},
		from:    30,
		want:    ancestorVars{read: 1, last: 77, stopped: "pid 77 is gone"},
		summary: "no ancestor process has PHANTOM_MCP_SOCKET (read 1 process up to pid 77; pid 77 is gone)",
	}, {
		name:  "a loop only a lying /proc can have",
		procs: []fakeProcess{{40, 41, "a", []string{}}, {41, 40, "b", []string{}}},
		from:  40,
		want:  ancestorVars{read: maxAncestors, last: 41, stopped: "gave up after 64 processes"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := walkAncestors(fakeProc(t, tc.procs), tc.from)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("walkAncestors =\n%#v\nwant\n%#v", got, tc.want)
			}
			if tc.summary != "" && got.summary() != tc.summary {
				t.Errorf("summary = %q\nwant      %q", got.summary(), tc.summary)
			}
		})
	}
}

// TestBridgeDialErrors checks that a failed dial names every source tried
// and why the last one failed, in plain words.
func TestBridgeDialErrors(t *testing.T) {
	dir := t.TempDir()
	notSocket := filepath.Join(dir, "plain-file")
	os.WriteFile(notSocket, nil, 0o600)
	tried := []string{"--socket not given"}
	for _, tc := range []struct {
		name string
		tg   target
		want string
	}{{
		name: "missing",
		tg:   target{socket: filepath.Join(dir, "none.sock"), from: envSocket, tried: tried},
		want: "cannot reach Phantom's MCP socket: --socket not given; PHANTOM_MCP_SOCKET " + filepath.Join(dir, "none.sock") +
			": no such file — is Phantom running? start it with `phantom up`",
	}, {
		name: "not listening",
		tg:   target{socket: notSocket, from: "default", tried: tried},
		want: "cannot reach Phantom's MCP socket: --socket not given; default " + notSocket +
			": nothing is listening (connection refused) — is Phantom running? start it with `phantom up`",
	}, {
		name: "no path at all",
		tg:   target{tried: []string{"--socket not given", "default path unknown: no HOME"}},
		want: "cannot reach Phantom's MCP socket: --socket not given; default path unknown: no HOME — is Phantom running? start it with `phantom up`",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.tg.dial()
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded")
			}
			if err.Error() != tc.want {
				t.Errorf("dial error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// gatewayFunc serves one connection of a fake gateway after its hello;
// stop is closed when the test ends.
type gatewayFunc func(c *net.UnixConn, br *bufio.Reader, stop <-chan struct{})

// fakeGateway serves a socket in a fresh directory: for each connection it
// reads the hello line and hands the rest to serve. It returns the socket
// and a channel receiving each hello.
func fakeGateway(t *testing.T, serve gatewayFunc) (string, chan map[string]any) {
	t.Helper()
	dir, err := os.MkdirTemp("", "fgw") // short: socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "gw.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	hellos := make(chan map[string]any, 4)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(stop); l.Close(); wg.Wait(); os.RemoveAll(dir) })
	wg.Go(func() {
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadBytes('\n')
				var h map[string]any
				if err != nil || json.Unmarshal(line, &h) != nil {
					t.Errorf("fake gateway: hello %q: %v", line, err)
					return
				}
				hellos <- h
				serve(c, br, stop)
			})
		}
	})
	return sock, hellos
}

const okHello = `{"hello":"ok","version":1,"connection_id":"c1"}` + "\n"

// answerAtEOF is a gateway that reads every request until the client's
// input ends, takes a while, then answers each one and closes.
func answerAtEOF(c *net.UnixConn, br *bufio.Reader, _ <-chan struct{}) {
	c.Write([]byte(okHello))
	var reqs []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		reqs = append(reqs, strings.TrimSpace(line))
	}
	time.Sleep(200 * time.Millisecond)
	for _, r := range reqs {
		c.Write([]byte("reply to " + r + "\n"))
	}
}

// TestBridgeEnds runs the bridge in process against fake gateways and
// checks each way a session ends: what reaches stdout and what is
// returned for stderr.
func TestBridgeEnds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		serve     gatewayFunc
		input     string
		keepInput bool          // stdin stays open until the bridge returns
		drain     time.Duration // default 10 s
		wantOut   string
		wantErr   string // "" for a clean end
	}{{
		name:    "client closes stdin at once: every reply delivered",
		serve:   answerAtEOF,
		input:   "1\n2\n3\n",
		wantOut: "reply to 1\nreply to 2\nreply to 3\n",
	}, {
		name: "refused: nothing on stdout",
		serve: func(c *net.UnixConn, _ *bufio.Reader, _ <-chan struct{}) {
			c.Write([]byte(`{"error":{"code":"not_in_tab","message":"the hello claims tab t2, but process 9 runs in tab t1"}}` + "\n"))
		},
		input:   "1\n",
		wantErr: "the gateway refused the connection: the hello claims tab t2, but process 9 runs in tab t1 (not_in_tab)",
	}, {
		name:    "closed without answering the hello",
		serve:   func(*net.UnixConn, *bufio.Reader, <-chan struct{}) {},
		wantErr: "the gateway closed the connection without answering the hello (EOF)",
	}, {
		name: "gateway never closes after the input ended",
		serve: func(c *net.UnixConn, br *bufio.Reader, stop <-chan struct{}) {
			c.Write([]byte(okHello))
			br.ReadString('\n')
			c.Write([]byte("reply to 1\n"))
			<-stop
		},
		input:   "1\n",
		drain:   300 * time.Millisecond,
		wantOut: "reply to 1\n",
		wantErr: "gave up after 300ms waiting for the gateway to answer and close the connection; replies may be missing",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sock, hellos := fakeGateway(t, tc.serve)
			var stdin io.Reader = strings.NewReader(tc.input)
			if tc.keepInput {
				pr, pw := io.Pipe()
				defer pw.Close() // ends the bridge's stdin copy
				stdin = pr
			}
			drain := cmp.Or(tc.drain, 10*time.Second)
			var out bytes.Buffer
			err := bridge(target{socket: sock, from: "--socket", tabState: "/run/tabs/t1.json"}, "fake", drain, stdin, &out)
			if got := fmt.Sprint(err); tc.wantErr == "" && err != nil || tc.wantErr != "" && got != tc.wantErr {
				t.Errorf("bridge error = %v, want %q", err, tc.wantErr)
			}
			if out.String() != tc.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tc.wantOut)
			}
			h := <-hellos
			want := map[string]any{"hello": "phantom", "version": 1.0, "pid": float64(os.Getpid()), "client": "fake", "tab_state": "/run/tabs/t1.json"}
			if !reflect.DeepEqual(h, want) {
				t.Errorf("hello = %v, want %v", h, want)
			}
		})
	}
}

// TestBridgeUnreachable runs the bridge with nothing to find: a stripped
// environment whose HOME has no socket. It must exit 1, write nothing to
// stdout, and say on stderr what it tried, in order.
func TestBridgeUnreachable(t *testing.T) {
	if a := walkAncestors(procfs.Default, os.Getpid()); a.socket != "" {
		t.Skipf("the tests run inside Phantom (%s has %s): the bridge would find it", a.name(), envSocket)
	}
	home := t.TempDir()
	cmd := exec.Command(phantomBin, "+mcp-server", "--client=lost")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", out.String())
	}
	sock := filepath.Join(home, ".cache", "phantom", paths.BundleID()+".sock")
	want := regexp.MustCompile(`^phantom: cannot reach Phantom's MCP socket: --socket not given; PHANTOM_MCP_SOCKET not set; ` +
		`no ancestor process has PHANTOM_MCP_SOCKET \(read [1-9][0-9]* process(es)? up to pid [0-9]+.*\); ` +
		`default ` + regexp.QuoteMeta(sock) + `: no such file — is Phantom running\? start it with ` + "`phantom up`\n$")
	if !want.MatchString(errb.String()) {
		t.Errorf("stderr:\n%s\nwant it to match\n%s", errb.String(), want)
	}
}

// TestBridgeStrippedEnvInTab runs the test agent in a real tab, with its
// bridge started the way the TypeScript SDK and Inspector start servers:
// only HOME, LOGNAME, PATH, SHELL, TERM and USER. The instance's socket is
// not at HOME's default path (the test instance has its own
// XDG_CACHE_HOME), so the bridge can only find it through the agent's
// environment, and the gateway must still place it in its tab.
func TestBridgeStrippedEnvInTab(t *testing.T) {
	env, _ := up(t)
	if _, err := os.Stat(filepath.Join(env.Home, ".cache", "phantom", paths.BundleID()+".sock")); err == nil {
		t.Fatal("the instance's socket is at HOME's default path: the test would prove nothing")
	}
	wrapper := filepath.Join(t.TempDir(), "stripped-phantom")
	os.WriteFile(wrapper, []byte(`#!/bin/sh
exec env -i HOME="$HOME" LOGNAME="$LOGNAME" PATH="$PATH" SHELL="$SHELL" TERM="$TERM" USER="$USER" `+phantomBin+` "$@"
`), 0o700)
	done := filepath.Join(t.TempDir(), "done")
	defer os.WriteFile(done, nil, 0o600)
	tab, read := runAgentVia(t, env, wrapper, []map[string]any{
		{"op": "call", "tool": "list_terminals"}, // 0
		{"op": "wait", "file": done},             // 1: the session stays open meanwhile
	})
	r := resultOf(t, waitStep(t, read, 0))
	if r.IsError || !strings.Contains(r.text(), `"id":"`+tab+`"`) {
		t.Errorf("list_terminals through a stripped bridge = %+v, want the tab %s", r, tab)
	}
	eventually(t, "the tab to show the test agent", func() (bool, string) {
		tb := tabByID(tabs(t, env), tab)
		return tb["agent_client"] == "test" && tb["agent_state"] != "AGENT_STATE_UNSPECIFIED", fmt.Sprint(tb)
	})
}

// TestBridgeRepliesAfterStdinCloses is a client that writes its requests
// and closes stdin at once, against a real gateway: it must get every
// reply, and the bridge must exit 0.
func TestBridgeRepliesAfterStdinCloses(t *testing.T) {
	env, _ := up(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, phantomBin, "+mcp-server", "--client=hasty", "--socket="+env.Layout.MCPSocket)
	cmd.Env = env.Vars
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hasty","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_terminals","arguments":{}}}`,
	}, "\n") + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Errorf("bridge: %v\nstderr: %s", err, errb.String())
	}
	got := map[string]string{}
	for l := range strings.Lines(out.String()) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("stdout line %q is not JSON-RPC: %v", l, err)
			continue
		}
		got[string(m.ID)] = string(m.Result) + string(m.Error)
	}
	for id, want := range map[string]string{"1": `"protocolVersion"`, "2": `"list_terminals"`, "3": `"terminals"`} {
		if !strings.Contains(got[id], want) {
			t.Errorf("reply to request %s = %q, want it to contain %s (the gateway must answer every request it read before closing on the end of input)",
				id, got[id], want)
		}
	}
}
