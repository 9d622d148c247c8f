package terminald

import (
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// termCache keeps each tab's wire message for as long as the tab shows the
// same: an agent lists tabs again and again while most stay as they were,
// and building 200 messages a call was a third of terminald's cost of
// list_terminals. It keeps both messages of a tab, in full and as redact
// makes it for callers who may not read the tab (redact.go), each built
// when first asked for. The messages are shared by concurrent answers,
// which only read them (gRPC marshals them; protobuf messages are safe for
// concurrent reads).
type termCache struct {
	mu sync.Mutex
	m  map[string]*cachedTerm // by tab id
}

// cachedTerm is a tab as last listed and its messages.
type cachedTerm struct {
	t   workspace.Terminal
	pb  *terminalv1.Terminal // in full; nil until asked for
	red *terminalv1.Terminal // redacted; nil until asked for
}

// convert is ts as full says: each tab's message in full or redacted,
// reusing the messages of every tab that did not change since it was
// last converted.
func (c *termCache) convert(ts []workspace.Terminal, full fullView) []*terminalv1.Terminal {
	out := make([]*terminalv1.Terminal, len(ts))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 2*len(ts)+16 {
		// Closed tabs pile up otherwise.
		c.m = make(map[string]*cachedTerm, len(ts))
	}
	for i, t := range ts {
		e, ok := c.m[t.ID]
		if !ok || !e.t.Equal(t) {
			e = &cachedTerm{t: t}
			c.m[t.ID] = e
		}
		switch {
		case full.at(i):
			if e.pb == nil {
				e.pb = toTerminal(t)
			}
			out[i] = e.pb
		default:
			if e.red == nil {
				e.red = toTerminal(redact(t))
			}
			out[i] = e.red
		}
	}
	return out
}

// wireCache keeps each tab message's wire form, by message: the caches
// before it (termCache, cmdTerms) hand out the same message for as long
// as a tab stays the same, so the pointer is the key. Encoding 200
// messages was the largest part left of terminald's cost of a list. A tab
// has up to three messages in use (in full, with its last command, and
// redacted), so the cache holds three per tab before it starts over.
type wireCache struct {
	mu sync.Mutex
	m  map[*terminalv1.Terminal][]byte // the field-1 record of the message
}

// response is a ListTerminalsResponse listing ts. The tabs travel as the
// message's unknown fields: records of field 1 (terminals) encoded ahead,
// which the wire cannot tell from the same list encoded now, and which
// every receiver decodes as terminals. In this process, before the wire,
// the response's Terminals is empty: only gRPC may be handed it.
func (c *wireCache) response(ts []*terminalv1.Terminal) *terminalv1.ListTerminalsResponse {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 3*len(ts)+16 {
		c.m = make(map[*terminalv1.Terminal][]byte, len(ts))
	}
	size := 0
	recs := make([][]byte, len(ts))
	for i, t := range ts {
		rec, ok := c.m[t]
		if !ok {
			b, err := proto.Marshal(t)
			if err != nil {
				// Cannot happen for a message we built; encode the list as
				// usual rather than lose a tab.
				return &terminalv1.ListTerminalsResponse{Terminals: ts}
			}
			rec = protowire.AppendTag(nil, terminalsField, protowire.BytesType)
			rec = protowire.AppendBytes(rec, b)
			c.m[t] = rec
		}
		recs[i] = rec
		size += len(rec)
	}
	raw := make([]byte, 0, size)
	for _, rec := range recs {
		raw = append(raw, rec...)
	}
	resp := &terminalv1.ListTerminalsResponse{}
	resp.ProtoReflect().SetUnknown(raw)
	return resp
}

// terminalsField is ListTerminalsResponse.terminals' number.
var terminalsField = (&terminalv1.ListTerminalsResponse{}).ProtoReflect().Descriptor().Fields().ByName("terminals").Number()
