package gateway

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/toolreg"
	phantomproto "github.com/phantom-dev/phantom/proto/phantom"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// tool is one MCP tool: a gRPC method carrying the phantom.mcp.v1.tool
// option.
type tool struct {
	// name is the MCP tool name.
	name string
	// daemon serves the method.
	daemon string
	// method is the gRPC method path, /pkg.Service/Method.
	method string
	// input and output are the request and response types.
	input, output protoreflect.MessageType
	// opt is the tool option.
	opt *mcpv1.Tool
	// hidden are the request fields agents may not set.
	hidden map[protoreflect.Name]bool
	// wait is what a call may wait for; nil for a tool that answers at
	// once.
	wait *toolreg.Wait
	// listing is the tool as tools/list shows it.
	listing *mcp.Tool
	// reg is the tool as the registry has it.
	reg *toolreg.Tool
	// wire, for an answer with top-level lists, writes its JSON from the
	// wire form (cost_wire.go); nil otherwise.
	wire *wirePlan
}

// toolTable is every tool, by name.
type toolTable struct {
	byName map[string]*tool
}

// sorted is every tool, by name.
func (t *toolTable) sorted() []*tool {
	tools := make([]*tool, 0, len(t.byName))
	for _, tl := range t.byName {
		tools = append(tools, tl)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].name < tools[j].name })
	return tools
}

// buildTools builds the tool table from the tool registry
// (internal/toolreg): each tool's name, daemon, method, types and hidden
// fields are the registry's; its listing adds the schemas derived from the
// request and response messages and the description from the method's
// proto comment (the embedded descriptors) and the registry (describe.go).
func buildTools() (*toolTable, error) {
	reg, err := toolreg.Default()
	if err != nil {
		return nil, err
	}
	set, err := phantomproto.Descriptors()
	if err != nil {
		return nil, err
	}
	docs := readComments(set)
	t := &toolTable{byName: map[string]*tool{}}
	homes := findOutputHomes(reg.Tools())
	for _, rt := range reg.Tools() {
		tl, err := newTool(rt, docs, homes)
		if err != nil {
			return nil, err
		}
		t.byName[tl.name] = tl
	}
	return t, nil
}

// newTool is the gateway's view of a registry tool.
func newTool(rt *toolreg.Tool, docs comments, homes outputHomes) (*tool, error) {
	m := rt.Descriptor
	inSchema, err := json.Marshal(messageSchema(m.Input(), rt.Hidden, docs, 0))
	if err != nil {
		return nil, fmt.Errorf("tool %s: encode input schema: %w", rt.Name, err)
	}
	outSchema, err := json.Marshal(outputSchema(rt.Name, m.Output(), homes))
	if err != nil {
		return nil, fmt.Errorf("tool %s: encode output schema: %w", rt.Name, err)
	}
	return &tool{
		name:   rt.Name,
		daemon: rt.Daemon,
		method: rt.Method,
		input:  rt.Request,
		output: rt.Response,
		opt:    rt.Option,
		hidden: rt.Hidden,
		reg:    rt,
		wait:   rt.Wait,
		wire:   newWirePlan(rt.Response),
		listing: &mcp.Tool{
			Name:         rt.Name,
			Title:        rt.Option.GetTitle(),
			Description:  toolDescription(rt, docs),
			InputSchema:  json.RawMessage(inSchema),
			OutputSchema: json.RawMessage(outSchema),
			Annotations:  annotations(rt.Option),
		},
	}, nil
}

// annotations are the tool's behaviour hints from its option. What the
// option does not say keeps the spec's default: destructiveHint is left
// out for a read-only tool (it means nothing there, the spec says), and
// openWorldHint is left out (true: what a terminal runs reaches anywhere).
func annotations(opt *mcpv1.Tool) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{ReadOnlyHint: opt.GetReadOnly(), IdempotentHint: opt.GetIdempotent()}
	if !opt.GetReadOnly() {
		a.DestructiveHint = new(opt.GetDestructive())
	}
	return a
}
