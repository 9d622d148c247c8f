package servers

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/lspd/lsp"
)

// fakeEnv, set in its environment, makes the test binary the fake
// language server instead of running tests (see TestMain).
const fakeEnv = "PHANTOM_FAKE_LSP"

// fakeServer is a language server the tests script through the documents
// they give it. Each line of a document opened or changed is a directive,
// run in order:
//
//	error: MSG   a diagnostic, published by the next publish
//	publish      publishes the diagnostics for this version
//	publish-old  publishes them for the version before (a late publish)
//	begin, end   begins or ends a progress token
//	sleep DUR    works (reads nothing) for DUR
//	crash-once   exits with status 3, the first time only
//	hang-once    stops reading and answering, the first time only
//
// FAKE_LSP_DIR names a directory where each start is recorded (one line
// of Unix nanoseconds in "starts") and the "once" directives remember
// they ran; FAKE_LSP_EXIT_AT_START makes every start fail at once.
func fakeServer() int {
	dir := os.Getenv("FAKE_LSP_DIR")
	if f, err := os.OpenFile(filepath.Join(dir, "starts"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintln(f, time.Now().UnixNano())
		f.Close()
	}
	if os.Getenv("FAKE_LSP_EXIT_AT_START") != "" {
		fmt.Fprintln(os.Stderr, "fake: told to exit at start")
		return 3
	}
	in := bufio.NewReader(os.Stdin)
	send := func(m map[string]any) {
		m["jsonrpc"] = "2.0"
		b, _ := json.Marshal(m)
		_ = lsp.WriteMessage(os.Stdout, b)
	}
	once := func(what string) bool {
		f, err := os.OpenFile(filepath.Join(dir, "once-"+what), os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return false
		}
		f.Close()
		return true
	}
	for {
		body, err := lsp.ReadMessage(in)
		if err != nil {
			return 0
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TextDocument   lsp.TextDocumentItem `json:"textDocument"`
				ContentChanges []lsp.ContentChange  `json:"contentChanges"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		doc := m.Params.TextDocument
		switch m.Method {
		case "initialize":
			send(map[string]any{"id": m.ID, "result": map[string]any{"capabilities": map[string]any{"textDocumentSync": 1, "documentSymbolProvider": true}}})
		case "shutdown":
			send(map[string]any{"id": m.ID, "result": nil})
		case "exit":
			return 0
		case "textDocument/documentSymbol":
			send(map[string]any{"id": m.ID, "result": []any{}})
		case "textDocument/didOpen", "textDocument/didChange":
			if len(m.Params.ContentChanges) > 0 {
				doc.Text = m.Params.ContentChanges[0].Text
			}
			var diags []lsp.Diagnostic
			for line := range strings.Lines(doc.Text) {
				verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
				switch verb {
				case "error:":
					diags = append(diags, lsp.Diagnostic{Severity: 1, Message: arg})
				case "publish", "publish-old":
					v := doc.Version
					if verb == "publish-old" {
						v--
					}
					send(map[string]any{"method": "textDocument/publishDiagnostics", "params": lsp.PublishDiagnosticsParams{URI: doc.URI, Version: &v, Diagnostics: diags}})
				case "begin", "end":
					send(map[string]any{"method": "$/progress", "params": map[string]any{"token": "work", "value": map[string]string{"kind": verb, "title": "work"}}})
				case "sleep":
					d, _ := time.ParseDuration(arg)
					time.Sleep(d)
				case "crash-once":
					if once("crash") {
						fmt.Fprintln(os.Stderr, "fake: crashing as told")
						return 3
					}
				case "hang-once":
					if once("hang") {
						time.Sleep(time.Hour)
					}
				}
			}
		default:
			if len(m.ID) > 0 && m.Method != "" {
				send(map[string]any{"id": m.ID, "error": map[string]any{"code": lsp.MethodNotFound, "message": "fake: no " + m.Method}})
			}
		}
	}
}

// fakeStarts are the times the fake server started, from its record in
// dir.
func fakeStarts(dir string) ([]time.Time, error) {
	b, err := os.ReadFile(filepath.Join(dir, "starts"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, l := range strings.Fields(string(b)) {
		ns, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("fake server starts %s: %w", dir, err)
		}
		out = append(out, time.Unix(0, ns))
	}
	return out, nil
}
