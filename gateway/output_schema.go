package gateway

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/toolreg"
)

// outputHomes maps a message several tools return to its home.
type outputHomes map[protoreflect.FullName]outputHome

// outputSchema derives the JSON Schema of a tool's response message md
// as the gateway writes it in structuredContent: protojson with
// UseProtoNames and EmitUnpopulated, enums as words. That encoding
// decides every rule here:
//   - every field is present, except members of a oneof (a proto3
//     optional field is one) that are unset (the schema leaves out
//     `required`, which would repeat every field's name once more);
//   - an unset message field is null;
//   - 64-bit integers are decimal strings, 32-bit ones numbers;
//   - floats are numbers, or the strings "NaN", "Infinity", "-Infinity";
//   - enums are their words (enums.go), bytes base64;
//   - the well-known types have their own JSON forms (wellKnownSchema).
//
// The list of tools is read whole, so it says each thing once. The
// fields' meanings are the input schemas' and the tool descriptions'
// business: an outputSchema gives the result's shape alone (clients
// validate results with it; few show it to the model). A message several
// tools return (a Terminal, a CommandResult) is spelled out in one
// tool's schema, its home (findOutputHomes), and is an object pointing
// there in the others'. A message that occurs more than once in one
// schema is defined once in its $defs and referenced ($ref) where it
// occurs.
func outputSchema(toolName string, md protoreflect.MessageDescriptor, homes outputHomes) schema {
	b := &outputBuilder{tool: toolName, homes: homes, count: map[protoreflect.FullName]int{}, defs: schema{},
		defName: map[protoreflect.FullName]string{}, taken: map[string]bool{}}
	b.countMessages(md, 0)
	s := b.message(md, 0)
	if len(b.defs) > 0 {
		s["$defs"] = b.defs
	}
	return s
}

// outputBuilder builds one tool's outputSchema.
type outputBuilder struct {
	tool  string
	homes outputHomes
	// count is how often each message is spelled out in this schema (a
	// message pointing to its home is not); those counted twice or more
	// go to defs.
	count map[protoreflect.FullName]int
	defs  schema
	// defName is each defined message's name in defs; taken are the
	// names used.
	defName map[protoreflect.FullName]string
	taken   map[string]bool
}

// elsewhere reports whether md is spelled out in another tool's schema.
func (b *outputBuilder) elsewhere(md protoreflect.MessageDescriptor) (outputHome, bool) {
	h, ok := b.homes[md.FullName()]
	return h, ok && h.tool != b.tool
}

// countMessages counts the messages md's schema spells out below it.
func (b *outputBuilder) countMessages(md protoreflect.MessageDescriptor, depth int) {
	if depth >= maxSchemaDepth {
		return
	}
	forEachMessageField(md, func(_ protoreflect.FieldDescriptor, sub protoreflect.MessageDescriptor) {
		if _, ok := b.elsewhere(sub); ok {
			return
		}
		b.count[sub.FullName()]++
		if b.count[sub.FullName()] == 1 {
			b.countMessages(sub, depth+1)
		}
	})
}

// message is the schema of md's JSON object.
func (b *outputBuilder) message(md protoreflect.MessageDescriptor, depth int) schema {
	if s, ok := wellKnownSchema(md); ok {
		return s
	}
	props := schema{}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		props[string(f.Name())] = b.field(f, depth)
	}
	return schema{"type": "object", "properties": props}
}

// field is the schema of one field as written: a list is an array, a map
// an object keyed by strings, a singular message nullable.
func (b *outputBuilder) field(f protoreflect.FieldDescriptor, depth int) schema {
	switch {
	case f.IsMap():
		return schema{"type": "object", "additionalProperties": b.value(f.MapValue(), depth)}
	case f.IsList():
		return schema{"type": "array", "items": b.value(f, depth)}
	case f.Message() != nil && f.ContainingOneof() == nil:
		return nullable(b.value(f, depth))
	}
	return b.value(f, depth)
}

// nullable lets v be null as well: by its type, or, for a schema with no
// single type (a $ref, a well-known type's anyOf), with anyOf; a pointer
// to the message's home (its description) stays outside anyOf.
func nullable(v schema) schema {
	if t, ok := v["type"].(string); ok {
		v["type"] = []string{t, "null"}
		return v
	}
	d, _ := v["description"].(string)
	delete(v, "description")
	s := schema{"anyOf": []schema{v, {"type": "null"}}}
	if d != "" {
		s["description"] = d
	}
	return s
}

// value is the schema of a single value of f's kind.
func (b *outputBuilder) value(f protoreflect.FieldDescriptor, depth int) schema {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return schema{"type": "boolean"}
	case protoreflect.StringKind:
		return schema{"type": "string"}
	case protoreflect.BytesKind:
		return schema{"type": "string", "contentEncoding": "base64"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return schema{"type": "integer"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return schema{"type": "integer", "minimum": 0}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return schema{"type": "string", "pattern": "^-?[0-9]+$"}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return schema{"type": "string", "pattern": "^[0-9]+$"}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return floatSchema()
	case protoreflect.EnumKind:
		if f.Enum().FullName() == "google.protobuf.NullValue" {
			return schema{"type": "null"}
		}
		return schema{"type": "string", "enum": enumWordsFor(f.Enum(), false)}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return b.sub(f.Message(), depth+1)
	}
	return schema{}
}

// sub is the schema of a message below the top: a pointer to its home, a
// reference into $defs, or the message itself.
func (b *outputBuilder) sub(md protoreflect.MessageDescriptor, depth int) schema {
	if s, ok := wellKnownSchema(md); ok {
		return s
	}
	if h, ok := b.elsewhere(md); ok {
		return schema{"type": "object", "description": "As in the outputSchema of " + h.tool + ": " + h.path + "."}
	}
	if depth > maxSchemaDepth {
		return schema{"type": "object"}
	}
	if b.count[md.FullName()] < 2 {
		return b.message(md, depth)
	}
	name, ok := b.defName[md.FullName()]
	if !ok {
		name = string(md.Name())
		if b.taken[name] {
			name = string(md.FullName())
		}
		b.defName[md.FullName()], b.taken[name] = name, true
		b.defs[name] = b.message(md, depth) // md holding itself finds its name taken
	}
	return schema{"$ref": "#/$defs/" + name}
}

// forEachMessageField calls fn for each field of md holding a message
// (singular, repeated or as a map's value) that is not a well-known type.
func forEachMessageField(md protoreflect.MessageDescriptor, fn func(protoreflect.FieldDescriptor, protoreflect.MessageDescriptor)) {
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		v := f
		if f.IsMap() {
			v = f.MapValue()
		}
		if sub := v.Message(); sub != nil {
			if _, wkt := wellKnownSchema(sub); !wkt {
				fn(f, sub)
			}
		}
	}
}

// floatSchema is a float or double as protojson writes it.
func floatSchema() schema {
	return schema{"anyOf": []schema{{"type": "number"}, {"type": "string", "enum": []string{"NaN", "Infinity", "-Infinity"}}}}
}

// wellKnownSchema is the JSON form protojson gives the well-known types,
// which is not their fields'.
func wellKnownSchema(md protoreflect.MessageDescriptor) (schema, bool) {
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		return schema{"type": "string", "format": "date-time"}, true
	case "google.protobuf.Duration":
		return schema{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]+)?s$`}, true
	case "google.protobuf.FieldMask":
		return schema{"type": "string"}, true
	case "google.protobuf.Struct":
		return schema{"type": "object"}, true
	case "google.protobuf.ListValue":
		return schema{"type": "array"}, true
	case "google.protobuf.Value":
		return schema{}, true
	case "google.protobuf.Empty":
		return schema{"type": "object", "additionalProperties": false}, true
	case "google.protobuf.Any":
		return schema{"type": "object", "required": []string{"@type"}}, true
	case "google.protobuf.BoolValue":
		return schema{"type": "boolean"}, true
	case "google.protobuf.StringValue":
		return schema{"type": "string"}, true
	case "google.protobuf.BytesValue":
		return schema{"type": "string", "contentEncoding": "base64"}, true
	case "google.protobuf.Int32Value", "google.protobuf.UInt32Value":
		return schema{"type": "integer"}, true
	case "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
		return schema{"type": "string", "pattern": "^-?[0-9]+$"}, true
	case "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		return floatSchema(), true
	}
	return nil, false
}

// outputHome is the tool whose outputSchema spells out a message several
// tools return, and where in it: "terminals[]", "result.compaction".
type outputHome struct{ tool, path string }

// findOutputHomes finds the homes of the messages more than one tool returns,
// by message. A message's home is the tool that holds it least deep,
// then a read-only tool (list_terminals, not create_terminal), then the
// first by name.
func findOutputHomes(tools []*toolreg.Tool) outputHomes {
	type seen struct {
		depth    int
		path     string
		readOnly bool
	}
	by := map[protoreflect.FullName]map[string]seen{}
	for _, t := range tools {
		var walk func(md protoreflect.MessageDescriptor, depth int, path string)
		walk = func(md protoreflect.MessageDescriptor, depth int, path string) {
			if depth >= maxSchemaDepth {
				return
			}
			forEachMessageField(md, func(f protoreflect.FieldDescriptor, sub protoreflect.MessageDescriptor) {
				p := join(path, string(f.Name()))
				if f.IsList() {
					p += "[]"
				} else if f.IsMap() {
					p += "{}"
				}
				if by[sub.FullName()] == nil {
					by[sub.FullName()] = map[string]seen{}
				}
				if prev, ok := by[sub.FullName()][t.Name]; ok && prev.depth <= depth+1 {
					return
				}
				by[sub.FullName()][t.Name] = seen{depth + 1, p, t.Option.GetReadOnly()}
				walk(sub, depth+1, p)
			})
		}
		walk(t.Descriptor.Output(), 0, "")
	}
	homes := outputHomes{}
	for md, in := range by {
		if len(in) < 2 {
			continue
		}
		best := ""
		for name, s := range in {
			b, ok := in[best]
			switch {
			case !ok, s.depth < b.depth,
				s.depth == b.depth && s.readOnly && !b.readOnly,
				s.depth == b.depth && s.readOnly == b.readOnly && name < best:
				best = name
			}
		}
		homes[md] = outputHome{tool: best, path: in[best].path}
	}
	return homes
}
