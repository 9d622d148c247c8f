package gateway

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestOutputSchemas checks every tool's outputSchema against what the
// gateway writes in structuredContent: each response message encoded as
// results are (resultJSON, enums as words), both empty and with every field set (extreme values, NaN,
// both arms of a nullable message), must validate.
func TestOutputSchemas(t *testing.T) {
	tools, err := buildTools()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.sorted() {
		t.Run(tl.name, func(t *testing.T) {
			var s jsonschema.Schema
			if err := json.Unmarshal(tl.listing.OutputSchema.(json.RawMessage), &s); err != nil {
				t.Fatal(err)
			}
			rs, err := s.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			full := tl.output.New()
			populate(full, 0)
			for name, m := range map[string]protoreflect.Message{"empty": tl.output.New(), "full": full} {
				b, err := resultJSON(m.Interface())
				if err != nil {
					t.Fatal(err)
				}
				var v any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatal(err)
				}
				if err := rs.Validate(v); err != nil {
					t.Errorf("%s response %s does not fit its outputSchema: %v", name, b, err)
				}
			}
		})
	}
}

// populate sets every field of m (the first member of each oneof) to a
// value at the edge of its kind; message fields nest a few levels deep
// and are left null below that.
func populate(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		if o := f.ContainingOneof(); o != nil && o.Fields().Get(0) != f {
			continue
		}
		switch {
		case f.IsList():
			l := m.Mutable(f).List()
			for range 2 {
				l.Append(sample(f, l.NewElement(), depth))
			}
		case f.IsMap():
			mp := m.Mutable(f).Map()
			mp.Set(sample(f.MapKey(), protoreflect.Value{}, depth).MapKey(), sample(f.MapValue(), mp.NewValue(), depth))
		case f.Message() != nil:
			if depth < 3 {
				populate(m.Mutable(f).Message(), depth+1)
			}
		default:
			m.Set(f, sample(f, protoreflect.Value{}, depth))
		}
	}
}

// sample is an extreme value of f's kind; blank is a new message for
// message kinds.
func sample(f protoreflect.FieldDescriptor, blank protoreflect.Value, depth int) protoreflect.Value {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("x\u00a0\"y\"")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{0, 0xff})
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(math.MinInt32)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(math.MaxUint32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(math.MinInt64)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(math.MaxUint64)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(math.Inf(-1)))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(math.NaN())
	case protoreflect.EnumKind:
		vals := f.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(vals.Len() - 1).Number())
	}
	if depth < 3 {
		populate(blank.Message(), depth+1)
	}
	return blank
}

// TestArgumentErrors checks that bad arguments are refused in the
// schema's words: snake_case field names, the value received, the fields
// there are; never protojson's camelCase or its non-breaking spaces.
func TestArgumentErrors(t *testing.T) {
	tools, err := buildTools()
	if err != nil {
		t.Fatal(err)
	}
	v, err := protovalidate.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ tool, args, want string }{
		{"read_output", `{"terminal_id":42}`, "terminal_id must be a string, got 42"},
		{"read_output", `{"terminal_id":"t1","foo":1}`, `unknown field "foo"; the fields are: terminal_id, lines`},
		{"read_output", `{"terminal_id":"t1","lines":1.5}`, "lines must be an integer, got 1.5"},
		{"read_output", `{"terminal_id":"t1","lines":"many"}`, `lines must be an integer, got "many"`},
		{"read_output", `{"terminal_id":"t1","lines":1e12}`, "lines must be an integer from -2147483648 to 2147483647, got 1e12"},
		{"read_output", `{"terminal_id":"t1","lines":0}`, "lines must be greater than or equal to 1 and less than or equal to 100000"},
		{"read_output", `{"terminal_id":""}`, "terminal_id must be at least 1 characters"},
		{"read_output", `{}`, "terminal_id must be at least 1 characters"},
		{"read_output", `[1]`, "the arguments must be a JSON object, got an array"},
		{"read_output", `"t1"`, `the arguments must be a JSON object, got "t1"`},
		{"list_terminals", `{"a":1}`, `unknown field "a"; it takes no fields`},
		{"create_terminal", `{"command":["sh"]}`, `unknown field "command"; the fields are: directory, worktree, group_id, agent, name`},
		{"create_terminal", `{"sandbox":"yes"}`, `sandbox must be true or false, got "yes"`},
		{"tidy_worktrees", `{"actions":[{"kind":"KIND_NOPE"}]}`, `actions[0].kind must be one of prune, repair, move, lock, unlock, got "KIND_NOPE"`},
		{"tidy_worktrees", `{"actions":[{"kind":"KIND_PRUNE"}]}`, `actions[0].kind must be one of prune, repair, move, lock, unlock, got "KIND_PRUNE"`},
		{"tidy_worktrees", `{"actions":[{"kind":"unspecified"}]}`, `actions[0].kind must be one of prune, repair, move, lock, unlock, got "unspecified"`},
		{"tidy_worktrees", `{"actions":[{"kind":2}]}`, "actions[0].kind must be one of prune, repair, move, lock, unlock, got 2"},
		{"list_diagnostics", `{"min_severity":"SEVERITY_ERROR"}`, `min_severity must be one of error, warning, information, hint, got "SEVERITY_ERROR"`},
		{"tidy_worktrees", `{"actions":[{"path":7}]}`, "actions[0].path must be a string, got 7"},
		{"tidy_worktrees", `{"actions":{}}`, "actions must be an array, got an object"},
	} {
		_, err := decodeArgs(tools.byName[tt.tool], json.RawMessage(tt.args), v)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\u00a0") {
			t.Errorf("%s %s: %v\nwant it to say %q", tt.tool, tt.args, err, tt.want)
		}
	}
	// What protojson reads, the checks let through.
	for _, tt := range []struct{ tool, args string }{
		{"read_output", `{"terminal_id":"t1","lines":"50"}`},
		{"read_output", `{"terminalId":"t1","lines":null}`},
		{"list_terminals", `null`},
		{"tidy_worktrees", `{"actions":[{"kind":"prune"},{"kind":"move","path":"a","new_path":"b"}]}`},
		{"list_diagnostics", `{"min_severity":"warning"}`},
	} {
		if _, err := decodeArgs(tools.byName[tt.tool], json.RawMessage(tt.args), v); err != nil {
			t.Errorf("%s %s: %v, want it accepted", tt.tool, tt.args, err)
		}
	}
}
