package gateway

import (
	"errors"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Why answers are encoded from their wire form: list_terminals answers
// with one Terminal per tab, and an agent asks again and again while
// most tabs stay as they were. Decoding each Terminal and encoding it to
// JSON (twice: structuredContent and the escaped text block) made the
// gateway's cost per call grow with the tabs. A Terminal's JSON depends
// only on its bytes on the wire, so the gateway keeps the JSON of each
// element of an answer's top-level lists by those bytes: an element seen
// before costs a map lookup and two copies. Everything else in the
// answer (a few fields) is decoded and written as usual.

// maxCachedElems bounds each list's cache; when full it starts over. Tabs
// change (a new directory, an agent's state), so old entries pile up.
const maxCachedElems = 4096

// wirePlan writes one response type's JSON from its wire form.
type wirePlan struct {
	mt   protoreflect.MessageType
	plan *msgPlan
	// lists are the top-level repeated message fields whose elements are
	// cached, by field number.
	lists map[protowire.Number]*elemCache
}

// elemCache is one list field's element JSON by element bytes.
type elemCache struct {
	f  *fieldPlan
	mu sync.Mutex
	m  map[string]elemJSON
}

// elemJSON is an element's JSON, and the same escaped for a JSON string
// (without the quotes).
type elemJSON struct{ raw, text []byte }

// newWirePlan returns mt's wire plan, or nil when mt has no plan or no
// top-level list of messages (it is encoded as usual then).
func newWirePlan(mt protoreflect.MessageType) *wirePlan {
	p := planFor(mt.Descriptor())
	if p == nil {
		return nil
	}
	w := &wirePlan{mt: mt, plan: p, lists: map[protowire.Number]*elemCache{}}
	for i := range p.fields {
		f := &p.fields[i]
		if f.fd.IsList() && f.sub != nil {
			w.lists[f.fd.Number()] = &elemCache{f: f, m: map[string]elemJSON{}}
		}
	}
	if len(w.lists) == 0 {
		return nil
	}
	return w
}

// errWire is an answer that is not valid for its type.
var errWire = errors.New("malformed answer")

// encode returns the JSON of the answer whose wire form is b, and the
// same as a JSON string (quoted and escaped) for the text block.
func (w *wirePlan) encode(b []byte) (j, text []byte, err error) {
	// Split the lists' elements from the rest.
	elems := map[protowire.Number][][]byte{}
	var rest []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, errWire
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, nil, errWire
		}
		if w.lists[num] != nil && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n : n+m])
			elems[num] = append(elems[num], v)
		} else {
			rest = append(rest, b[:n+m]...)
		}
		b = b[n+m:]
	}
	msg := w.mt.New()
	if err := proto.Unmarshal(rest, msg.Interface()); err != nil {
		return nil, nil, err
	}

	// The JSON, with the cached elements' spans noted: their escaped
	// text is cached too, the rest is escaped here.
	type span struct {
		start, end int
		text       []byte
	}
	var spans []span
	hint := int(w.plan.lastSize.Load())
	j = getBuf(max(256, hint+hint/8))
	j = append(j, '{')
	first := true
	for i := range w.plan.fields {
		f := &w.plan.fields[i]
		c := w.lists[f.fd.Number()]
		if c == nil {
			if f.inOneof && !msg.Has(f.fd) {
				continue
			}
			if !first {
				j = append(j, ',')
			}
			first = false
			if j, err = w.plan.appendField(j, f, msg); err != nil {
				return nil, nil, err
			}
			continue
		}
		if !first {
			j = append(j, ',')
		}
		first = false
		j = append(j, f.key...)
		j = append(j, '[')
		for k, e := range elems[f.fd.Number()] {
			if k > 0 {
				j = append(j, ',')
			}
			ej, err := c.get(e, msg)
			if err != nil {
				return nil, nil, err
			}
			spans = append(spans, span{len(j), len(j) + len(ej.raw), ej.text})
			j = append(j, ej.raw...)
		}
		j = append(j, ']')
	}
	j = append(j, '}')
	w.plan.lastSize.Store(int64(len(j)))

	text = getBuf(len(j) + len(j)/8 + 2)
	text = append(text, '"')
	at := 0
	for _, s := range spans {
		text = appendEscapedText(text, j[at:s.start])
		text = append(text, s.text...)
		at = s.end
	}
	text = appendEscapedText(text, j[at:])
	return j, append(text, '"'), nil
}

// get returns the JSON of element e (its wire bytes), from the cache or
// written now. parent makes new elements of the right Go type.
func (c *elemCache) get(e []byte, parent protoreflect.Message) (elemJSON, error) {
	c.mu.Lock()
	ej, ok := c.m[string(e)]
	c.mu.Unlock()
	if ok {
		return ej, nil
	}
	elem := parent.NewField(c.f.fd).List().NewElement().Message()
	if err := proto.Unmarshal(e, elem.Interface()); err != nil {
		return elemJSON{}, err
	}
	raw, err := c.f.sub.append(nil, elem)
	if err != nil {
		return elemJSON{}, err
	}
	ej = elemJSON{raw: raw, text: appendEscapedText(nil, raw)}
	c.mu.Lock()
	if len(c.m) >= maxCachedElems {
		c.m = map[string]elemJSON{}
	}
	c.m[string(e)] = ej
	c.mu.Unlock()
	return ej, nil
}

// appendField writes one field, key and value, of m as append does.
func (p *msgPlan) appendField(b []byte, f *fieldPlan, m protoreflect.Message) ([]byte, error) {
	b = append(b, f.key...)
	switch {
	case f.fd.IsList():
		l := m.Get(f.fd).List()
		b = append(b, '[')
		for j := range l.Len() {
			if j > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = f.appendValue(b, l.Get(j)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case f.sub != nil && !m.Has(f.fd):
		return append(b, "null"...), nil
	}
	return f.appendValue(b, m.Get(f.fd))
}

// appendEscapedText writes JSON text j escaped for the inside of a JSON
// string. j is UTF-8 (its encoder checked every string), so only quotes,
// backslashes and control characters need escaping.
func appendEscapedText(b, j []byte) []byte {
	start := 0
	for i, c := range j {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, j[start:i]...)
		b = appendEscaped(b, c)
		start = i + 1
	}
	return append(b, j[start:]...)
}

// rawReply receives an answer's wire bytes (rawCodec).
type rawReply struct{ b []byte }

// rawCodec is gRPC's proto codec, except that a *rawReply receives the
// answer's bytes undecoded.
type rawCodec struct{ encoding.CodecV2 }

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*rawReply); ok {
		r.b = data.Materialize()
		return nil
	}
	return c.CodecV2.Unmarshal(data, v)
}

// rawAnswer is the call option that hands an answer's bytes to a
// *rawReply.
var rawAnswer = func() grpc.CallOption {
	pc := encoding.GetCodecV2("proto")
	if pc == nil {
		panic("gRPC has no proto codec")
	}
	return grpc.ForceCodecV2(rawCodec{pc})
}()
