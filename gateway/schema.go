package gateway

import (
	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxSchemaDepth bounds nesting for recursive messages.
const maxSchemaDepth = 8

// schema is a JSON Schema object, built as a map so it encodes with only
// the keywords set.
type schema = map[string]any

// messageSchema derives the JSON Schema of md as protojson reads it:
// snake_case field names, enums as their words (enums.go), repeated fields as
// arrays, maps as objects, no other properties. A field is required when
// protovalidate demands it (required, a minimum length or count);
// comments become descriptions. hidden fields are left out.
func messageSchema(md protoreflect.MessageDescriptor, hidden map[protoreflect.Name]bool, docs comments, depth int) schema {
	props := schema{}
	var required []string
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		if hidden[f.Name()] {
			continue
		}
		s := fieldSchema(f, docs, depth)
		if d := docs[f.FullName()]; d != "" {
			s["description"] = d
		}
		props[string(f.Name())] = s
		if fieldRequired(f) {
			required = append(required, string(f.Name()))
		}
	}
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fieldSchema is the schema of one field's value (an array for a list, an
// object for a map).
func fieldSchema(f protoreflect.FieldDescriptor, docs comments, depth int) schema {
	switch {
	case f.IsMap():
		return schema{"type": "object", "additionalProperties": valueSchema(f.MapValue(), docs, depth)}
	case f.IsList():
		s := schema{"type": "array", "items": valueSchema(f, docs, depth)}
		if r := rulesOf(f).GetRepeated(); r != nil {
			if r.HasMinItems() {
				s["minItems"] = r.GetMinItems()
			}
			if r.HasMaxItems() {
				s["maxItems"] = r.GetMaxItems()
			}
		}
		return s
	}
	return valueSchema(f, docs, depth)
}

// valueSchema is the schema of a single value of f's kind.
func valueSchema(f protoreflect.FieldDescriptor, docs comments, depth int) schema {
	rules := rulesOf(f)
	switch f.Kind() {
	case protoreflect.BoolKind:
		return schema{"type": "boolean"}
	case protoreflect.StringKind:
		s := schema{"type": "string"}
		if r := rules.GetString(); r != nil && !f.IsList() {
			if r.HasMinLen() {
				s["minLength"] = r.GetMinLen()
			}
			if r.HasMaxLen() {
				s["maxLength"] = r.GetMaxLen()
			}
		}
		return s
	case protoreflect.BytesKind:
		return schema{"type": "string", "contentEncoding": "base64"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		s := schema{"type": "integer"}
		if r := rules.GetInt32(); r != nil && !f.IsList() {
			if r.HasGte() {
				s["minimum"] = r.GetGte()
			}
			if r.HasLte() {
				s["maximum"] = r.GetLte()
			}
		}
		return s
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		s := schema{"type": "integer", "minimum": 0}
		if r := rules.GetUint32(); r != nil && !f.IsList() {
			if r.HasGte() {
				s["minimum"] = r.GetGte()
			}
			if r.HasLte() {
				s["maximum"] = r.GetLte()
			}
		}
		return s
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// protojson reads 64-bit integers as numbers or decimal strings.
		return schema{"type": []string{"integer", "string"}}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return schema{"type": "number"}
	case protoreflect.EnumKind:
		return schema{"type": "string", "enum": enumWordsFor(f.Enum(), true)}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if depth >= maxSchemaDepth {
			return schema{"type": "object"}
		}
		return messageSchema(f.Message(), nil, docs, depth+1)
	}
	return schema{}
}

// rulesOf is f's protovalidate rules, nil when none.
func rulesOf(f protoreflect.FieldDescriptor) *validate.FieldRules {
	r, _ := proto.GetExtension(f.Options(), validate.E_Field).(*validate.FieldRules)
	return r
}

// fieldRequired reports whether protovalidate rejects f when absent.
func fieldRequired(f protoreflect.FieldDescriptor) bool {
	r := rulesOf(f)
	if r == nil {
		return false
	}
	if r.GetRequired() {
		return true
	}
	// An explicitly optional field's rules apply only when it is set.
	if s := r.GetString(); s != nil && !f.IsList() && !f.HasPresence() && s.GetMinLen() > 0 {
		return true
	}
	if rep := r.GetRepeated(); rep != nil && rep.GetMinItems() > 0 {
		return true
	}
	return false
}
