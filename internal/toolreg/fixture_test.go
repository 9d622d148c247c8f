package toolreg

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// fixture is a service as a proto author could write it: a request with
// a string target, a number, a list and a message field, one method per
// tool option given, and the daemon option when daemon is not empty.
type fixture struct {
	daemon    string
	tools     []*mcpv1.Tool
	streaming bool
}

// files builds the fixture's descriptors into a registry of their own.
func (f fixture) files(t *testing.T) *protoregistry.Files {
	t.Helper()
	str, i32, msg := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(),
		descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	svcOpts := &descriptorpb.ServiceOptions{}
	if f.daemon != "" {
		proto.SetExtension(svcOpts, mcpv1.E_Daemon, f.daemon)
	}
	svc := &descriptorpb.ServiceDescriptorProto{Name: proto.String("FixtureService"), Options: svcOpts}
	for i, tool := range f.tools {
		mo := &descriptorpb.MethodOptions{}
		proto.SetExtension(mo, mcpv1.E_Tool, tool)
		svc.Method = append(svc.Method, &descriptorpb.MethodDescriptorProto{
			Name:            proto.String("Do" + string(rune('A'+i))),
			InputType:       proto.String(".fixture.v1.DoRequest"),
			OutputType:      proto.String(".fixture.v1.DoResponse"),
			Options:         mo,
			ServerStreaming: proto.Bool(f.streaming),
		})
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("fixture/v1/fixture.proto"),
		Package:    proto.String("fixture.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{mcpv1.File_phantom_mcp_v1_options_proto.Path()},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("DoRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("target"), JsonName: proto.String("target"), Number: proto.Int32(1), Type: str, Label: opt},
				{Name: proto.String("count"), JsonName: proto.String("count"), Number: proto.Int32(2), Type: i32, Label: opt},
				{Name: proto.String("args"), JsonName: proto.String("args"), Number: proto.Int32(3), Type: str, Label: rep},
				{Name: proto.String("inner"), JsonName: proto.String("inner"), Number: proto.Int32(4), Type: msg, Label: opt,
					TypeName: proto.String(".fixture.v1.DoResponse")},
			}},
			{Name: proto.String("DoResponse")},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{svc},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatalf("build fixture: %v", err)
	}
	files := &protoregistry.Files{}
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	return files
}

// rule is a tool option with a capability and a reach.
func rule(name string, c mcpv1.Capability, kind mcpv1.ReachKind, field string, subject ...string) *mcpv1.Tool {
	return &mcpv1.Tool{Name: name, Title: "Do " + name, Capability: c, Reach: &mcpv1.Reach{Kind: kind, Field: field}, SubjectFields: subject}
}
