package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	_ "github.com/phantom-dev/phantom/internal/toolreg" // every service's messages
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// trickyStrings are strings whose JSON needs escapes or is not ASCII.
var trickyStrings = []string{"", "bash", `say "hi" \ bye`, "tab\there\nnew\rline\b\f", "\x00\x01\x1f\x7f",
	"é ü 中文 😀", "<script>&amp;</script>", "\u2028\u2029", "/home/user/src"}

// fill sets m's fields to varied values: every kind, lists of 0 to 3
// elements, unknown enum numbers, unset and set messages, one member of
// each oneof.
func fill(m protoreflect.Message, r *rand.Rand, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if o := f.ContainingOneof(); o != nil && r.IntN(o.Fields().Len()+1) != 0 {
			continue // leave most oneof members (and optionals) unset
		}
		switch {
		case f.IsMap():
			mp := m.Mutable(f).Map()
			for range r.IntN(3) {
				mp.Set(value(f.MapKey(), r, depth).MapKey(), mapValue(mp, f.MapValue(), r, depth))
			}
		case f.IsList():
			l := m.Mutable(f).List()
			for range r.IntN(4) {
				if f.Message() != nil {
					e := l.NewElement()
					if depth < 3 {
						fill(e.Message(), r, depth+1)
					}
					l.Append(e)
				} else {
					l.Append(value(f, r, depth))
				}
			}
		case f.Message() != nil:
			if depth < 3 && r.IntN(3) != 0 {
				fill(m.Mutable(f).Message(), r, depth+1)
			}
		default:
			m.Set(f, value(f, r, depth))
		}
	}
}

func mapValue(mp protoreflect.Map, f protoreflect.FieldDescriptor, r *rand.Rand, depth int) protoreflect.Value {
	if f.Message() != nil {
		v := mp.NewValue()
		if depth < 3 {
			fill(v.Message(), r, depth+1)
		}
		return v
	}
	return value(f, r, depth)
}

// value is a random scalar of f's kind.
func value(f protoreflect.FieldDescriptor, r *rand.Rand, _ int) protoreflect.Value {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, -1, 42, 1<<31 - 1, -1 << 31}[r.IntN(5)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, 1, 1<<32 - 1}[r.IntN(3)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{0, -7, 1<<63 - 1, -1 << 63}[r.IntN(4)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, 9, 1<<64 - 1}[r.IntN(3)])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32([]float32{0, 1.5, -3e-9}[r.IntN(3)])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{0, 2.25, 1e300}[r.IntN(3)])
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(trickyStrings[r.IntN(len(trickyStrings))])
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(trickyStrings[r.IntN(len(trickyStrings))]))
	case protoreflect.EnumKind:
		vals := f.Enum().Values()
		if r.IntN(4) == 0 {
			return protoreflect.ValueOfEnum(99) // a number the enum does not name
		}
		return protoreflect.ValueOfEnum(vals.Get(r.IntN(vals.Len())).Number())
	}
	panic("no value for " + f.Kind().String())
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// protojsonWords is m as the slow path writes it: protojson
// (resultsEncoder), then its enum names rewritten to words (enums.go).
func protojsonWords(t *testing.T, m proto.Message) []byte {
	t.Helper()
	j, err := resultsEncoder.Marshal(m)
	if err != nil {
		t.Fatalf("%s: protojson: %v", m.ProtoReflect().Descriptor().FullName(), err)
	}
	if j, err = resultWords(m.ProtoReflect().Descriptor(), j); err != nil {
		t.Fatalf("%s: enum words: %v", m.ProtoReflect().Descriptor().FullName(), err)
	}
	return j
}

// TestResultJSONIsProtojson checks that resultJSON writes what protojson
// (resultsEncoder) writes with enums as words, for every message of every
// Phantom service, each filled many ways: the plan and the slow path
// agree.
func TestResultJSONIsProtojson(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n, planned := 0, 0
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		md := mt.Descriptor()
		if !strings.HasPrefix(string(md.FullName()), "phantom.") {
			return true
		}
		n++
		if planFor(md) != nil {
			planned++
		}
		for i := range 50 {
			m := mt.New()
			if i > 0 {
				fill(m, r, 0)
			}
			want := protojsonWords(t, m.Interface())
			got, err := resultJSON(m.Interface())
			if err != nil {
				t.Fatalf("%s: resultJSON: %v", md.FullName(), err)
			}
			if !sameJSON(t, got, want) {
				t.Fatalf("%s:\nresultJSON %s\nprotojson  %s", md.FullName(), got, want)
			}
		}
		return true
	})
	if n < 50 || planned < n/2 {
		t.Errorf("%d Phantom messages, %d with a plan: the registry or the planner lost them", n, planned)
	}
	t.Logf("%d Phantom messages, %d written from a plan, the rest by protojson", n, planned)
}

// TestResultJSONFallsBack checks what the plan leaves to protojson: a
// string that is not UTF-8 gets protojson's error, and a dynamic message
// is written like a generated one.
func TestResultJSONFallsBack(t *testing.T) {
	bad := &terminalv1.Terminal{Id: "t1", Title: "\xff\xfe"}
	if _, err := resultJSON(bad); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: err = %v, want protojson's", err)
	}
	good := &terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{{Id: "t1", DevServerPorts: []uint32{3000}}}}
	dyn := dynamicpb.NewMessage(good.ProtoReflect().Descriptor())
	b, _ := proto.Marshal(good)
	if err := proto.Unmarshal(b, dyn); err != nil {
		t.Fatal(err)
	}
	got, err := resultJSON(dyn)
	if err != nil {
		t.Fatal(err)
	}
	want := protojsonWords(t, good)
	if !sameJSON(t, got, want) {
		t.Errorf("dynamic message:\n%s\nwant\n%s", got, want)
	}
}

// TestSpliceWritesResults checks the placeholders the SDK encodes are
// replaced by the JSON — escaped in the text block, as is in
// structuredContent — and that a dropped response's result is forgotten.
func TestSpliceWritesResults(t *testing.T) {
	var s resultSplicer
	j, _ := resultJSON(&terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{
		{Id: "t1", Title: trickyStrings[3] + trickyStrings[4] + trickyStrings[5], Directory: `C:\dir "x"`}}})
	for _, id := range []any{float64(7), "req-7"} {
		// Each result's buffer is the splicer's once handed over: a copy each.
		res := s.result(bytes.Clone(j), nil)
		enc, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		rid, _ := jsonrpc.MakeID(id)
		b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Result: enc})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := s.splice(b)
		var msg struct {
			ID     any                `json:"id"`
			Result mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(out, &msg); err != nil {
			t.Fatalf("spliced response is not JSON: %v\n%s", err, out)
		}
		if msg.ID != id {
			t.Errorf("id %v, want %v", msg.ID, id)
		}
		text := msg.Result.Content[0].(*mcp.TextContent).Text
		sc, _ := json.Marshal(msg.Result.StructuredContent)
		if text != string(j) || !sameJSON(t, sc, j) {
			t.Errorf("spliced:\ntext %s\nstructured %s\nwant %s", text, sc, j)
		}
	}
	res := s.result(bytes.Clone(j), nil)
	enc, _ := json.Marshal(res)
	s.forget(enc)
	if len(s.held) != 0 {
		t.Errorf("%d results held after all were written or dropped", len(s.held))
	}
	// Another shape of message (an SDK that encodes results otherwise):
	// the slow path still writes the result.
	res = s.result(bytes.Clone(j), nil)
	odd := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":%s,"content":[{"type":"text","text":"x"}]}}`,
		res.StructuredContent.(json.RawMessage))
	var msg struct {
		Result mcp.CallToolResult `json:"result"`
	}
	out, _ := s.splice([]byte(odd))
	if err := json.Unmarshal(out, &msg); err != nil || msg.Result.Content[0].(*mcp.TextContent).Text != string(j) {
		t.Errorf("slow path: %v %+v", err, msg.Result)
	}
}

// TestWireEncodeIsProtojson checks that answers written from their wire
// form, lists from the element cache, are what protojson writes, and
// that the text block is the same JSON as a string — on first sight of
// each element and from the cache.
func TestWireEncodeIsProtojson(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 0
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if !strings.HasPrefix(string(mt.Descriptor().FullName()), "phantom.") {
			return true
		}
		w := newWirePlan(mt)
		if w == nil {
			return true
		}
		n++
		for i := range 30 {
			m := mt.New()
			fill(m, r, 0)
			b, err := proto.Marshal(m.Interface())
			if err != nil {
				t.Fatal(err)
			}
			want := protojsonWords(t, m.Interface())
			for pass := range 2 { // the second from the cache
				j, text, err := w.encode(b)
				if err != nil {
					t.Fatalf("%s: %v", mt.Descriptor().FullName(), err)
				}
				if !sameJSON(t, j, want) {
					t.Fatalf("%s #%d pass %d:\nwire      %s\nprotojson %s", mt.Descriptor().FullName(), i, pass, j, want)
				}
				var s string
				if err := json.Unmarshal(text, &s); err != nil || s != string(j) {
					t.Fatalf("%s: text block %v:\n%s\nwant the JSON\n%s", mt.Descriptor().FullName(), err, text, j)
				}
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no answer type with lists")
	}
	if w := newWirePlan((&terminalv1.ListTerminalsResponse{}).ProtoReflect().Type()); w == nil {
		t.Error("list_terminals' answer has no wire plan")
	}
	if _, _, err := newWirePlan((&terminalv1.ListTerminalsResponse{}).ProtoReflect().Type()).encode([]byte{0x0a, 0x05, 1}); err == nil {
		t.Error("a truncated answer was encoded")
	}
}

// TestWireCacheStaysBounded checks the element cache starts over when
// full instead of growing with every change a tab goes through.
func TestWireCacheStaysBounded(t *testing.T) {
	w := newWirePlan((&terminalv1.ListTerminalsResponse{}).ProtoReflect().Type())
	for i := range maxCachedElems + 10 {
		b, _ := proto.Marshal(&terminalv1.ListTerminalsResponse{Terminals: []*terminalv1.Terminal{{Id: fmt.Sprint("t", i)}}})
		if _, _, err := w.encode(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range w.lists {
		if len(c.m) > maxCachedElems {
			t.Errorf("cache holds %d elements, want at most %d", len(c.m), maxCachedElems)
		}
	}
}

// TestSpliceForgetsUnwrittenResults checks a connection does not keep
// results whose responses never came (an SDK error instead) for ever.
func TestSpliceForgetsUnwrittenResults(t *testing.T) {
	var s resultSplicer
	for range 10 * maxHeld {
		s.result([]byte(`{}`), nil)
	}
	if len(s.held) > maxHeld {
		t.Errorf("%d results held, want at most %d", len(s.held), maxHeld)
	}
}
