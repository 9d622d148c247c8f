package agentconf

import (
	"bytes"
	"fmt"
	"slices"
)

// jsonFile reads and edits one named entry of the servers object at path
// (e.g. mcpServers) in a JSON file. Every edit is a splice of the original
// text: the bytes outside our entry's span stay exactly as they were, so
// formatting, key order and comments survive.
//
// A new entry goes first in its object: inserting it there needs no comma
// added to anybody else's member, and removing it later gives back the
// original bytes.
type jsonFile struct {
	d    dialect
	path []string
}

// style is how a file writes JSON, so that our lines look like its own.
type style struct {
	nl   string // "\n" or "\r\n"
	unit string // one level of indentation
	// oneLine is set for a document written on a single line.
	oneLine bool
}

func styleOf(src []byte) style {
	s := style{nl: "\n", unit: "  "}
	if bytes.Contains(src, []byte("\r\n")) {
		s.nl = "\r\n"
	}
	for _, line := range bytes.Split(src, []byte("\n"))[1:] {
		ws := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if len(ws) == 0 || len(ws) == len(bytes.TrimRight(line, "\r")) {
			continue
		}
		if ws[0] == '\t' {
			s.unit = "\t"
		} else if n := bytes.Count(ws, []byte(" ")); n == len(ws) && n <= 8 {
			s.unit = string(ws)
		}
		break
	}
	return s
}

// walk follows f.path from the root object. It returns the deepest object
// found and the keys still missing below it.
func (f jsonFile) walk(doc *document) (*node, []string, error) {
	n := doc.root
	if n.kind != '{' {
		return nil, nil, fmt.Errorf("the top level is %s, not an object", kindName(n.kind))
	}
	for i, key := range f.path {
		m, err := n.lookup(doc.src, key)
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			return n, f.path[i:], nil
		}
		if m.value.kind != '{' {
			line, col := position(doc.src, m.value.start)
			return nil, nil, fmt.Errorf("%q at line %d, column %d is %s, not an object", key, line, col, kindName(m.value.kind))
		}
		n = m.value
	}
	return n, nil, nil
}

func kindName(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	}
	return "true, false or null"
}

// get returns the decoded entry called name, if the file has one.
func (f jsonFile) get(src []byte, name string) (any, bool, error) {
	doc, err := parseJSON(src, f.d)
	if err != nil || doc.root == nil {
		return nil, false, err
	}
	obj, missing, err := f.walk(doc)
	if err != nil || len(missing) > 0 {
		return nil, false, err
	}
	m, err := obj.lookup(src, name)
	if err != nil || m == nil {
		return nil, false, err
	}
	return m.value.decode(src), true, nil
}

// set makes the entry called name equal to entry, creating the servers
// object if needed, and returns the new text.
func (f jsonFile) set(src []byte, name string, entry fields) ([]byte, error) {
	doc, err := parseJSON(src, f.d)
	if err != nil {
		return nil, err
	}
	st := styleOf(src)
	if doc.root == nil { // empty, or only comments: append a document
		var b bytes.Buffer
		b.Write(src)
		if len(bytes.TrimSpace(src)) > 0 && !bytes.HasSuffix(src, []byte("\n")) {
			b.WriteString(st.nl)
		}
		b.WriteString(renderJSON(nest(slices.Concat(f.path, []string{name}), entry), "", st.unit, st.nl))
		b.WriteString(st.nl)
		return b.Bytes(), nil
	}
	obj, missing, err := f.walk(doc)
	if err != nil {
		return nil, err
	}
	// A document written on one line gets our entry on that line too; an
	// empty {} is laid out in the usual way.
	st.oneLine = len(doc.root.members) > 0 && bytes.IndexByte(src[doc.root.start:doc.root.end], '\n') < 0
	if len(missing) > 0 {
		return insertMember(src, obj, missing[0], nest(slices.Concat(missing[1:], []string{name}), entry), st), nil
	}
	m, err := obj.lookup(src, name)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return insertMember(src, obj, name, entry, st), nil
	}
	var text string
	if firstOnLine(src, m.keyStart) || bytes.IndexByte(src[m.value.start:m.value.end], '\n') >= 0 {
		text = renderJSON(entry, lineIndent(src, m.keyStart), st.unit, st.nl)
	} else {
		text = renderJSON(entry, "", "", "")
	}
	return splice(src, m.value.start, m.value.end, text), nil
}

// nest wraps v in one object per key: nest([a b], v) is {"a": {"b": v}}.
func nest(keys []string, v any) any {
	for i := len(keys) - 1; i >= 0; i-- {
		v = fields{{keys[i], v}}
	}
	return v
}

// insertMember adds "key": value as the first member of obj.
func insertMember(src []byte, obj *node, key string, value any, st style) []byte {
	open := obj.start
	outer := lineIndent(src, open)
	if len(obj.members) == 0 && len(bytes.Trim(src[open+1:obj.end-1], " \t\r\n")) == 0 {
		if st.oneLine {
			return splice(src, open+1, obj.end-1, quoteString(key)+": "+renderJSON(value, "", "", ""))
		}
		ind := outer + st.unit
		text := st.nl + ind + quoteString(key) + ": " + renderJSON(value, ind, st.unit, st.nl) + st.nl + outer
		return splice(src, open+1, obj.end-1, text)
	}
	// Pass blanks and comments that close on the brace's own line.
	p := open + 1
scan:
	for p < len(src) {
		switch src[p] {
		case ' ', '\t':
			p++
		case '/':
			end, _ := commentEnd(src, p)
			if src[p+1] == '/' {
				p = end
				break scan
			}
			if bytes.IndexByte(src[p:end], '\n') >= 0 {
				break scan
			}
			p = end
		default:
			break scan
		}
	}
	comma := ""
	if len(obj.members) > 0 {
		comma = ","
	}
	if p < len(src) && (src[p] == '\n' || src[p] == '\r') {
		// One member per line: ours on a new line right after the brace.
		ind := outer + st.unit
		if len(obj.members) > 0 && firstOnLine(src, obj.members[0].keyStart) {
			ind = lineIndent(src, obj.members[0].keyStart)
		}
		text := st.nl + ind + quoteString(key) + ": " + renderJSON(value, ind, st.unit, st.nl) + comma
		return splice(src, p, p, text)
	}
	// A compact object: ours, on one line, before what follows the brace.
	text := quoteString(key) + ": " + renderJSON(value, "", "", "")
	if comma != "" {
		text += ", "
	} else {
		text += " "
	}
	return splice(src, p, p, text)
}

// remove deletes the entry called name and, when that leaves the servers
// object (or one of its parents) empty, that object too. It reports whether
// there was an entry to remove.
func (f jsonFile) remove(src []byte, name string) ([]byte, bool, error) {
	doc, err := parseJSON(src, f.d)
	if err != nil || doc.root == nil {
		return src, false, err
	}
	obj, missing, err := f.walk(doc)
	if err != nil || len(missing) > 0 {
		return src, false, err
	}
	m, err := obj.lookup(src, name)
	if err != nil || m == nil {
		return src, false, err
	}
	src = removeMember(src, obj, m)
	// Drop objects on the path that are now empty, innermost first; an
	// object holding a comment is not empty.
	for depth := len(f.path); depth > 0; depth-- {
		doc, err := parseJSON(src, f.d)
		if err != nil {
			return nil, false, fmt.Errorf("removing %q left text that does not parse (%v): this is a bug", name, err)
		}
		parent, missing, err := (jsonFile{f.d, f.path[:depth-1]}).walk(doc)
		if err != nil || len(missing) > 0 {
			return nil, false, fmt.Errorf("removing %q lost the object around it: this is a bug", name)
		}
		c, _ := parent.lookup(src, f.path[depth-1])
		if len(c.value.members) > 0 || len(bytes.Trim(src[c.value.start+1:c.value.end-1], " \t\r\n")) > 0 {
			break
		}
		src = removeMember(src, parent, c)
	}
	return src, true, nil
}

// removeMember deletes m from obj: whole lines when m has lines of its own,
// else just its text and the blanks beside it, and the comma that joined it
// to the member before when it was the last.
func removeMember(src []byte, obj *node, m *member) []byte {
	a, b := m.keyStart, m.value.end
	if m.comma >= 0 {
		b = m.comma + 1
	}
	ls, le := lineStartOf(src, a), lineEndOf(src, b)
	switch {
	case isBlank(src[ls:a]) && isBlank(src[b:le]):
		a, b = ls, min(le+1, len(src))
	case m.comma < 0 && !isBlank(src[ls:a]):
		for a > 0 && (src[a-1] == ' ' || src[a-1] == '\t') {
			a--
		}
	default:
		for b < len(src) && (src[b] == ' ' || src[b] == '\t') {
			b++
		}
	}
	out := splice(src, a, b, "")
	if m.comma < 0 {
		for i := range obj.members {
			if &obj.members[i] == m && i > 0 {
				c := obj.members[i-1].comma
				out = splice(out, c, c+1, "") // c < a: still at the same offset
			}
		}
	}
	return out
}

// splice returns src with src[a:b] replaced by text, in a new slice.
func splice(src []byte, a, b int, text string) []byte {
	out := make([]byte, 0, len(src)-(b-a)+len(text))
	out = append(out, src[:a]...)
	out = append(out, text...)
	return append(out, src[b:]...)
}

func lineStartOf(src []byte, off int) int { return bytes.LastIndexByte(src[:off], '\n') + 1 }

// lineEndOf is the offset of the newline ending off's line, or len(src).
func lineEndOf(src []byte, off int) int {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(src)
}

// isBlank reports whether b holds only spaces, tabs and carriage returns.
func isBlank(b []byte) bool { return len(bytes.Trim(b, " \t\r")) == 0 }

func firstOnLine(src []byte, off int) bool { return isBlank(src[lineStartOf(src, off):off]) }

// lineIndent is the leading blank space of off's line.
func lineIndent(src []byte, off int) string {
	line := src[lineStartOf(src, off):]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}
