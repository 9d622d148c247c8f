package gateway

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	phantomproto "github.com/phantom-dev/phantom/proto/phantom"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
	// The services whose methods are tools register themselves here.
	_ "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	_ "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// serviceDaemons is the one table from a proto package to the daemon that
// serves its services.
var serviceDaemons = map[protoreflect.FullName]string{
	"phantom.terminal.v1": "terminald",
	"phantom.editor.v1":   "editord",
	"phantom.lsp.v1":      "lspd",
	"phantom.git.v1":      "gitd",
}

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
	// listing is the tool as tools/list shows it.
	listing *mcp.Tool
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

// buildTools walks every registered file for methods carrying the tool
// option. Descriptions come from the protos' comments (the embedded
// descriptors); a method whose package no daemon serves is an error, as is
// a tool name used twice.
func buildTools() (*toolTable, error) {
	set, err := phantomproto.Descriptors()
	if err != nil {
		return nil, err
	}
	docs := readComments(set)
	t := &toolTable{byName: map[string]*tool{}}
	var ferr error
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		svcs := fd.Services()
		for i := 0; i < svcs.Len(); i++ {
			methods := svcs.Get(i).Methods()
			for j := 0; j < methods.Len(); j++ {
				if err := t.add(methods.Get(j), docs); err != nil {
					ferr = err
					return false
				}
			}
		}
		return true
	})
	if ferr != nil {
		return nil, ferr
	}
	return t, nil
}

// add adds m to the table if it carries the tool option.
func (t *toolTable) add(m protoreflect.MethodDescriptor, docs comments) error {
	opt, ok := proto.GetExtension(m.Options(), mcpv1.E_Tool).(*mcpv1.Tool)
	if !ok || opt == nil || opt.GetName() == "" {
		return nil
	}
	if m.IsStreamingClient() || m.IsStreamingServer() {
		return fmt.Errorf("method %s: a streaming method cannot be a tool", m.FullName())
	}
	if _, dup := t.byName[opt.GetName()]; dup {
		return fmt.Errorf("method %s: tool name %q used twice", m.FullName(), opt.GetName())
	}
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	daemon, ok := serviceDaemons[svc.ParentFile().Package()]
	if !ok {
		return fmt.Errorf("method %s: no daemon serves package %s", m.FullName(), svc.ParentFile().Package())
	}
	in, err := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
	if err != nil {
		return fmt.Errorf("method %s: request type: %w", m.FullName(), err)
	}
	out, err := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
	if err != nil {
		return fmt.Errorf("method %s: response type: %w", m.FullName(), err)
	}
	hidden := map[protoreflect.Name]bool{}
	for _, h := range opt.GetHiddenFields() {
		if m.Input().Fields().ByName(protoreflect.Name(h)) == nil {
			return fmt.Errorf("method %s: hidden field %q is not a field of %s", m.FullName(), h, m.Input().FullName())
		}
		hidden[protoreflect.Name(h)] = true
	}
	inSchema, err := json.Marshal(messageSchema(m.Input(), hidden, docs, 0))
	if err != nil {
		return fmt.Errorf("method %s: encode input schema: %w", m.FullName(), err)
	}
	outSchema, err := json.Marshal(outputSchema(m.Output(), docs, 0))
	if err != nil {
		return fmt.Errorf("method %s: encode output schema: %w", m.FullName(), err)
	}
	desc := docs[m.FullName()]
	if opt.GetNeedsTab() {
		desc += "\n\nThe caller must run inside a Phantom tab."
	}
	t.byName[opt.GetName()] = &tool{
		name:   opt.GetName(),
		daemon: daemon,
		method: "/" + string(svc.FullName()) + "/" + string(m.Name()),
		input:  in,
		output: out,
		opt:    opt,
		hidden: hidden,
		listing: &mcp.Tool{
			Name:         opt.GetName(),
			Description:  desc,
			InputSchema:  json.RawMessage(inSchema),
			OutputSchema: json.RawMessage(outSchema),
			Annotations:  annotations(opt),
		},
	}
	return nil
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
