package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
	"unicode/utf8"

	"buf.build/go/protovalidate"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A call's arguments are decoded by protojson and checked by protovalidate,
// the protos' own rules, so the gateway holds no second copy of them. Their
// errors, though, are written for programmers (protojson's name fields in
// camelCase and separate words with non-breaking spaces). A model corrects
// a call from the error's text alone, so checkArgs first walks the
// arguments against the request message and says what is wrong in the
// schema's words — "terminal_id must be a string, got 42" — and
// protovalidate's violations are reworded the same way.

// decodeArgs reads a call's arguments into the tool's request message: an
// object of the schema's fields, no unknown or hidden ones, values of the
// right types and within the protos' validation rules. The error is the
// sentence for the model.
func decodeArgs(t *tool, args json.RawMessage, v protovalidate.Validator) (protoreflect.ProtoMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if err := checkObject(t.input.Descriptor(), t.hidden, "", args); err != nil {
		return nil, err
	}
	args, err := argsWithProtoNames(t.input.Descriptor(), args)
	if err != nil {
		return nil, err
	}
	msg := t.input.New().Interface()
	if err := argsDecoder.Unmarshal(args, msg); err != nil {
		// checkObject let through something protojson refuses: its words,
		// tidied.
		return nil, errors.New(strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\u00a0", " "), "proto: "))
	}
	if err := v.Validate(msg); err != nil {
		return nil, violations(err)
	}
	return msg, nil
}

// violations rewords protovalidate's error: one clause per broken rule,
// naming the field by its path in the schema.
func violations(err error) error {
	var verr *protovalidate.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	var parts []string
	for _, v := range verr.Violations {
		field := protovalidate.FieldPathString(v.Proto.GetField())
		switch {
		case strings.HasSuffix(v.Proto.GetRuleId(), "required"):
			parts = append(parts, field+" is required")
		case field == "":
			parts = append(parts, v.Proto.GetMessage())
		case strings.HasPrefix(v.Proto.GetMessage(), "must "):
			parts = append(parts, field+" "+v.Proto.GetMessage())
		default:
			parts = append(parts, field+": "+v.Proto.GetMessage())
		}
	}
	return errors.New(strings.Join(parts, "; "))
}

// checkObject checks raw against message md as protojson reads it; path
// names md's field in its parent ("" for the arguments themselves).
func checkObject(md protoreflect.MessageDescriptor, hidden map[protoreflect.Name]bool, path string, raw json.RawMessage) error {
	var fields map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		if path == "" {
			return fmt.Errorf("the arguments must be a JSON object, got %s", describe(raw))
		}
		return fmt.Errorf("%s must be an object, got %s", path, describe(raw))
	}
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := md.Fields().ByName(protoreflect.Name(name))
		if f == nil {
			f = md.Fields().ByJSONName(name)
		}
		if f == nil || hidden[f.Name()] {
			return unknownField(md, hidden, path, name)
		}
		value := fields[name]
		if bytes.Equal(value, []byte("null")) {
			continue // protojson reads null as unset
		}
		if err := checkField(f, join(path, string(f.Name())), value); err != nil {
			return err
		}
	}
	return nil
}

// unknownField names the fields there are.
func unknownField(md protoreflect.MessageDescriptor, hidden map[protoreflect.Name]bool, path, name string) error {
	var known []string
	for i := 0; i < md.Fields().Len(); i++ {
		if f := md.Fields().Get(i); !hidden[f.Name()] {
			known = append(known, string(f.Name()))
		}
	}
	where := ""
	if path != "" {
		where = " in " + path
	}
	if len(known) == 0 {
		return fmt.Errorf("unknown field %q%s; it takes no fields", name, where)
	}
	return fmt.Errorf("unknown field %q%s; the fields are: %s", name, where, strings.Join(known, ", "))
}

// checkField checks one field's value: an array for a list, an object for
// a map, else a single value.
func checkField(f protoreflect.FieldDescriptor, name string, raw json.RawMessage) error {
	switch {
	case f.IsList():
		var items []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return fmt.Errorf("%s must be an array, got %s", name, describe(raw))
		}
		for i, item := range items {
			if err := checkValue(f, fmt.Sprintf("%s[%d]", name, i), item); err != nil {
				return err
			}
		}
		return nil
	case f.IsMap():
		var entries map[string]json.RawMessage
		if raw[0] != '{' || json.Unmarshal(raw, &entries) != nil {
			return fmt.Errorf("%s must be an object, got %s", name, describe(raw))
		}
		for k, v := range entries {
			if err := checkValue(f.MapValue(), fmt.Sprintf("%s[%q]", name, k), v); err != nil {
				return err
			}
		}
		return nil
	}
	return checkValue(f, name, raw)
}

// checkValue checks a single value of f's kind, accepting what protojson
// accepts (numbers may be quoted, enums given by number).
func checkValue(f protoreflect.FieldDescriptor, name string, raw json.RawMessage) error {
	var s string
	isString := json.Unmarshal(raw, &s) == nil
	switch f.Kind() {
	case protoreflect.BoolKind:
		if string(raw) != "true" && string(raw) != "false" {
			return fmt.Errorf("%s must be true or false, got %s", name, describe(raw))
		}
	case protoreflect.StringKind, protoreflect.BytesKind:
		if !isString {
			return fmt.Errorf("%s must be a string, got %s", name, describe(raw))
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return checkInteger(name, raw, int32Range)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return checkInteger(name, raw, uint32Range)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return checkInteger(name, raw, int64Range)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return checkInteger(name, raw, uint64Range)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if _, ok := number(raw); !ok && s != "NaN" && s != "Infinity" && s != "-Infinity" {
			return fmt.Errorf("%s must be a number, got %s", name, describe(raw))
		}
	case protoreflect.EnumKind:
		_, err := enumArg(f.Enum(), name, raw) // a plain word (enums.go)
		return err
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if _, wkt := wellKnownSchema(f.Message()); wkt {
			return nil // their JSON forms are protojson's to check
		}
		return checkObject(f.Message(), nil, name, raw)
	}
	return nil
}

// Ranges of the integer kinds.
var (
	int32Range  = [2]*big.Int{big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)}
	uint32Range = [2]*big.Int{big.NewInt(0), big.NewInt(math.MaxUint32)}
	int64Range  = [2]*big.Int{big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)}
	uint64Range = [2]*big.Int{big.NewInt(0), new(big.Int).SetUint64(math.MaxUint64)}
)

// checkInteger checks an integer within r, as a number or a decimal
// string.
func checkInteger(name string, raw json.RawMessage, r [2]*big.Int) error {
	n, ok := number(raw)
	if !ok || !n.IsInt() {
		return fmt.Errorf("%s must be an integer, got %s", name, describe(raw))
	}
	if n.Cmp(new(big.Float).SetInt(r[0])) < 0 || n.Cmp(new(big.Float).SetInt(r[1])) > 0 {
		return fmt.Errorf("%s must be an integer from %s to %s, got %s", name, r[0], r[1], describe(raw))
	}
	return nil
}

// number reads a JSON number, or a string holding one.
func number(raw json.RawMessage) (*big.Float, bool) {
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	} else if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return nil, false
	}
	n, ok := new(big.Float).SetString(strings.TrimSpace(text))
	return n, ok && text != ""
}

// describe renders a JSON value for an error: scalars as written (long
// strings cut), containers by kind.
func describe(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		var s string
		json.Unmarshal(raw, &s)
		if utf8.RuneCountInString(s) > 40 {
			s = string([]rune(s)[:40]) + "…"
		}
		return fmt.Sprintf("%q", s)
	}
	return string(raw)
}

// join names a nested field: parent.child.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
