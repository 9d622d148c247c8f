package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

var (
	agentOnce sync.Once
	agentBin  string
	agentErr  error
)

// testAgent builds gateway/internal/testagent, an agent stand-in that
// drives the official MCP Go SDK client through `phantom +mcp-server`.
func testAgent(t *testing.T) string {
	t.Helper()
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
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	scriptPath, outPath := filepath.Join(dir, "script.json"), filepath.Join(dir, "out.jsonl")
	b, _ := json.Marshal(script)
	os.WriteFile(scriptPath, b, 0o600)
	tab = strings.TrimSpace(mustPhantom(t, env, "new", "--name", "agent", "--", "sh", "-c",
		`echo own-tab-marker; exec "$0" "$@"`, testAgent(t), phantomBin, scriptPath, outPath))
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
	var got agentLine
	eventually(t, fmt.Sprintf("agent step %d", i), func() (bool, string) {
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
		if tl.Description == "" || tl.InputSchema["type"] != "object" || tl.Annotations["openWorldHint"] != false {
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

	// Protocol errors reach the SDK client as errors (-32602).
	if l := waitStep(t, read, 2); !strings.Contains(l.Error, "unknown tool") {
		t.Errorf("unknown tool: %+v", l)
	}
	if l := waitStep(t, read, 3); !strings.Contains(l.Error, "invalid arguments") {
		t.Errorf("wrong argument type: %+v", l)
	}
	if l := waitStep(t, read, 4); !strings.Contains(l.Error, `unknown field "command"`) {
		t.Errorf("hidden field: %+v", l)
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
	for req, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`: `"code":-32601`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`:            `"id":2,"result":{}`,
		`{oops`: `"id":null,"error":{"code":-32700`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`:                                                            `"code":-32600`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_terminals","arguments":{"a":1}}}`: `"code":-32602`,
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
	_ = br2
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
