package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald"
)

// TestReadOutputSpeed measures a 100,000-line read (about 8 MB) through
// read_output: by the official MCP Go SDK client in a tab, all pages at the
// default bound (each page a tool call through the gateway and authz), by
// `phantom read -n 100000`, and over gRPC straight to terminald. It reports
// figures and asserts only that the reads are complete. Set
// PHANTOM_BENCH=1 to run it.
func TestReadOutputSpeed(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	env, _ := up(t)
	dir := t.TempDir()
	want, _ := readTestData(t, dir, 100000)
	want = append(want, "END-OF-A")
	tc, _ := humanClients(t, env)
	resp, err := tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{
		Directory: dir, Cols: 400, Rows: 24, Command: []string{"sh", "-c", "cat a.txt; echo END-OF-A; exec sleep 3600"}})
	if err != nil {
		t.Fatal(err)
	}
	tab := resp.GetTerminal().GetId()
	eventually(t, "END-OF-A", func() (bool, string) {
		r, err := tc.ReadOutput(tctx(t), &terminalv1.ReadOutputRequest{TerminalId: tab, Lines: proto.Int32(2)})
		return err == nil && slices.Contains(r.GetLines(), "END-OF-A"), fmt.Sprint(err, r.GetLines())
	})
	want = want[len(want)-100000:]
	textBytes := len(strings.Join(want, "\n")) + 1

	out := t.TempDir()
	ready := filepath.Join(out, "ready")
	const runs = 5
	script := []map[string]any{{"op": "wait", "file": ready}}
	for i := range runs {
		script = append(script, map[string]any{"op": "pages", "tool": "read_output", "follow": "older",
			"out": filepath.Join(out, fmt.Sprint(i)), "args": map[string]any{"terminal_id": tab, "lines": 100000}})
	}
	_, read := runAgent(t, env, script)
	stop := make(chan struct{})
	defer close(stop)
	answerSheets(t, env, "read_output", stop)
	os.WriteFile(ready, nil, 0o600)
	var mcpTimes []time.Duration
	for i := range runs {
		step := waitStepWithin(t, read, i+1, 3*time.Minute)
		var st struct {
			Pages     int   `json:"pages"`
			TextBytes int   `json:"text_bytes"`
			Millis    int64 `json:"ms"`
		}
		if err := json.Unmarshal(step.Result, &st); err != nil || step.Error != "" {
			t.Fatalf("pages: %v %s", err, step.Error)
		}
		pages := readPagesFile(t, filepath.Join(out, fmt.Sprint(i)))
		slices.Reverse(pages)
		if err := sameLines(joinPages(t, pages, terminald.DefaultReadBytes), want); err != nil {
			t.Fatalf("MCP read %d: %v", i, err)
		}
		mcpTimes = append(mcpTimes, time.Duration(st.Millis)*time.Millisecond)
		t.Logf("MCP read_output, 100,000 lines, run %d: %d pages, %d ms, %d bytes of lines, %d bytes of tool results",
			i, st.Pages, st.Millis, textBytes, st.TextBytes)
	}
	// The same pages over a raw connection to the MCP socket from this
	// process: no bridge, no SDK client decoding.
	c, br := dialInitialized(t, env.Layout.MCPSocket)
	var raw []time.Duration
	for range runs {
		start := time.Now()
		args := map[string]any{"terminal_id": tab, "lines": 100000}
		n := 0
		for id := 1; ; id++ {
			req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
				"params": map[string]any{"name": "read_output", "arguments": args}})
			c.Write(append(req, '\n'))
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Result struct {
					IsError           bool     `json:"isError"`
					StructuredContent readPage `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.Result.IsError {
				t.Fatalf("raw read_output: %v %.300s", err, l)
			}
			n += len(r.Result.StructuredContent.Lines)
			if r.Result.StructuredContent.OlderCursor == "" {
				break
			}
			args = map[string]any{"terminal_id": tab, "cursor": r.Result.StructuredContent.OlderCursor}
		}
		raw = append(raw, time.Since(start))
		if n < 100000 {
			t.Fatalf("raw MCP pages brought %d lines", n)
		}
	}
	var cli, grpc []time.Duration
	for range runs {
		start := time.Now()
		r := phantom(t, env, "read", tab, "-n", "100000")
		cli = append(cli, time.Since(start))
		if r.code != 0 || len(r.stdout) != textBytes {
			t.Fatalf("phantom read: exit %d, %d bytes, want %d", r.code, len(r.stdout), textBytes)
		}
		start = time.Now()
		req := &terminalv1.ReadOutputRequest{TerminalId: tab, Lines: proto.Int32(100000)}
		n := 0
		for {
			resp, err := tc.ReadOutput(tctx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			n += len(resp.GetLines())
			if resp.GetOlderCursor() == "" {
				break
			}
			req = &terminalv1.ReadOutputRequest{TerminalId: tab, Cursor: resp.GetOlderCursor()}
		}
		grpc = append(grpc, time.Since(start))
		if n < 100000 {
			t.Fatalf("gRPC pages brought %d lines", n)
		}
	}
	t.Logf("100,000 lines (%d bytes), median of %d:", textBytes, runs)
	t.Logf("  MCP read_output, 64 KiB pages, Go SDK client in a tab: %s", median(mcpTimes))
	t.Logf("  MCP read_output, 64 KiB pages, raw socket from the test:  %s", median(raw))
	t.Logf("  gRPC ReadOutput, 64 KiB pages, straight to terminald:    %s", median(grpc))
	t.Logf("  phantom read -n 100000 (1 MiB pages, process start incl.): %s", median(cli))
}
