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
//	                                            (an argument "$STEP:N.a.b" is field
//	                                            a.b of step N's structuredContent,
//	                                            a number indexing a list; with
//	                                            "progress":true the call sends a
//	                                            progressToken and the outcome lists
//	                                            the notifications/progress received
//	                                            by the time the result came)
//	{"op":"ping"}                               ping
//	{"op":"wait","file":"PATH"}                 wait until PATH exists
//	{"op":"exit"}                               close the session and exit
//	{"op":"bench","tool":"T","args":{...},"n":N,"nvim":"SOCK","lua":"CODE","lua_args":[...]}
//	                                            N times, alternating: tools/call T,
//	                                            and CODE run directly in the Neovim
//	                                            at SOCK (nvim_exec_lua); the result
//	                                            holds both latencies in nanoseconds
//	{"op":"pages","tool":"T","args":{...},"follow":"older"|"next","out":"PATH"}
//	                                            call T, then again with
//	                                            cursor set to the result's
//	                                            older_cursor while it is set
//	                                            ("older"), or to its
//	                                            next_cursor while more is
//	                                            true ("next"); each result's
//	                                            structuredContent is a line
//	                                            of PATH, and the outcome
//	                                            counts pages, bytes and time;
//	                                            "older-then-next" follows
//	                                            older_cursor, then from the
//	                                            oldest page's next_cursor
//	                                            onwards into PATH.next
//	{"op":"flood","tool":"T","args":{...},"n":N,"cancel_ms":M}
//	                                            N calls of T, one after the other,
//	                                            each given up (cancelled) after M ms
//	                                            when it has not returned; "$I" in a
//	                                            text argument is the call's number;
//	                                            the result counts the outcomes
//
// Without an exit step the agent stays alive after its script (with its
// session closed) until the test closes its tab.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// Progress sends a call's progressToken and records the progress.
	Progress bool `json:"progress,omitempty"`
	// N, Nvim, Lua and LuaArgs are a bench step's.
	N       int    `json:"n,omitempty"`
	Nvim    string `json:"nvim,omitempty"`
	Lua     string `json:"lua,omitempty"`
	LuaArgs []any  `json:"lua_args,omitempty"`
	// Follow and Out are for pages: which cursor to follow, and the file
	// the pages are written to.
	Follow string `json:"follow,omitempty"`
	Out    string `json:"out,omitempty"`
	// CancelMS is a flood step's: how long each call may take before it
	// is cancelled.
	CancelMS int `json:"cancel_ms,omitempty"`
}

// outcome is one line of the output file.
type outcome struct {
	Step   int    `json:"step"`
	Op     string `json:"op"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	Done   bool   `json:"done,omitempty"`
	// Progress are the notifications/progress of a call with "progress",
	// received by the time its result came.
	Progress []*mcp.ProgressNotificationParams `json:"progress,omitempty"`
	// Millis is how long a call took.
	Millis int64 `json:"ms,omitempty"`
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
	var progressMu sync.Mutex
	progress := map[any][]*mcp.ProgressNotificationParams{}
	client := mcp.NewClient(&mcp.Implementation{Name: "testagent", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progressMu.Lock()
			defer progressMu.Unlock()
			progress[req.Params.ProgressToken] = append(progress[req.Params.ProgressToken], req.Params)
		},
	})
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
			token := fmt.Sprintf("step-%d", i)
			for {
				params := &mcp.CallToolParams{Name: s.Tool, Arguments: args}
				if s.Progress {
					params.SetProgressToken(token)
				}
				start := time.Now()
				res, err := cs.CallTool(cctx, params)
				o.Millis = time.Since(start).Milliseconds()
				progressMu.Lock()
				o.Progress = slices.Clone(progress[token])
				progressMu.Unlock()
				o.Result, o.Error = res, errString(err)
				if err == nil {
					stepResults[i] = res.StructuredContent
				}
				if !s.Retry || (err == nil && !res.IsError) || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		case "pages":
			o.Result, o.Error = pages(cctx, cs, s)
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
		case "flood":
			o.Result = flood(ctx, cs, s)
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

// pageStats is the outcome of a pages step.
type pageStats struct {
	Pages int `json:"pages"`
	// TextBytes counts the text of the results' content, what a model
	// reads; MaxTextBytes is the largest one page brought.
	TextBytes    int   `json:"text_bytes"`
	MaxTextBytes int   `json:"max_text_bytes"`
	Millis       int64 `json:"ms"`
}

// pages runs a pages step: calls following a cursor until it ends.
func pages(ctx context.Context, cs *mcp.ClientSession, s step) (any, string) {
	var st pageStats
	start := time.Now()
	args := expand(s.Args)
	follow := s.Follow
	then := ""
	if follow == "older-then-next" {
		follow, then = "older", "next"
	}
	last, err := follow1(ctx, cs, s, args, follow, s.Out, &st)
	if err == nil && then != "" {
		args = map[string]any{"terminal_id": args["terminal_id"], "cursor": last}
		if mb, ok := s.Args["max_bytes"]; ok {
			args["max_bytes"] = mb
		}
		_, err = follow1(ctx, cs, s, args, then, s.Out+".next", &st)
	}
	st.Millis = time.Since(start).Milliseconds()
	if err != nil {
		return st, err.Error()
	}
	return st, ""
}

// follow1 calls s.Tool with args, then again with the cursor follow names
// until it ends, writing each structuredContent as a line of out. It
// returns the last result's next_cursor.
func follow1(ctx context.Context, cs *mcp.ClientSession, s step, args map[string]any, follow, out string, st *pageStats) (string, error) {
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.Tool, Arguments: args})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("page %d: %s", st.Pages, textOf(res))
		}
		st.Pages++
		n := len(textOf(res))
		st.TextBytes += n
		st.MaxTextBytes = max(st.MaxTextBytes, n)
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return "", err
		}
		w.Write(append(b, '\n'))
		var sc struct {
			Older string `json:"older_cursor"`
			Next  string `json:"next_cursor"`
			More  bool   `json:"more"`
		}
		json.Unmarshal(b, &sc)
		next := ""
		switch {
		case follow == "older":
			next = sc.Older
		case follow == "next" && sc.More:
			next = sc.Next
		}
		if next == "" {
			return sc.Next, w.Flush()
		}
		args = map[string]any{"terminal_id": args["terminal_id"], "cursor": next}
		if mb, ok := s.Args["max_bytes"]; ok {
			args["max_bytes"] = mb
		}
	}
}

// textOf joins a result's text content.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
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
// stepResults are the call steps' structuredContent, by step, for
// "$STEP:N.path" arguments.
var stepResults = map[int]any{}

// fromStep reads "N.a.b" (the field a.b of step N's structuredContent, as
// JSON decodes it) for an argument "$STEP:N.a.b"; nil when absent.
func fromStep(ref string) any {
	parts := strings.Split(ref, ".")
	n, err := strconv.Atoi(parts[0])
	if err != nil {
		return nil
	}
	b, _ := json.Marshal(stepResults[n])
	var v any
	json.Unmarshal(b, &v)
	for _, p := range parts[1:] {
		if l, ok := v.([]any); ok {
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= len(l) {
				return nil
			}
			v = l[n]
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func expand(args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if v == "$PHANTOM_TAB_ID" {
			v = os.Getenv("PHANTOM_TAB_ID")
		}
		if s, ok := v.(string); ok && strings.HasPrefix(s, "$STEP:") {
			v = fromStep(strings.TrimPrefix(s, "$STEP:"))
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
