package toolreg

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestWaitDescribe: a tool's stated wait reads as the progress message
// needs it, its fields filled in, its bound the request's or the default.
func TestWaitDescribe(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool      string
		req       proto.Message
		what      string
		bound     time.Duration
		noWaitFor bool
	}{
		{"run_command", &terminalv1.RunCommandRequest{TerminalId: "t3", Command: "make test", WaitSeconds: 120},
			"`make test` to finish in tab t3", 120 * time.Second, false},
		{"run_command", &terminalv1.RunCommandRequest{TerminalId: "t3", Command: strings.Repeat("x", 200)},
			"`" + strings.Repeat("x", 79) + "…` to finish in tab t3", 0, false},
		{"read_output", &terminalv1.ReadOutputRequest{TerminalId: "t1", WaitFor: "idle"},
			"`idle` in tab t1", 30 * time.Second, false},
		{"read_output", &terminalv1.ReadOutputRequest{TerminalId: "t1", WaitFor: "ready", WaitSeconds: proto.Int32(5)},
			"`ready` in tab t1", 5 * time.Second, false},
		{"list_diagnostics", &lspv1.ListDiagnosticsRequest{WaitMs: 1500}, "the language servers to settle their diagnostics", 1500 * time.Millisecond, false},
		{"restart_language_server", &lspv1.RestartLanguageServerRequest{ServerId: "go:/w"}, "language server go:/w to start again", 70 * time.Second, false},
		{"list_terminals", &terminalv1.ListTerminalsRequest{}, "", 0, true},
	}
	for _, tt := range tests {
		tl, ok := reg.ByName(tt.tool)
		if !ok {
			t.Fatalf("no tool %s", tt.tool)
		}
		if tt.noWaitFor {
			if tl.Wait != nil {
				t.Errorf("%s states a wait: %+v", tt.tool, tl.Wait)
			}
			continue
		}
		what, bound := tl.Wait.Describe(tt.req.ProtoReflect())
		if what != tt.what || bound != tt.bound {
			t.Errorf("%s: Describe = %q, %v; want %q, %v", tt.tool, what, bound, tt.what, tt.bound)
		}
	}
}

// TestLoadWait: a stated wait that names what the request lacks, or a
// bound that is no integer, states no unit or has no maximum, does not
// load.
func TestLoadWait(t *testing.T) {
	waiting := func(what string, b *mcpv1.WaitBound) *mcpv1.Tool {
		tl := rule("t", none, noReach, "")
		tl.WaitsFor, tl.WaitBound = what, b
		return tl
	}
	tests := []struct {
		name string
		tool *mcpv1.Tool
		err  string
	}{
		{"fixed bound", waiting("{target} to be done", &mcpv1.WaitBound{DefaultSeconds: 9}), ""},
		{"unknown placeholder", waiting("{nope}", nil), `waits_for field "nope" is not a field`},
		{"list placeholder", waiting("{args}", nil), `waits_for field "args"|repeated string`},
		{"bound not an integer", waiting("x", &mcpv1.WaitBound{Field: "target"}), `wait_bound field "target"|not an integer`},
		{"bound without unit", waiting("x", &mcpv1.WaitBound{Field: "count"}), `wait_bound field "count": its name must say its unit`},
		{"bound without wait", waiting("", &mcpv1.WaitBound{DefaultSeconds: 1}), `wait_bound without waits_for`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := Load(fixture{daemon: "fixtured", tools: []*mcpv1.Tool{tt.tool}}.files(t))
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				tl, _ := reg.ByName("t")
				msg := tl.Request.New()
				msg.Set(tl.Request.Descriptor().Fields().ByName("target"), protoreflect.ValueOfString("x1"))
				if what, bound := tl.Wait.Describe(msg); what != "x1 to be done" || bound != 9*time.Second {
					t.Errorf("Describe = %q, %v", what, bound)
				}
				return
			}
			wantLoadError(t, err, tt.err)
		})
	}
}
