package gateway

import (
	"encoding/base64"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Why not protojson for every result: it spent ~10 µs per listed tab
// (2 ms of the gateway's CPU per list_terminals with 200 tabs), most of it
// in generic machinery (field ordering, per-field option checks) that a
// fixed plan per message type does not need. resultJSON writes the same
// JSON — the same fields, names and value forms as resultsEncoder
// (UseProtoNames, EmitUnpopulated), enums as their words (enums.go) —
// from such a plan, and leaves to
// protojson what the plan does not cover: maps, floating-point numbers,
// the well-known types (they have their own JSON forms) and invalid
// UTF-8 (protojson's error says what is wrong).

// resultJSON encodes a daemon's answer for structuredContent, as
// resultsEncoder would.
func resultJSON(m proto.Message) ([]byte, error) {
	if p := planFor(m.ProtoReflect().Descriptor()); p != nil {
		// Sized like the type's last answer: a list of 200 tabs is
		// ~100 KB, which growing from nothing would copy a dozen times.
		hint := int(p.lastSize.Load())
		b, err := p.append(getBuf(max(256, hint+hint/8)), m.ProtoReflect())
		if err == nil {
			p.lastSize.Store(int64(len(b)))
			return b, nil
		}
	}
	j, err := resultsEncoder.Marshal(m)
	if err != nil {
		return nil, err
	}
	return resultWords(m.ProtoReflect().Descriptor(), j)
}

// msgPlan is how one message type is written: its fields in declaration
// order, as protojson writes them.
type msgPlan struct {
	fields []fieldPlan
	// lastSize is the length of the last top-level answer written.
	lastSize atomic.Int64
}

// fieldPlan is one field of a msgPlan.
type fieldPlan struct {
	fd protoreflect.FieldDescriptor
	// key is `"name":`, the proto name as UseProtoNames has it.
	key []byte
	// inOneof fields (proto3 optional ones too) are written only when
	// set; EmitUnpopulated writes every other field.
	inOneof bool
	// sub is the plan of a message-typed field's message.
	sub *msgPlan
	// words are an enum field's values as written: their words, quoted
	// (enums.go).
	words map[protoreflect.EnumNumber][]byte
}

// plans caches a plan per message type; a nil plan means protojson.
var plans sync.Map // protoreflect.FullName → *msgPlan

// planFor returns md's plan, or nil when md (or a message it holds) has
// something only protojson writes.
func planFor(md protoreflect.MessageDescriptor) *msgPlan {
	if p, ok := plans.Load(md.FullName()); ok {
		return p.(*msgPlan)
	}
	var p *msgPlan
	if plannable(md, map[protoreflect.FullName]bool{}) {
		p = buildPlan(md, map[protoreflect.FullName]*msgPlan{})
	}
	plans.Store(md.FullName(), p)
	return p
}

// plannable reports whether every field md can reach has a plan.
func plannable(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return true // a recursive type: decided where it was first seen
	}
	seen[md.FullName()] = true
	if md.FullName().Parent() == "google.protobuf" {
		return false // well-known types have JSON forms of their own
	}
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if f.IsMap() {
			return false
		}
		switch f.Kind() {
		case protoreflect.FloatKind, protoreflect.DoubleKind, protoreflect.GroupKind:
			return false
		case protoreflect.EnumKind:
			if f.Enum().FullName() == "google.protobuf.NullValue" {
				return false
			}
		case protoreflect.MessageKind:
			if !plannable(f.Message(), seen) {
				return false
			}
		}
	}
	return true
}

// buildPlan makes md's plan; md is plannable.
func buildPlan(md protoreflect.MessageDescriptor, built map[protoreflect.FullName]*msgPlan) *msgPlan {
	if p, ok := built[md.FullName()]; ok {
		return p
	}
	p := &msgPlan{}
	built[md.FullName()] = p
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		fp := fieldPlan{fd: f, key: append(strconv.AppendQuote(nil, string(f.Name())), ':'), inOneof: f.ContainingOneof() != nil}
		switch f.Kind() {
		case protoreflect.MessageKind:
			fp.sub = buildPlan(f.Message(), built)
		case protoreflect.EnumKind:
			fp.words = map[protoreflect.EnumNumber][]byte{}
			for n, w := range vocabOf(f.Enum()).word {
				fp.words[n] = strconv.AppendQuote(nil, w)
			}
		}
		p.fields = append(p.fields, fp)
	}
	return p
}

// errInvalidUTF8 sends a string that is not UTF-8 to protojson.
var errInvalidUTF8 = errors.New("invalid UTF-8")

// append writes m as a JSON object.
func (p *msgPlan) append(b []byte, m protoreflect.Message) ([]byte, error) {
	b = append(b, '{')
	first := true
	var err error
	for i := range p.fields {
		f := &p.fields[i]
		if f.inOneof && !m.Has(f.fd) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		if b, err = p.appendField(b, f, m); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendValue writes one value of f's kind as protojson does.
func (f *fieldPlan) appendValue(b []byte, v protoreflect.Value) ([]byte, error) {
	switch f.fd.Kind() {
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool()), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		// 64-bit integers are strings: JSON numbers lose precision past 2^53.
		b = append(b, '"')
		return append(strconv.AppendInt(b, v.Int(), 10), '"'), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b = append(b, '"')
		return append(strconv.AppendUint(b, v.Uint(), 10), '"'), nil
	case protoreflect.StringKind:
		return appendJSONString(b, v.String())
	case protoreflect.BytesKind:
		b = append(b, '"')
		return append(base64.StdEncoding.AppendEncode(b, v.Bytes()), '"'), nil
	case protoreflect.EnumKind:
		if w, ok := f.words[v.Enum()]; ok {
			return append(b, w...), nil
		}
		return strconv.AppendInt(b, int64(v.Enum()), 10), nil // an unknown value: its number
	case protoreflect.MessageKind:
		return f.sub.append(b, v.Message())
	}
	return nil, errors.New("no plan for kind " + f.fd.Kind().String())
}

// appendJSONString writes s as a JSON string: quotes, backslashes and
// control characters escaped, everything else as is.
func appendJSONString(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, errInvalidUTF8
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		b = appendEscaped(b, c)
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// appendEscaped writes the JSON escape of an ASCII character.
func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
