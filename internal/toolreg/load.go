package toolreg

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// Load walks every service of files once and registers each method
// carrying the tool option. An incomplete or inconsistent option is an
// error naming the tool and what is wrong: a service with tools but no
// daemon option, a tool without a title, a capability or reach left unstated, a reach, subject or
// hidden field the request does not have (or of the wrong type), a
// streaming method, a name used twice.
func Load(files *protoregistry.Files) (*Registry, error) {
	r := &Registry{byName: map[string]*Tool{}, byMethod: map[string]*Tool{}}
	var err error
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		svcs := fd.Services()
		for i := range svcs.Len() {
			if err = r.addService(svcs.Get(i)); err != nil {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	r.sort()
	return r, nil
}

// addService registers the tools of svc.
func (r *Registry) addService(svc protoreflect.ServiceDescriptor) error {
	daemon, _ := proto.GetExtension(svc.Options(), mcpv1.E_Daemon).(string)
	ms := svc.Methods()
	for i := range ms.Len() {
		m := ms.Get(i)
		opt, ok := proto.GetExtension(m.Options(), mcpv1.E_Tool).(*mcpv1.Tool)
		if !ok || opt == nil || opt.GetName() == "" {
			continue
		}
		if daemon == "" {
			return fmt.Errorf("tool %q (%s): service %s has no (phantom.mcp.v1.daemon) option naming the daemon that serves it",
				opt.GetName(), m.FullName(), svc.FullName())
		}
		t, err := newTool(daemon, m, opt)
		if err != nil {
			return fmt.Errorf("tool %q (%s): %w", opt.GetName(), m.FullName(), err)
		}
		if prev, dup := r.byName[t.Name]; dup {
			return fmt.Errorf("tool %q (%s): the name is already used by %s", t.Name, m.FullName(), prev.Descriptor.FullName())
		}
		r.add(t)
	}
	return nil
}

// newTool checks one method's option and resolves its fields.
func newTool(daemon string, m protoreflect.MethodDescriptor, opt *mcpv1.Tool) (*Tool, error) {
	if m.IsStreamingClient() || m.IsStreamingServer() {
		return nil, fmt.Errorf("a streaming method cannot be a tool")
	}
	if strings.TrimSpace(opt.GetTitle()) == "" {
		return nil, fmt.Errorf("title is not set: give the tool a title a person reads (MCP's Tool.title), e.g. \"Read a terminal's output\"")
	}
	req := m.Input()
	t := &Tool{
		Name:       opt.GetName(),
		Daemon:     daemon,
		Method:     "/" + string(m.Parent().FullName()) + "/" + string(m.Name()),
		Descriptor: m,
		Request:    messageType(req),
		Response:   messageType(m.Output()),
		Option:     opt,
		Capability: opt.GetCapability(),
		Hidden:     map[protoreflect.Name]bool{},

		FreeForOpenedTabs: opt.GetFreeForOpenedTabs(),
	}
	for _, h := range opt.GetHiddenFields() {
		if _, err := field(req, "hidden", h); err != nil {
			return nil, err
		}
		t.Hidden[protoreflect.Name(h)] = true
	}
	var err error
	if t.Reach, err = reach(req, opt); err != nil {
		return nil, err
	}
	if t.FreeForOpenedTabs && t.Reach.Kind != mcpv1.ReachKind_REACH_KIND_TAB {
		return nil, fmt.Errorf("free_for_opened_tabs with reach %s: only a tool whose reach is a tab can be free for the tabs the caller opened", t.Reach.Kind)
	}
	for _, name := range opt.GetSubjectFields() {
		f, err := field(req, "subject", name)
		if err != nil {
			return nil, err
		}
		// A map of scalars (configure_language_server's env) is shown
		// pair by pair.
		shown := f
		if f.IsMap() {
			shown = f.MapValue()
		}
		if shown.Kind() == protoreflect.MessageKind || shown.Kind() == protoreflect.GroupKind {
			return nil, fmt.Errorf("subject field %q of %s is a %s; the sheet shows only scalars, lists of scalars and maps of scalars", name, req.FullName(), kindOf(f))
		}
		t.Subject = append(t.Subject, f)
	}
	for _, a := range opt.GetAlso() {
		f, err := field(req, "also", a.GetWhenSet())
		if err != nil {
			return nil, err
		}
		c := a.GetCapability()
		if c == mcpv1.Capability_CAPABILITY_UNSPECIFIED || mcpv1.Capability_name[int32(c)] == "" || Free(c) || Free(t.Capability) {
			return nil, fmt.Errorf("also %s when %q is set: a further capability must be a real one, on a tool that needs one", c, a.GetWhenSet())
		}
		if f.IsList() || f.IsMap() || f.Kind() == protoreflect.MessageKind {
			return nil, fmt.Errorf("also field %q of %s is not a scalar", a.GetWhenSet(), req.FullName())
		}
		t.Also = append(t.Also, Also{Capability: c, Field: f})
	}
	if t.Wait, err = newWait(req, opt); err != nil {
		return nil, err
	}
	return t, nil
}

// reach checks the option's capability and reach against each other and
// resolves the reach field.
func reach(req protoreflect.MessageDescriptor, opt *mcpv1.Tool) (Reach, error) {
	c, kind, name := opt.GetCapability(), opt.GetReach().GetKind(), opt.GetReach().GetField()
	switch {
	case c == mcpv1.Capability_CAPABILITY_UNSPECIFIED:
		return Reach{}, fmt.Errorf("capability is not set: say which one the tool needs, or CAPABILITY_NONE")
	case mcpv1.Capability_name[int32(c)] == "":
		return Reach{}, fmt.Errorf("capability %d is not one phantom.mcp.v1.Capability declares", int32(c))
	case kind == mcpv1.ReachKind_REACH_KIND_UNSPECIFIED:
		return Reach{}, fmt.Errorf("reach is not set: name the request field that decides it, or say REACH_KIND_NONE")
	case (c == mcpv1.Capability_CAPABILITY_NONE) != (kind == mcpv1.ReachKind_REACH_KIND_NONE):
		return Reach{}, fmt.Errorf("capability %s with reach %s: a tool needs a reach exactly when it needs a capability", c, kind)
	case kind == mcpv1.ReachKind_REACH_KIND_NONE && (name != "" || len(opt.GetSubjectFields()) > 0):
		return Reach{}, fmt.Errorf("reach %s names field %q or subject fields %q: a free tool shows no sheet", kind, name, opt.GetSubjectFields())
	case kind == mcpv1.ReachKind_REACH_KIND_NONE:
		return Reach{Kind: kind}, nil
	case name == "":
		return Reach{}, fmt.Errorf("reach %s names no field", kind)
	}
	f, err := field(req, "reach", name)
	if err != nil {
		return Reach{}, err
	}
	if f.Kind() != protoreflect.StringKind || f.Cardinality() == protoreflect.Repeated {
		return Reach{}, fmt.Errorf("reach field %q of %s is a %s; a reach field must be a singular string", name, req.FullName(), kindOf(f))
	}
	return Reach{Kind: kind, Field: f}, nil
}

// field resolves the request field an option names for role.
func field(req protoreflect.MessageDescriptor, role, name string) (protoreflect.FieldDescriptor, error) {
	f := req.Fields().ByName(protoreflect.Name(name))
	if f == nil {
		return nil, fmt.Errorf("%s field %q is not a field of %s", role, name, req.FullName())
	}
	return f, nil
}

// kindOf names a field's type for errors: "repeated string", "int32".
func kindOf(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap():
		return "map"
	case f.Cardinality() == protoreflect.Repeated:
		return "repeated " + f.Kind().String()
	}
	return f.Kind().String()
}

// messageType is the generated type of md when one is linked in, else a
// dynamic one (descriptors built at run time, as in tests).
func messageType(md protoreflect.MessageDescriptor) protoreflect.MessageType {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil && mt.Descriptor() == md {
		return mt
	}
	return dynamicpb.NewMessageType(md)
}
