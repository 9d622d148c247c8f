package agentconf

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// dialect is how lenient a JSON file's own agent is when it reads it. We
// accept exactly what the agent accepts, so that a file we call valid is
// one the agent can read, and we never add a comment or a trailing comma.
type dialect struct {
	// comments allows // and /* */ comments.
	comments bool
	// trailingCommas allows a comma before a closing } or ].
	trailingCommas bool
	// name says, in an error, whose rules forbade a construct.
	name string
}

var (
	// plainJSON is RFC 8259 JSON, as JSON.parse reads it.
	plainJSON = dialect{name: "plain JSON"}
	// jsonComments is JSON with comments stripped before parsing (Gemini
	// CLI strips them; a trailing comma still breaks its JSON.parse).
	jsonComments = dialect{comments: true, name: "JSON with comments"}
	// jsonc is VS Code's JSON with comments and trailing commas, as read by
	// VS Code, Zed and opencode.
	jsonc = dialect{comments: true, trailingCommas: true, name: "JSONC"}
)

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 1000

// SyntaxError is a file we cannot read: where, and what we found there.
type SyntaxError struct {
	// Line and Column are 1-based; Column counts characters, not bytes.
	Line, Column int
	// Msg says what was wrong, in plain words.
	Msg string
}

// Error is "line L, column C: what was wrong".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// position converts a byte offset in src to a 1-based line and column.
func position(src []byte, off int) (line, col int) {
	line, lineStart := 1, 0
	for i := 0; i < off && i < len(src); i++ {
		if src[i] == '\n' {
			line++
			lineStart = i + 1
		}
	}
	return line, utf8.RuneCount(src[lineStart:min(off, len(src))]) + 1
}

// node is one JSON value and the bytes it spans, src[start:end].
type node struct {
	kind       byte // '{', '[', '"', '0' (a number) or 'l' (true, false, null)
	start, end int
	members    []member // of an object, in source order
	elems      []*node  // of an array
}

// member is one "key": value pair of an object.
type member struct {
	key      string
	keyStart int // offset of the key's opening quote
	value    *node
	// comma is the offset of the comma after the value, or -1.
	comma int
}

// document is a parsed JSON text. root is nil for a file with nothing but
// whitespace and comments, which we treat like a missing file.
type document struct {
	src  []byte
	root *node
}

// parseJSON parses src under d's rules, recording where every value and
// member lies so that an edit can change one member's bytes and nothing else.
func parseJSON(src []byte, d dialect) (*document, error) {
	p := &parser{src: src, d: d}
	if len(src) >= 3 && string(src[:3]) == "\uFEFF" {
		p.pos = 3 // a UTF-8 byte-order mark, which editors sometimes write
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos == len(src) {
		return &document{src: src}, nil
	}
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.errorf(p.pos, "unexpected %s after the end of the document", p.describe(p.pos))
	}
	return &document{src: src, root: root}, nil
}

// parser is a recursive-descent JSON parser over bytes.
type parser struct {
	src []byte
	pos int
	d   dialect
}

func (p *parser) errorf(off int, format string, args ...any) error {
	line, col := position(p.src, off)
	return &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// describe names the character at off for an error message.
func (p *parser) describe(off int) string {
	if off >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[off:])
	if r < 0x20 || r == utf8.RuneError {
		return fmt.Sprintf("character %U", r)
	}
	return fmt.Sprintf("%q", r)
}

// skip passes whitespace and, where the dialect allows them, comments.
func (p *parser) skip() error {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		case '/':
			if !p.d.comments {
				return p.errorf(p.pos, "comments are not allowed in %s", p.d.name)
			}
			end, ok := commentEnd(p.src, p.pos)
			if !ok {
				return p.errorf(p.pos, "comment is not closed (a /* needs its */)")
			}
			if end < 0 {
				return p.errorf(p.pos, "unexpected '/' (a comment starts with // or /*)")
			}
			p.pos = end
		default:
			return nil
		}
	}
	return nil
}

// commentEnd returns the offset just past the comment starting at src[i]
// ('/'): for a line comment, the offset of its newline (or EOF). It returns
// -1 when src[i] does not start a comment and ok=false for an unclosed block.
func commentEnd(src []byte, i int) (end int, ok bool) {
	if i+1 >= len(src) {
		return -1, true
	}
	switch src[i+1] {
	case '/':
		for j := i + 2; j < len(src); j++ {
			if src[j] == '\n' {
				return j, true
			}
		}
		return len(src), true
	case '*':
		for j := i + 2; j+1 < len(src); j++ {
			if src[j] == '*' && src[j+1] == '/' {
				return j + 2, true
			}
		}
		return 0, false
	}
	return -1, true
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.errorf(p.pos, "values are nested more than %d deep", maxDepth)
	}
	if p.pos >= len(p.src) {
		return nil, p.errorf(p.pos, "unexpected end of file where a value should be")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		start := p.pos
		if err := p.str(); err != nil {
			return nil, err
		}
		return &node{kind: '"', start: start, end: p.pos}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.src)-p.pos >= len(lit) && string(p.src[p.pos:p.pos+len(lit)]) == lit {
				n := &node{kind: 'l', start: p.pos, end: p.pos + len(lit)}
				p.pos = n.end
				return n, nil
			}
		}
	}
	return nil, p.errorf(p.pos, "unexpected %s where a value should be", p.describe(p.pos))
}

func (p *parser) object(depth int) (*node, error) {
	n := &node{kind: '{', start: p.pos}
	p.pos++ // {
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			if len(n.members) > 0 && !p.d.trailingCommas && n.members[len(n.members)-1].comma >= 0 {
				return nil, p.errorf(n.members[len(n.members)-1].comma, "trailing comma before '}' is not allowed in %s", p.d.name)
			}
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if len(n.members) > 0 && n.members[len(n.members)-1].comma < 0 {
			return nil, p.errorf(p.pos, "expected ',' or '}' after an object member, found %s", p.describe(p.pos))
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.errorf(p.pos, "expected a member name in double quotes or '}', found %s", p.describe(p.pos))
		}
		m := member{keyStart: p.pos, comma: -1}
		if err := p.str(); err != nil {
			return nil, err
		}
		m.key = unquote(p.src[m.keyStart:p.pos])
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.errorf(p.pos, "expected ':' after the member name %q, found %s", m.key, p.describe(p.pos))
		}
		p.pos++
		if err := p.skip(); err != nil {
			return nil, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m.value = v
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			m.comma = p.pos
			p.pos++
		}
		n.members = append(n.members, m)
	}
}

func (p *parser) array(depth int) (*node, error) {
	n := &node{kind: '[', start: p.pos}
	p.pos++     // [
	comma := -1 // offset of the comma after the last element, or -1
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			if comma >= 0 && !p.d.trailingCommas {
				return nil, p.errorf(comma, "trailing comma before ']' is not allowed in %s", p.d.name)
			}
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if len(n.elems) > 0 && comma < 0 {
			return nil, p.errorf(p.pos, "expected ',' or ']' after an array element, found %s", p.describe(p.pos))
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		if err := p.skip(); err != nil {
			return nil, err
		}
		comma = -1
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			comma = p.pos
			p.pos++
		}
	}
}

// str passes a string starting at its opening quote.
func (p *parser) str() error {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return nil
		case c == '\\':
			if p.pos+1 >= len(p.src) {
				return p.errorf(start, "string is not closed")
			}
			switch p.src[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				for i := 2; i < 6; i++ {
					if p.pos+i >= len(p.src) || !isHex(p.src[p.pos+i]) {
						return p.errorf(p.pos, `\u in a string needs four hexadecimal digits`)
					}
				}
				p.pos += 6
			default:
				return p.errorf(p.pos, "unknown escape %s in a string", p.describe(p.pos+1))
			}
		case c < 0x20:
			if c == '\n' {
				return p.errorf(start, "string is not closed before the end of the line")
			}
			return p.errorf(p.pos, "control character %U inside a string must be escaped", rune(c))
		default:
			p.pos++
		}
	}
	return p.errorf(start, "string is not closed")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number passes -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() (*node, error) {
	start := p.pos
	digits := func() bool {
		i := p.pos
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
		return p.pos > i
	}
	bad := func() (*node, error) {
		return nil, p.errorf(start, "malformed number %q", p.src[start:min(p.pos+1, len(p.src))])
	}
	if p.src[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] == '0' {
		p.pos++
	} else if !digits() {
		return bad()
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if !digits() {
			return bad()
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if !digits() {
			return bad()
		}
	}
	return &node{kind: '0', start: start, end: p.pos}, nil
}

// unquote decodes a string token the parser has already validated.
func unquote(tok []byte) string {
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		panic(fmt.Sprintf("agentconf: validated string %q does not decode: %v", tok, err))
	}
	return s
}

// decode converts a parsed value to what encoding/json would produce
// (numbers as json.Number), comments and all formatting dropped.
func (n *node) decode(src []byte) any {
	switch n.kind {
	case '{':
		m := make(map[string]any, len(n.members))
		for _, mb := range n.members {
			m[mb.key] = mb.value.decode(src) // the last duplicate wins, as in JSON.parse
		}
		return m
	case '[':
		a := make([]any, len(n.elems))
		for i, e := range n.elems {
			a[i] = e.decode(src)
		}
		return a
	case '"':
		return unquote(src[n.start:n.end])
	case '0':
		return json.Number(src[n.start:n.end])
	}
	switch string(src[n.start:n.end]) {
	case "true":
		return true
	case "false":
		return false
	}
	return nil
}

// lookup returns the member named key, or nil. Two members of that name are
// an error: an agent would read one of them, and we could not tell which.
func (n *node) lookup(src []byte, key string) (*member, error) {
	var found *member
	for i := range n.members {
		if n.members[i].key != key {
			continue
		}
		if found != nil {
			l1, _ := position(src, found.keyStart)
			l2, _ := position(src, n.members[i].keyStart)
			return nil, fmt.Errorf("%q is defined twice, on lines %d and %d: remove one", key, l1, l2)
		}
		found = &n.members[i]
	}
	return found, nil
}
