package policy

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/toolreg"
)

// fixtureProto declares a tool as a new daemon would: configure_thing
// needs configure, its reach is decided by the directory in workspace,
// and its sheet shows language, command and args. No Go in the policy
// names it.
const fixtureProto = `
name: "fixture/v1/fixture.proto" package: "fixture.v1" syntax: "proto3"
dependency: "phantom/mcp/v1/options.proto"
message_type {
  name: "ConfigureRequest"
  field { name: "workspace" json_name: "workspace" number: 1 type: TYPE_STRING label: LABEL_OPTIONAL }
  field { name: "language" json_name: "language" number: 2 type: TYPE_STRING label: LABEL_OPTIONAL }
  field { name: "command" json_name: "command" number: 3 type: TYPE_STRING label: LABEL_OPTIONAL }
  field { name: "args" json_name: "args" number: 4 type: TYPE_STRING label: LABEL_REPEATED }
}
message_type { name: "ConfigureResponse" }
service {
  name: "FixtureService"
  options { [phantom.mcp.v1.daemon]: "fixtured" }
  method {
    name: "Configure" input_type: ".fixture.v1.ConfigureRequest" output_type: ".fixture.v1.ConfigureResponse"
    options { [phantom.mcp.v1.tool] {
      name: "configure_thing" title: "Configure a thing" capability: CAPABILITY_CONFIGURE
      reach { kind: REACH_KIND_DIRECTORY field: "workspace" }
      subject_fields: ["language", "command", "args"]
    } }
  }
}`

// fixturePolicy is a policy on the fixture's registry alone.
func fixturePolicy(t *testing.T) *Policy {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(fixtureProto), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	files := &protoregistry.Files{}
	if err := files.RegisterFile(fd); err != nil {
		t.Fatal(err)
	}
	reg, err := toolreg.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	// Not newPolicy: the fixture has no run_command for the specials.
	return &Policy{tabs: workspace, project: repoOf, reg: reg}
}

// TestRuleFromTheProto: a tool's capability, reach and subject come from
// its proto option, evaluated on the typed request.
func TestRuleFromTheProto(t *testing.T) {
	p := fixturePolicy(t)
	in := func(tab string) Caller { return Caller{Client: "claude", ConnectionID: "c1", TabID: tab} }
	tests := []struct {
		name    string
		caller  Caller
		args    string
		reach   Scope
		subject string
		err     error
	}{
		{"own workspace by default", in("t1"), `{"language":"go","command":"gopls","args":["serve","-rpc.trace"]}`, Tab,
			`workspace /src/app, language "go", command "gopls", args "serve" "-rpc.trace"; the caller tab's own project`, nil},
		{"group tab's workspace", in("t1"), `{"workspace":"/src/web/ui","command":"tsserver"}`, Group,
			`workspace /src/web/ui, command "tsserver"; the project of a tab of the caller's group`, nil},
		{"other workspace", in("t1"), `{"workspace":"/src/lib"}`, All, "workspace /src/lib; a project no tab", nil},
		{"outside a tab needs the field", Caller{Client: "x", ConnectionID: "c"}, `{}`, 0, "argument workspace is required", errdefs.ErrInvalidArgument},
		{"wrong type", in("t1"), `{"args":"serve"}`, 0, "fixture.v1.ConfigureRequest", errdefs.ErrInvalidArgument},
		{"command escapes are shown", in("t1"), `{"command":"gopls\u001b[2J"}`, Tab, `command "gopls\x1b[2J"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, err := p.Evaluate(context.Background(), tt.caller, "configure_thing", tt.args)
			if tt.err != nil {
				if !errdefs.Is(err, tt.err) || !strings.Contains(err.Error(), tt.subject) {
					t.Fatalf("err = %v, want kind %v saying %q", err, tt.err, tt.subject)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if need.Capability != Configure || need.Reach != tt.reach || !strings.Contains(need.Subject, tt.subject) {
				t.Errorf("need = %+v\nwant configure reach %s subject containing %q", need, tt.reach, tt.subject)
			}
		})
	}
}
