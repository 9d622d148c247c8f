// Command testagent is a stand-in for a coding agent in end-to-end tests:
// run as a Phantom tab's program, it starts `phantom +mcp-server` with the
// official MCP Go SDK client, performs the steps of a script and writes
// each outcome as one JSON line to an output file the test reads.
//
//	testagent PHANTOM_BIN SCRIPT.json OUT.jsonl
//
// The bridge is started with --client=test, or --client=$TESTAGENT_CLIENT
// when that is set.
//
// A script is a JSON array of steps:
//
//	{"op":"list"}                               tools/list
//	{"op":"call","tool":"T","args":{...}}       tools/call
//	{"op":"ping"}                               ping
//	{"op":"wait","file":"PATH"}                 wait until PATH exists
//	{"op":"exit"}                               close the session and exit
//	{"op":"bench","tool":"T","args":{...},"n":N,"nvim":"SOCK","lua":"CODE","lua_args":[...]}
//	                                            N times, alternating: tools/call T,
//	                                            and CODE run directly in the Neovim
//	                                            at SOCK (nvim_exec_lua); the result
//	                                            holds both latencies in nanoseconds
//
// Without an exit step the agent stays alive after its script (with its
// session closed) until the test closes its tab.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/phantom-dev/phantom/editord/nvim"
)

// step is one scripted action.
type step struct {
	Op   string         `json:"op"`
	Tool string         `json:"tool,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	File string         `json:"file,omitempty"`
	// Retry repeats a call until it is not an error, for up to 20 s.
	Retry bool `json:"retry,omitempty"`
	// N, Nvim, Lua and LuaArgs are a bench step's.
	N       int    `json:"n,omitempty"`
	Nvim    string `json:"nvim,omitempty"`
	Lua     string `json:"lua,omitempty"`
	LuaArgs []any  `json:"lua_args,omitempty"`
}

// outcome is one line of the output file.
type outcome struct {
	Step   int    `json:"step"`
	Op     string `json:"op"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	Done   bool   `json:"done,omitempty"`
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: testagent PHANTOM_BIN SCRIPT.json OUT.jsonl")
		os.Exit(2)
	}
	// Outlive a killed terminald (its PTY hangs up): the test restarts it
	// and expects this session to carry on.
	signal.Ignore(syscall.SIGHUP)
	out, err := os.OpenFile(os.Args[3], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer out.Close()
	emit := func(o outcome) {
		b, _ := json.Marshal(o)
		out.Write(append(b, '\n'))
		out.Sync()
	}
	err = run(os.Args[1], os.Args[2], emit)
	if err != nil && !errors.Is(err, errExit) {
		emit(outcome{Step: -1, Op: "fatal", Error: err.Error()})
	}
	emit(outcome{Step: -1, Op: "end", Done: true})
	if errors.Is(err, errExit) {
		out.Close()
		os.Exit(0)
	}
	// Stay alive so the tab (and its tab-state file) outlives the test's
	// reads; the test closes the tab.
	time.Sleep(time.Hour)
}

// errExit ends run at an exit step, after the session closed.
var errExit = errors.New("exit")

func run(bin, scriptPath string, emit func(outcome)) error {
	b, err := os.ReadFile(scriptPath)
	if err != nil {
		return err
	}
	var script []step
	if err := json.Unmarshal(b, &script); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "testagent", Version: "1"}, nil)
	name := os.Getenv("TESTAGENT_CLIENT")
	if name == "" {
		name = "test"
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "+mcp-server", "--client="+name)}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	emit(outcome{Step: -1, Op: "connected", Result: map[string]any{"pid": os.Getpid(), "init": cs.InitializeResult()}})
	for i, s := range script {
		o := outcome{Step: i, Op: s.Op}
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		switch s.Op {
		case "list":
			res, err := cs.ListTools(cctx, nil)
			o.Result, o.Error = res, errString(err)
		case "call":
			args := expand(s.Args)
			deadline := time.Now().Add(20 * time.Second)
			for {
				res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: s.Tool, Arguments: args})
				o.Result, o.Error = res, errString(err)
				if !s.Retry || (err == nil && !res.IsError) || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		case "ping":
			o.Error = errString(cs.Ping(cctx, nil))
		case "wait":
			for {
				if _, err := os.Stat(s.File); err == nil {
					break
				}
				if cctx.Err() != nil {
					o.Error = "timed out waiting for " + s.File
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		case "bench":
			o.Result, o.Error = bench(ctx, cs, s)
		case "exit":
			cancel()
			emit(o)
			return errExit // the deferred Close ends the session first
		default:
			o.Error = "unknown op " + s.Op
		}
		cancel()
		emit(o)
	}
	return nil
}

// bench alternates a tool call through the gateway with a direct
// msgpack-RPC call to the same Neovim, s.N times each.
func bench(ctx context.Context, cs *mcp.ClientSession, s step) (any, string) {
	c, err := nvim.Dial(ctx, s.Nvim)
	if err != nil {
		return nil, err.Error()
	}
	defer c.Close()
	var gateway, direct []int64
	args := expand(s.Args)
	for range s.N {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.Tool, Arguments: args})
		if err == nil && res.IsError {
			err = fmt.Errorf("%s: %v", s.Tool, res.Content)
		}
		if err != nil {
			return nil, err.Error()
		}
		t1 := time.Now()
		if err := c.ExecLua(ctx, s.Lua, nil, s.LuaArgs...); err != nil {
			return nil, err.Error()
		}
		gateway, direct = append(gateway, int64(t1.Sub(t0))), append(direct, int64(time.Since(t1)))
	}
	return map[string]any{"gateway": gateway, "direct": direct}, ""
}

// expand replaces string arguments "$PHANTOM_TAB_ID" with this tab's id,
// and "$FILE:PATH" with what the file PATH holds (trimmed), so that a test
// can hand the agent values it learns only while the script runs.
func expand(args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if v == "$PHANTOM_TAB_ID" {
			v = os.Getenv("PHANTOM_TAB_ID")
		}
		if s, ok := v.(string); ok && strings.HasPrefix(s, "$FILE:") {
			b, _ := os.ReadFile(strings.TrimPrefix(s, "$FILE:"))
			v = strings.TrimSpace(string(b))
		}
		out[k] = v
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
