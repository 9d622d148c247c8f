package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Why results are spliced: a tool result's JSON (structuredContent, and
// the same JSON again as a text block) went through encoding/json three
// more times on its way out — TextContent escapes the text, the SDK's
// marshal of the result validates it and the structured content, and
// jsonrpc.EncodeMessage validates the whole result again. For a large
// answer (list_terminals with 200 tabs, a 64 KiB read_output page) that
// was most of the gateway's CPU per call. So the handler gives the SDK a
// result holding two short placeholders, and lineConn.Write, after the
// SDK encoded the response, puts the JSON in their place: escaped once
// for the text block, as is for structuredContent. The JSON is the
// gateway's own encoding of a daemon's answer (resultJSON), valid by
// construction.

// spliceTag starts every placeholder: random per process, so that no text
// a daemon or a client writes can name one.
var spliceTag = func() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	return "phantom-result-" + hex.EncodeToString(b) + "-"
}()

// The placeholders' ends: which of the two a placeholder stands for.
const (
	spliceText       = "-text"
	spliceStructured = "-structured"
)

// resultSplicer holds results between a tool handler and the write of
// its response; the zero value is ready to use.
type resultSplicer struct {
	mu   sync.Mutex
	next uint64
	held map[uint64]heldResult
}

// maxHeld bounds the results a connection holds; only maxInFlight
// requests run at once.
const maxHeld = 2 * maxInFlight

// heldResult is a result's JSON and, if already made, the same as a JSON
// string for the text block.
type heldResult struct{ j, text []byte }

// result returns the tool result for j, a JSON object: its text block and
// structuredContent are placeholders until the response is written. text
// is j as a JSON string, or nil to have it made from j.
func (s *resultSplicer) result(j, text []byte) *mcp.CallToolResult {
	s.mu.Lock()
	if s.held == nil {
		s.held = map[uint64]heldResult{}
	}
	s.next++
	n := s.next
	s.held[n] = heldResult{j, text}
	if len(s.held) > maxHeld {
		// A response the SDK never wrote (it failed to encode one, or
		// answered with an error instead): at most maxInFlight of this
		// connection's results can still be waiting.
		for k := range s.held {
			if k+maxHeld <= n {
				delete(s.held, k)
			}
		}
	}
	s.mu.Unlock()
	tok := spliceTag + strconv.FormatUint(n, 10)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: tok + spliceText}},
		StructuredContent: json.RawMessage(`"` + tok + spliceStructured + `"`),
	}
}

// splice returns the encoded message b with the result it holds spliced
// in, or b itself when it holds no placeholder. A result whose response
// is dropped (a cancelled request) is forgotten all the same: pass every
// response through splice or forget. Once the message is written, done
// returns the buffers for reuse.
func (s *resultSplicer) splice(b []byte) (out []byte, done func()) {
	n, at, ok := s.find(b)
	if !ok {
		return b, func() {}
	}
	h := s.take(n)
	if h.j == nil {
		return b, func() {}
	}
	if h.text == nil {
		h.text = appendJSONText(getBuf(len(h.j)+len(h.j)/8+2), h.j)
	}
	out = s.join(b, n, at, h)
	return out, func() { putBuf(out); putBuf(h.j); putBuf(h.text) }
}

// join puts held result h into message b, where its placeholder n starts
// at at.
func (s *resultSplicer) join(b []byte, n uint64, at int, h heldResult) []byte {
	tok := []byte(spliceTag + strconv.FormatUint(n, 10))
	text := quoted(tok, spliceText)
	structured := quoted(tok, spliceStructured)
	ti := indexFrom(b, text, at-1)
	si := indexFrom(b, structured, at-1)
	if ti < 0 || si < 0 {
		// Not the shape this was written for (an SDK that encodes
		// results differently): encode the whole result the slow way.
		return spliceSlow(b, h.j)
	}
	out := getBuf(len(b) + len(h.j) + len(h.text))
	// The two placeholders in the order they appear.
	first, firstVal, second, secondVal := ti, h.text, si, h.j
	firstLen, secondLen := len(text), len(structured)
	if si < ti {
		first, firstVal, second, secondVal = si, h.j, ti, h.text
		firstLen, secondLen = len(structured), len(text)
	}
	out = append(out, b[:first]...)
	out = append(out, firstVal...)
	out = append(out, b[first+firstLen:second]...)
	out = append(out, secondVal...)
	return append(out, b[second+secondLen:]...)
}

// forget drops the result an unwritten message b holds, if any.
func (s *resultSplicer) forget(b []byte) {
	if n, _, ok := s.find(b); ok {
		h := s.take(n)
		putBuf(h.j)
		putBuf(h.text)
	}
}

// bufs are the buffers of results, reused: an answer of 200 tabs takes
// ~300 KB of them per call, which the garbage collector would otherwise
// chase.
var bufs sync.Pool

// maxPooled bounds the buffers kept for reuse; a rare huge answer's are
// left to the collector.
const maxPooled = 4 << 20

// getBuf returns an empty buffer with room for n bytes.
func getBuf(n int) []byte {
	if p, ok := bufs.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// putBuf gives b back for reuse; nothing may use it after.
func putBuf(b []byte) {
	if b == nil || cap(b) > maxPooled {
		return
	}
	b = b[:0]
	bufs.Put(&b)
}

// find returns the number of the placeholder in b and where it starts.
func (s *resultSplicer) find(b []byte) (n uint64, at int, ok bool) {
	at = bytes.Index(b, []byte(spliceTag))
	if at < 0 {
		return 0, 0, false
	}
	rest := b[at+len(spliceTag):]
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.ParseUint(string(rest[:end]), 10, 64)
	return n, at, err == nil
}

// take returns and forgets held result n.
func (s *resultSplicer) take(n uint64) heldResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[n]
	delete(s.held, n)
	return h
}

// quoted is `"` + tok + end + `"`.
func quoted(tok []byte, end string) []byte {
	q := make([]byte, 0, len(tok)+len(end)+2)
	q = append(q, '"')
	q = append(q, tok...)
	q = append(q, end...)
	return append(q, '"')
}

// indexFrom is bytes.Index from position from on, or -1.
func indexFrom(b, sep []byte, from int) int {
	from = max(from, 0)
	i := bytes.Index(b[from:], sep)
	if i < 0 {
		return -1
	}
	return from + i
}

// appendJSONText writes JSON text j as a JSON string.
func appendJSONText(b, j []byte) []byte {
	b = append(b, '"')
	return append(appendEscapedText(b, j), '"')
}

// spliceSlow puts result j into response b by re-encoding the result the
// way the SDK would have: decode the response, put the JSON in, encode.
func spliceSlow(b, j []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(b, &msg) != nil {
		return b
	}
	res, err := json.Marshal(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(j)}},
		StructuredContent: json.RawMessage(j),
	})
	if err != nil {
		return b
	}
	msg["result"] = res
	out, err := json.Marshal(msg)
	if err != nil {
		return b
	}
	return out
}
