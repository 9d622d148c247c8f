package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Agents see enum values as plain lower-case words — "prune", not
// KIND_PRUNE; "error", not SEVERITY_ERROR — in the schemas, in their
// arguments and in results. The words are derived from the protos, so
// there is no second list to keep: a value's word is its name without the
// prefix every value of its enum shares, in lower case. The gateway turns
// words into proto names before protojson reads the arguments
// (argsWithProtoNames), and writes words where protojson would write
// names: the result plans (cost_json.go) and, for the answers protojson
// still encodes, a pass over its JSON (resultWords). An enum's
// UNSPECIFIED value is never offered as an argument; a result may hold it
// (e.g. agent_state of a tab without an agent) and says "unspecified".

// enumVocab is one enum's words.
type enumVocab struct {
	// word and byWord map values to words and back.
	word   map[protoreflect.EnumNumber]string
	byWord map[string]protoreflect.EnumValueDescriptor
	// args are the words an argument may use (no unspecified value);
	// all are every value's, in declaration order.
	args, all []string
}

// vocabs caches each enum's vocabulary by its full name.
var vocabs sync.Map // protoreflect.FullName → *enumVocab

// vocabOf returns ed's vocabulary.
func vocabOf(ed protoreflect.EnumDescriptor) *enumVocab {
	if v, ok := vocabs.Load(ed.FullName()); ok {
		return v.(*enumVocab)
	}
	vals := ed.Values()
	prefix := sharedPrefix(vals)
	v := &enumVocab{word: map[protoreflect.EnumNumber]string{}, byWord: map[string]protoreflect.EnumValueDescriptor{}}
	for i := range vals.Len() {
		ev := vals.Get(i)
		w := strings.ToLower(strings.TrimPrefix(string(ev.Name()), prefix))
		if _, dup := v.byWord[w]; dup {
			continue // an alias (allow_alias): the first name's word stands
		}
		v.word[ev.Number()] = w
		v.byWord[w] = ev
		v.all = append(v.all, w)
		if !unspecified(ev) {
			v.args = append(v.args, w)
		}
	}
	vocabs.Store(ed.FullName(), v)
	return v
}

// sharedPrefix is the prefix, up to and including an underscore, that
// every value name of an enum shares ("KIND_" for KIND_PRUNE,
// KIND_MOVE…); "" when the values share none, or when stripping it
// would leave a name empty.
func sharedPrefix(vals protoreflect.EnumValueDescriptors) string {
	if vals.Len() == 0 {
		return ""
	}
	p := string(vals.Get(0).Name())
	for i := 1; i < vals.Len(); i++ {
		n := string(vals.Get(i).Name())
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	p = p[:strings.LastIndexByte(p, '_')+1]
	for i := range vals.Len() {
		if string(vals.Get(i).Name()) == p {
			return ""
		}
	}
	return p
}

// unspecified reports whether ev is its enum's "not set" value: number 0
// named …UNSPECIFIED.
func unspecified(ev protoreflect.EnumValueDescriptor) bool {
	return ev.Number() == 0 && strings.HasSuffix(string(ev.Name()), "UNSPECIFIED")
}

// enumWordsFor are the words of ed a schema lists: those an argument may
// use for input, every value's for output.
func enumWordsFor(ed protoreflect.EnumDescriptor, input bool) []string {
	if input {
		return vocabOf(ed).args
	}
	return vocabOf(ed).all
}

// enumArg reads an enum argument's word; the error lists the words there
// are.
func enumArg(ed protoreflect.EnumDescriptor, name string, raw json.RawMessage) (protoreflect.EnumValueDescriptor, error) {
	v := vocabOf(ed)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if ev, ok := v.byWord[s]; ok && !unspecified(ev) {
			return ev, nil
		}
	}
	return nil, fmt.Errorf("%s must be one of %s, got %s", name, strings.Join(v.args, ", "), describe(raw))
}

// hasEnums caches whether a message holds an enum field at any depth.
var hasEnums sync.Map // protoreflect.FullName → bool

// reachesEnum reports whether md, or a message it holds, has an enum
// field (not google.protobuf.NullValue).
func reachesEnum(md protoreflect.MessageDescriptor) bool {
	if v, ok := hasEnums.Load(md.FullName()); ok {
		return v.(bool)
	}
	found := walkEnums(md, map[protoreflect.FullName]bool{})
	hasEnums.Store(md.FullName(), found)
	return found
}

func walkEnums(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if f.IsMap() {
			f = f.MapValue()
		}
		switch {
		case f.Kind() == protoreflect.EnumKind && f.Enum().FullName() != "google.protobuf.NullValue":
			return true
		case f.Message() != nil && walkEnums(f.Message(), seen):
			return true
		}
	}
	return false
}

// argsWithProtoNames rewrites the enum words of arguments raw (checked by
// checkObject) to the value names protojson reads.
func argsWithProtoNames(md protoreflect.MessageDescriptor, raw json.RawMessage) (json.RawMessage, error) {
	return rewriteEnums(md, raw, func(ed protoreflect.EnumDescriptor, v json.RawMessage) (json.RawMessage, error) {
		ev, err := enumArg(ed, "", v)
		if err != nil {
			return nil, err
		}
		return marshalJSON(string(ev.Name()))
	})
}

// resultWords rewrites the enum value names in j, a result protojson
// wrote for md, to their words.
func resultWords(md protoreflect.MessageDescriptor, j []byte) ([]byte, error) {
	return rewriteEnums(md, j, func(ed protoreflect.EnumDescriptor, v json.RawMessage) (json.RawMessage, error) {
		var name string
		if json.Unmarshal(v, &name) != nil {
			return v, nil // an unknown value, written as its number
		}
		ev := ed.Values().ByName(protoreflect.Name(name))
		if ev == nil {
			return v, nil
		}
		return marshalJSON(vocabOf(ed).word[ev.Number()])
	})
}

// rewriteEnums returns the JSON object raw, of message md, with each enum
// value replaced by what swap makes of it; raw itself when md holds no
// enum.
func rewriteEnums(md protoreflect.MessageDescriptor, raw json.RawMessage,
	swap func(protoreflect.EnumDescriptor, json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	if !reachesEnum(md) {
		return raw, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	for name, v := range fields {
		f := md.Fields().ByName(protoreflect.Name(name))
		if f == nil {
			f = md.Fields().ByJSONName(name)
		}
		if f == nil || string(v) == "null" {
			continue
		}
		var err error
		if fields[name], err = rewriteField(f, v, swap); err != nil {
			return nil, err
		}
	}
	return marshalJSON(fields)
}

// rewriteField rewrites the enum values of one field's value.
func rewriteField(f protoreflect.FieldDescriptor, v json.RawMessage,
	swap func(protoreflect.EnumDescriptor, json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	value := f
	if f.IsMap() {
		value = f.MapValue()
	}
	one := func(v json.RawMessage) (json.RawMessage, error) {
		switch {
		case string(v) == "null":
			return v, nil
		case value.Kind() == protoreflect.EnumKind && value.Enum().FullName() != "google.protobuf.NullValue":
			return swap(value.Enum(), v)
		case value.Message() != nil:
			if _, wkt := wellKnownSchema(value.Message()); wkt {
				return v, nil
			}
			return rewriteEnums(value.Message(), v, swap)
		}
		return v, nil
	}
	if value.Kind() != protoreflect.EnumKind && (value.Message() == nil || !reachesEnum(value.Message())) {
		return v, nil
	}
	switch {
	case f.IsList():
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil, err
		}
		for i := range items {
			var err error
			if items[i], err = one(items[i]); err != nil {
				return nil, err
			}
		}
		return marshalJSON(items)
	case f.IsMap():
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(v, &entries); err != nil {
			return nil, err
		}
		for k := range entries {
			var err error
			if entries[k], err = one(entries[k]); err != nil {
				return nil, err
			}
		}
		return marshalJSON(entries)
	}
	return one(v)
}

// marshalJSON is json.Marshal without HTML escaping: a result's text
// block shows "<" as "<", not "\u003c".
func marshalJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
