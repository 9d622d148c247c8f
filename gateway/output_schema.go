package gateway

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// outputSchema derives the JSON Schema of md as the gateway writes it in
// structuredContent: protojson with UseProtoNames and EmitUnpopulated.
// That encoding decides every rule here:
//   - every field is present, except members of a oneof (a proto3
//     optional field is one) that are unset, so all others are required;
//   - an unset message field is null;
//   - 64-bit integers are decimal strings, 32-bit ones numbers;
//   - floats are numbers, or the strings "NaN", "Infinity", "-Infinity";
//   - enums are their words (enums.go), bytes base64;
//   - the well-known types have their own JSON forms (wellKnownSchema).
func outputSchema(md protoreflect.MessageDescriptor, docs comments, depth int) schema {
	if s, ok := wellKnownSchema(md); ok {
		return s
	}
	props := schema{}
	required := []string{}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		s := outputFieldSchema(f, docs, depth)
		if d := docs[f.FullName()]; d != "" {
			s["description"] = d
		}
		props[string(f.Name())] = s
		if f.ContainingOneof() == nil {
			required = append(required, string(f.Name()))
		}
	}
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// outputFieldSchema is the schema of one field as written: a list is an
// array, a map an object keyed by strings, a singular message nullable.
func outputFieldSchema(f protoreflect.FieldDescriptor, docs comments, depth int) schema {
	switch {
	case f.IsMap():
		return schema{"type": "object", "additionalProperties": outputValueSchema(f.MapValue(), docs, depth)}
	case f.IsList():
		return schema{"type": "array", "items": outputValueSchema(f, docs, depth)}
	case f.Message() != nil && f.ContainingOneof() == nil:
		return schema{"anyOf": []schema{outputValueSchema(f, docs, depth), {"type": "null"}}}
	}
	return outputValueSchema(f, docs, depth)
}

// outputValueSchema is the schema of a single value of f's kind.
func outputValueSchema(f protoreflect.FieldDescriptor, docs comments, depth int) schema {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return schema{"type": "boolean"}
	case protoreflect.StringKind:
		return schema{"type": "string"}
	case protoreflect.BytesKind:
		return schema{"type": "string", "contentEncoding": "base64"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return schema{"type": "integer", "minimum": -1 << 31, "maximum": 1<<31 - 1}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return schema{"type": "integer", "minimum": 0, "maximum": 1<<32 - 1}
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
		if depth >= maxSchemaDepth {
			return schema{"type": "object"}
		}
		return outputSchema(f.Message(), docs, depth+1)
	}
	return schema{}
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
