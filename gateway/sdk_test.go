package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestSDKClient drives the gateway with the official Go SDK client pinned
// to each protocol revision: negotiation, the tool list with both schemas,
// results that validate against their output schemas, an argument error
// as a result naming the schema's field, an unknown tool, progress while
// a call waits on a sheet, and a cancelled call cancelling authz's check.
func TestSDKClient(t *testing.T) {
	g := startFakeGateway(t, 50*time.Millisecond)
	for _, version := range ProtocolVersions {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			var progress []*mcp.ProgressNotificationParams
			cs := connectSDK(t, g.sock, version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, req.Params)
				},
			})
			ctx := context.Background()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}

			outputs := map[string]*jsonschema.Resolved{}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != len(g.s.tools.byName) {
				t.Errorf("tools/list has %d tools, want %d", len(list.Tools), len(g.s.tools.byName))
			}
			for _, tl := range list.Tools {
				if in, _ := tl.InputSchema.(map[string]any); in["type"] != "object" {
					t.Errorf("%s: inputSchema %v", tl.Name, tl.InputSchema)
				}
				outputs[tl.Name] = resolveSchema(t, tl.OutputSchema)
			}

			call := func(name string, args any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			res := call("list_terminals", nil)
			checkStructured(t, "list_terminals", res, outputs["list_terminals"])

			res = call("read_output", map[string]any{"terminal_id": 42})
			if text := resultText(res); !res.IsError || !strings.Contains(text, "terminal_id must be a string, got 42") || strings.Contains(text, "\u00a0") {
				t.Errorf("read_output with a number for terminal_id = %+v %q, want isError naming terminal_id", res, text)
			}

			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"})
			if werr := (*jsonrpc.Error)(nil); !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("unknown tool: %v, want -32602", err)
			}

			// A call waiting on a sheet: progress until the human answers.
			params := &mcp.CallToolParams{Name: heldTool, Arguments: map[string]any{"terminal_id": "t1"}}
			params.SetProgressToken("wait-" + version)
			results := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(ctx, params)
				if err != nil {
					t.Error(err)
				}
				results <- res
			}()
			<-g.authz.waiting
			waitFor(t, "two progress notifications", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(progress) >= 2
			})
			g.authz.release <- struct{}{}
			checkStructured(t, heldTool, <-results, outputs[heldTool])
			mu.Lock()
			for i, p := range progress {
				if p.ProgressToken != "wait-"+version || p.Progress != float64(i+1) || !strings.Contains(p.Message, "waiting for the human to answer a permission sheet") {
					t.Errorf("progress %d = %+v", i, p)
				}
			}
			mu.Unlock()
			if !g.terminald.sawState(terminalv1.AgentState_AGENT_STATE_WAITING_FOR_PERMISSION) {
				t.Error("the tab never showed the agent waiting for permission")
			}

			// Cancelling the call cancels the permission check.
			cctx, cancel := context.WithCancel(ctx)
			errs := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: heldTool, Arguments: map[string]any{"terminal_id": "t1"}})
				errs <- err
			}()
			<-g.authz.waiting
			cancel()
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			select {
			case <-g.authz.cancelled:
			case <-time.After(10 * time.Second):
				t.Error("authz's check was not cancelled with the call")
			}
		})
	}
}

// TestRawProtocol checks the answers to lines a client may send, one at a
// time over a real socket: framing errors answered by the connection,
// unknown methods answered -32601 with the connection kept.
func TestRawProtocol(t *testing.T) {
	g := startFakeGateway(t, time.Second)
	c := dialRaw(t, g.sock)
	for _, tt := range []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, `"id":1,"error":{"code":-32601`},
		{`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
			`"id":"a","result":{"capabilities":{"tools":{}},"instructions"`},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `"id":2,"result":{}`},
		{`not json`, `"id":null,"error":{"code":-32700`},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, `"id":null,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `"id":null,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `"id":null,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, `"id":null,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`, `"id":4,"error":{"code":-32601`},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, `"name":"list_terminals","outputSchema":{`},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}`, `"id":6,"error":{"code":-32602`},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_terminals","arguments":{"a":1}}}`,
			`unknown field \"a\"; it takes no fields`},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_terminals"}}`, `"structuredContent":{"terminals":[`},
	} {
		c.send(tt.send)
		if got := c.next(); !strings.Contains(got, tt.want) {
			t.Errorf("%s\n → %.500s\nwant it to contain %s", tt.send, got, tt.want)
		}
	}
	if got := c.initialize("2025-06-18"); !strings.Contains(got, `"error"`) {
		t.Errorf("a second initialize = %s, want an error", got)
	}
}

// TestCancelledCallNotAnswered checks that a request the client cancelled
// gets no response, and that the connection goes on.
func TestCancelledCallNotAnswered(t *testing.T) {
	g := startFakeGateway(t, time.Second)
	c := dialRaw(t, g.sock)
	c.initialize("2025-06-18")
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + heldTool + `","arguments":{"terminal_id":"t1"}}}`)
	<-g.authz.waiting
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	<-g.authz.cancelled
	time.Sleep(100 * time.Millisecond) // let the cancelled handler return
	c.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if got := c.next(); !strings.Contains(got, `"id":8,"result"`) {
		t.Errorf("after the cancellation got %s, want only the ping's answer", got)
	}
	// An id may be used again once its request is over.
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_terminals"}}`)
	if got := c.next(); !strings.Contains(got, `"id":7,"result"`) || strings.Contains(got, `"isError":true`) {
		t.Errorf("a new call reusing the id got %s", got)
	}
}

// TestDuplicateID checks that a request reusing the id of one in progress
// is refused, and the first is still answered.
func TestDuplicateID(t *testing.T) {
	g := startFakeGateway(t, time.Second)
	c := dialRaw(t, g.sock)
	c.initialize("2025-11-25")
	call := `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"` + heldTool + `","arguments":{"terminal_id":"t1"}}}`
	c.send(call)
	<-g.authz.waiting
	c.send(call)
	if got := c.next(); !strings.Contains(got, `"id":"x","error":{"code":-32600`) {
		t.Errorf("a duplicate id got %s, want -32600", got)
	}
	g.authz.release <- struct{}{}
	if got := c.next(); !strings.Contains(got, `"id":"x","result"`) || !strings.Contains(got, `"lines":["$ make","ok"]`) {
		t.Errorf("the first call got %s", got)
	}
}

// TestConnectionEnd checks that closing a connection ends it in authz and
// clears the tab's agent state.
func TestConnectionEnd(t *testing.T) {
	g := startFakeGateway(t, time.Second)
	cs := connectSDK(t, g.sock, "2025-06-18", nil)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_terminals"}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	select {
	case id := <-g.authz.ended:
		if !strings.HasPrefix(id, "proc-") {
			t.Errorf("EndConnection(%q)", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("authz was not told the connection ended")
	}
	waitFor(t, "the tab's agent state cleared", func() bool {
		return g.terminald.sawState(terminalv1.AgentState_AGENT_STATE_UNSPECIFIED)
	})
}

// resolveSchema resolves a schema as a client received it.
func resolveSchema(t *testing.T, raw any) *jsonschema.Resolved {
	t.Helper()
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("schema %s: %v", b, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("schema %s: %v", b, err)
	}
	return rs
}

// checkStructured checks a successful result: structuredContent valid
// against the tool's output schema and the same JSON as the text block.
func checkStructured(t *testing.T, tool string, res *mcp.CallToolResult, schema *jsonschema.Resolved) {
	t.Helper()
	if res == nil || res.IsError || res.StructuredContent == nil {
		t.Fatalf("%s = %+v (%s), want structured content", tool, res, resultText(res))
	}
	if err := schema.Validate(res.StructuredContent); err != nil {
		t.Errorf("%s: structuredContent %v does not fit its outputSchema: %v", tool, res.StructuredContent, err)
	}
	var fromText any
	if err := json.Unmarshal([]byte(resultText(res)), &fromText); err != nil {
		t.Errorf("%s: text block %q is not JSON", tool, resultText(res))
	}
	a, _ := json.Marshal(fromText)
	b, _ := json.Marshal(res.StructuredContent)
	if string(a) != string(b) {
		t.Errorf("%s: text block %s differs from structuredContent %s", tool, a, b)
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
