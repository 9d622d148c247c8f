// Package toolreg is Phantom's one tool registry, read from the protos. A
// gRPC method is an MCP tool when it carries the (phantom.mcp.v1.tool)
// option, and its service names the daemon serving it with the
// (phantom.mcp.v1.daemon) option. Everything else about a tool — its
// annotations, the fields hidden from agents, the capability it needs,
// the request field that decides its reach and the fields the permission
// sheet shows — is in that option, checked once when the registry loads.
// The gateway (listing, routing, schemas), the daemons' guard (method →
// tool) and authz's policy all read this registry.
//
// Adding a tool is a proto change (the option) and a handler; a service in
// a new proto package also needs its Go package imported in services.go.
package toolreg

import (
	"fmt"
	"sort"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// Tool is one MCP tool: a unary gRPC method carrying the tool option.
type Tool struct {
	// Name is the MCP tool name, e.g. "read_output".
	Name string
	// Daemon serves the method, e.g. "terminald".
	Daemon string
	// Method is the gRPC method path, "/pkg.Service/Method".
	Method string
	// Descriptor is the method.
	Descriptor protoreflect.MethodDescriptor
	// Request and Response are the method's message types.
	Request, Response protoreflect.MessageType
	// Option is the method's tool option as written in the proto.
	Option *mcpv1.Tool
	// Capability is what a call needs; CAPABILITY_NONE for a free tool.
	Capability mcpv1.Capability
	// Reach is how a call's reach is decided.
	Reach Reach
	// Subject are the request fields the permission sheet shows besides
	// the reach target, in the option's order.
	Subject []protoreflect.FieldDescriptor
	// Hidden are the request fields agents may not set.
	Hidden map[protoreflect.Name]bool
	// Also are the capabilities a call needs besides Capability when a
	// request field is set (the option's `also`).
	Also []Also
	// FreeForOpenedTabs is true when a call needs no grant while the tab
	// its reach field names is one the caller opened, or one opened for
	// such a tab (the option's free_for_opened_tabs): authz's policy
	// decides it, for every tool alike.
	FreeForOpenedTabs bool
	// Wait is what a call may wait for (the option's waits_for); nil for
	// a tool that answers at once.
	Wait *Wait
}

// Also is a further capability a call needs when Field is set (not its
// zero value).
type Also struct {
	Capability mcpv1.Capability
	Field      protoreflect.FieldDescriptor
}

// Reach is how far a call reaches, decided by one request field.
type Reach struct {
	// Kind is what the field names: a tab, a directory, or nothing.
	Kind mcpv1.ReachKind
	// Field is the request's singular string field naming the target;
	// nil when Kind is REACH_KIND_NONE.
	Field protoreflect.FieldDescriptor
}

// Registry is every tool, by name and by method.
type Registry struct {
	byName   map[string]*Tool
	byMethod map[string]*Tool
	sorted   []*Tool
}

// ByName returns the tool called name.
func (r *Registry) ByName(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// ByMethod returns the tool served by the gRPC method path
// "/pkg.Service/Method".
func (r *Registry) ByMethod(method string) (*Tool, bool) {
	t, ok := r.byMethod[method]
	return t, ok
}

// Tools returns every tool, sorted by name. The slice is shared: do not
// change it.
func (r *Registry) Tools() []*Tool { return r.sorted }

// ForFile returns the tools whose methods are declared in fd. A method of
// fd carrying the tool option that the registry lacks (its Go package is
// not imported in services.go) is an error.
func (r *Registry) ForFile(fd protoreflect.FileDescriptor) ([]*Tool, error) {
	var out []*Tool
	svcs := fd.Services()
	for i := range svcs.Len() {
		ms := svcs.Get(i).Methods()
		for j := range ms.Len() {
			m := ms.Get(j)
			opt, _ := proto.GetExtension(m.Options(), mcpv1.E_Tool).(*mcpv1.Tool)
			if opt.GetName() == "" {
				continue
			}
			t, ok := r.byMethod["/"+string(svcs.Get(i).FullName())+"/"+string(m.Name())]
			if !ok {
				return nil, fmt.Errorf("tool %q (%s) is not in the tool registry: import its Go package in internal/toolreg/services.go",
					opt.GetName(), m.FullName())
			}
			out = append(out, t)
		}
	}
	return out, nil
}

func (r *Registry) add(t *Tool) {
	r.byName[t.Name] = t
	r.byMethod[t.Method] = t
	r.sorted = append(r.sorted, t)
}

// sort orders Tools by name, once loaded.
func (r *Registry) sort() {
	sort.Slice(r.sorted, func(i, j int) bool { return r.sorted[i].Name < r.sorted[j].Name })
}

var (
	defaultOnce sync.Once
	defaultReg  *Registry
	defaultErr  error
)

// Default is the registry of every tool compiled into Phantom (the proto
// packages imported in services.go), loaded on first use.
func Default() (*Registry, error) {
	defaultOnce.Do(func() { defaultReg, defaultErr = Load(protoregistry.GlobalFiles) })
	return defaultReg, defaultErr
}
