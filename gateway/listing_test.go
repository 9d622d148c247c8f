package gateway

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/phantom-dev/phantom/internal/toolreg"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// maxToolsList is the most bytes the tools/list result of the whole
// registry may take: a model reads it at the start of every session.
const maxToolsList = 40 << 10

// listing is the tools/list result as the SDK writes it, and its tools.
func listing(t *testing.T) ([]byte, *toolTable) {
	t.Helper()
	tools, err := buildTools()
	if err != nil {
		t.Fatal(err)
	}
	var l []*mcp.Tool
	for _, tl := range tools.sorted() {
		l = append(l, tl.listing)
	}
	b, err := json.Marshal(&mcp.ListToolsResult{Tools: l})
	if err != nil {
		t.Fatal(err)
	}
	return b, tools
}

// TestToolsListBudget: the whole registry's tools/list fits the budget,
// and every tool has a title.
func TestToolsListBudget(t *testing.T) {
	b, tools := listing(t)
	t.Logf("tools/list: %d bytes for %d tools", len(b), len(tools.byName))
	if len(b) > maxToolsList {
		t.Errorf("tools/list is %d bytes, more than %d: say things once (output_schema.go), shorten descriptions", len(b), maxToolsList)
	}
	for _, tl := range tools.sorted() {
		if strings.TrimSpace(tl.listing.Title) == "" {
			t.Errorf("tool %s has no title", tl.name)
		}
	}
}

// TestListingWords: enums are plain lower-case words in every schema and
// an argument never offers an unspecified value; no description (of a
// tool or of a schema's field) names a gRPC method or a protobuf enum
// value instead of a tool or a word.
func TestListingWords(t *testing.T) {
	_, tools := listing(t)
	var methods, values []string
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "phantom.") {
			return true
		}
		for i := range fd.Services().Len() {
			ms := fd.Services().Get(i).Methods()
			for j := range ms.Len() {
				methods = append(methods, string(ms.Get(j).Name()))
			}
		}
		return true
	})
	protoregistry.GlobalTypes.RangeEnums(func(et protoreflect.EnumType) bool {
		if strings.HasPrefix(string(et.Descriptor().FullName()), "phantom.") {
			vals := et.Descriptor().Values()
			for i := range vals.Len() {
				values = append(values, string(vals.Get(i).Name()))
			}
		}
		return true
	})
	named := regexp.MustCompile(`\b(` + strings.Join(append(methods, values...), "|") + `)\b`)
	word := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	for _, tl := range tools.sorted() {
		if m := named.FindString(tl.listing.Description); m != "" {
			t.Errorf("tool %s's description names %s", tl.name, m)
		}
		for which, raw := range map[string]any{"inputSchema": tl.listing.InputSchema, "outputSchema": tl.listing.OutputSchema} {
			var s any
			json.Unmarshal(raw.(json.RawMessage), &s)
			walkSchema(s, func(node map[string]any) {
				if d, ok := node["description"].(string); ok {
					if m := named.FindString(d); m != "" {
						t.Errorf("tool %s: a description in its %s names %s: %q", tl.name, which, m, d)
					}
				}
				enum, _ := node["enum"].([]any)
				for _, v := range enum {
					if s, _ := v.(string); !word.MatchString(s) || which == "inputSchema" && s == "unspecified" {
						t.Errorf("tool %s: %s offers enum value %v; want plain lower-case words, no unspecified argument", tl.name, which, v)
					}
				}
			})
		}
	}
}

// walkSchema calls fn on every object of a decoded JSON value.
func walkSchema(v any, fn func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(v)
		for _, c := range v {
			walkSchema(c, fn)
		}
	case []any:
		for _, c := range v {
			walkSchema(c, fn)
		}
	}
}

// TestDescriptionsSay: a tool needing a permission says it may wait for
// the human (read_output of the caller's own tab too); a free one does
// not; the editor's tools say they act on the window's editor; the
// server's instructions name every tool that may wait.
func TestDescriptionsSay(t *testing.T) {
	_, tools := listing(t)
	instr := serverInstructions(tools)
	// "… gives. add_worktree, …, tidy_worktrees may wait for the human …"
	i := strings.Index(instr, " may wait for the human")
	if i < 0 {
		t.Fatalf("the instructions do not say which tools may wait for the human: %s", instr)
	}
	asking := strings.Split(instr[strings.LastIndex(instr[:i], ". ")+2:i], ", ")
	for _, tl := range tools.sorted() {
		d := tl.listing.Description
		waits := strings.Contains(d, "May wait for the human on a permission sheet")
		if free := toolreg.Free(tl.reg.Capability); waits == free {
			t.Errorf("tool %s (free: %v) says it may wait for the human: %v\n%s", tl.name, free, waits, d)
		}
		if slices.Contains(asking, tl.name) == toolreg.Free(tl.reg.Capability) {
			t.Errorf("the instructions name %v as the tools that may wait for the human; %s is free: %v", asking, tl.name, toolreg.Free(tl.reg.Capability))
		}
		if tl.daemon == "editord" && !strings.Contains(d, "Acts on the window's editor (Neovim") {
			t.Errorf("editor tool %s does not say it acts on the window's editor:\n%s", tl.name, d)
		}
	}
	if d := tools.byName["read_output"].listing.Description; !strings.Contains(d, "needs the read permission for the tab in terminal_id, the caller's own too") {
		t.Errorf("read_output's description does not say its own tab asks too:\n%s", d)
	}
	if d := tools.byName["run_command"].listing.Description; !strings.Contains(d, "needs the run permission (and read with wait_seconds)") {
		t.Errorf("run_command's description does not say wait_seconds needs read too:\n%s", d)
	}
	if strings.Contains(instr, "later") || !strings.Contains(instr, "editor") {
		t.Errorf("instructions out of date: %s", instr)
	}
}

// TestEnumWords: words are derived from the enums, arguments by word
// reach the daemon as the values, and results say words on every path
// (the plan, the wire plan, protojson).
func TestEnumWords(t *testing.T) {
	for _, tt := range []struct {
		ed   protoreflect.EnumDescriptor
		args []string
	}{
		{gitv1.TidyAction_KIND_PRUNE.Descriptor(), []string{"prune", "repair", "move", "lock", "unlock"}},
		{terminalv1.AgentState_AGENT_STATE_IDLE.Descriptor(), []string{"idle", "working", "waiting_for_permission"}},
	} {
		if got := enumWordsFor(tt.ed, true); strings.Join(got, " ") != strings.Join(tt.args, " ") {
			t.Errorf("%s: argument words %v, want %v", tt.ed.FullName(), got, tt.args)
		}
		if got := enumWordsFor(tt.ed, false); got[0] != "unspecified" || len(got) != len(tt.args)+1 {
			t.Errorf("%s: result words %v, want unspecified and %v", tt.ed.FullName(), got, tt.args)
		}
	}

	tools, _ := buildTools()
	v, _ := protovalidate.New()
	msg, err := decodeArgs(tools.byName["tidy_worktrees"], json.RawMessage(`{"actions":[{"kind":"move","path":"a","new_path":"b"},{"kind":"prune"}]}`), v)
	if err != nil {
		t.Fatal(err)
	}
	if a := msg.(*gitv1.TidyWorktreesRequest).GetActions(); len(a) != 2 || a[0].GetKind() != gitv1.TidyAction_KIND_MOVE || a[1].GetKind() != gitv1.TidyAction_KIND_PRUNE {
		t.Errorf("decoded actions %v, want move then prune", a)
	}

	resp := &gitv1.TidyWorktreesResponse{Results: []*gitv1.TidyResult{{Action: &gitv1.TidyAction{Kind: gitv1.TidyAction_KIND_UNLOCK}}}}
	list := &terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{{Id: "t1", AgentState: terminalv1.AgentState_AGENT_STATE_WAITING_FOR_PERMISSION}}}
	j, _ := resultJSON(resp)
	slow := protojsonWords(t, list)
	wire := newWirePlan(list.ProtoReflect().Type())
	wb, _ := proto.Marshal(list)
	wj, _, err := wire.encode(wb)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"plan": j, "protojson": slow, "wire": wj} {
		if regexp.MustCompile(`[A-Z]{2,}_`).Match(got) || !(strings.Contains(string(got), `"kind":"unlock"`) ||
			strings.Contains(string(got), `"agent_state":"waiting_for_permission"`)) {
			t.Errorf("%s path wrote %s; want enums as words", name, got)
		}
	}
}

// TestOutputSchemaShapes: a message repeated in one schema is defined
// once and referenced, and the reference is followed when validating; a
// message several tools return points, outside its home, to the home,
// which spells it out where the pointer says.
func TestOutputSchemaShapes(t *testing.T) {
	_, tools := listing(t)
	raw := tools.byName["tidy_worktrees"].listing.OutputSchema.(json.RawMessage)
	if !strings.Contains(string(raw), `"$defs":{"TidyItem"`) || strings.Count(string(raw), `"$ref":"#/$defs/TidyItem"`) != 5 {
		t.Fatalf("tidy_worktrees' outputSchema does not define TidyItem once and reference it 5 times: %s", raw)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		result string
		ok     bool
	}{
		{`{"report":{"prunable":[{"path":"/a","branch":"b","detail":""}]},"results":[],"worktree_folder":"","notes":[]}`, true},
		{`{"report":{"prunable":[{"path":"/a","branch":5,"detail":""}]},"results":[],"worktree_folder":"","notes":[]}`, false},
	} {
		var v any
		json.Unmarshal([]byte(tt.result), &v)
		if err := rs.Validate(v); (err == nil) != tt.ok {
			t.Errorf("%s validates: %v, want ok %v", tt.result, err, tt.ok)
		}
	}

	homes := findOutputHomes(mustRegistry(t).Tools())
	if h := homes["phantom.terminal.v1.Terminal"]; h.tool != "list_terminals" || h.path != "terminals[]" {
		t.Errorf("Terminal's home is %+v, want list_terminals at terminals[]", h)
	}
	if d := string(tools.byName["create_terminal"].listing.OutputSchema.(json.RawMessage)); !strings.Contains(d, "As in the outputSchema of list_terminals: terminals[].") {
		t.Errorf("create_terminal's outputSchema does not point to list_terminals for the tab: %s", d)
	}
	for md, h := range homes {
		var s any
		json.Unmarshal(tools.byName[h.tool].listing.OutputSchema.(json.RawMessage), &s)
		node := s.(map[string]any)
		for _, seg := range strings.Split(h.path, ".") {
			name := strings.TrimSuffix(strings.TrimSuffix(seg, "[]"), "{}")
			node = resolveNode(s, node["properties"].(map[string]any)[name].(map[string]any))
		}
		if _, ok := node["properties"]; !ok {
			t.Errorf("%s's home %s does not spell it out at %s: %v", md, h.tool, h.path, node)
		}
	}
}

// resolveNode follows a field's schema to the object it holds: through
// anyOf (nullable), items, additionalProperties and $ref.
func resolveNode(root any, n map[string]any) map[string]any {
	for {
		switch {
		case n["anyOf"] != nil:
			n = n["anyOf"].([]any)[0].(map[string]any)
		case n["items"] != nil:
			n = n["items"].(map[string]any)
		case n["type"] == "object" && n["additionalProperties"] != nil && n["properties"] == nil:
			n = n["additionalProperties"].(map[string]any)
		case n["$ref"] != nil:
			name := strings.TrimPrefix(n["$ref"].(string), "#/$defs/")
			n = root.(map[string]any)["$defs"].(map[string]any)[name].(map[string]any)
		default:
			return n
		}
	}
}

func mustRegistry(t *testing.T) *toolreg.Registry {
	t.Helper()
	reg, err := toolreg.Default()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
