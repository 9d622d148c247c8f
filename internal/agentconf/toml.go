package agentconf

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// tomlFile reads and edits one table, [<table>.<name>], of a TOML file
// (Codex's config.toml). Edits are text-level: we replace or delete the
// lines of that table and its sub-tables and append a new one at the end,
// so every other line, comment and blank line stays as it was. go-toml
// validates the file before and after each edit.
type tomlFile struct {
	table []string
}

// tomlTable is one [header] or [[header]] of a TOML file and its lines.
type tomlTable struct {
	keys  []string
	array bool
	// start is the offset of the header's line.
	start int
	// end is the offset just past the table's last line of content (keys
	// and values, however many lines a value takes). Blank and comment
	// lines after that belong to whatever follows.
	end int
}

// decodeTOML validates src and returns it decoded.
func decodeTOML(src []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(src, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, &SyntaxError{Line: line, Column: col, Msg: strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, err
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// lookupTOML follows keys through nested tables.
func lookupTOML(doc map[string]any, keys []string) (any, bool) {
	var v any = doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// tables returns the table called keys and its sub-tables, in file order.
func (f tomlFile) tables(src []byte, keys []string) (main *tomlTable, subs []tomlTable) {
	for _, t := range scanTOML(src) {
		if len(t.keys) < len(keys) || !equalKeys(t.keys[:len(keys)], keys) {
			continue
		}
		if len(t.keys) == len(keys) && !t.array && main == nil {
			main = &t
			continue
		}
		subs = append(subs, t)
	}
	return main, subs
}

func equalKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (f tomlFile) get(src []byte, name string) (any, bool, error) {
	doc, err := decodeTOML(src)
	if err != nil {
		return nil, false, err
	}
	v, ok := lookupTOML(doc, slices.Concat(f.table, []string{name}))
	return v, ok, nil
}

// check refuses a file where our entry exists in a form we do not edit:
// written inline or with dotted keys rather than as its own table.
func (f tomlFile) check(src []byte, doc map[string]any, keys []string) (*tomlTable, []tomlTable, error) {
	if v, ok := lookupTOML(doc, keys[:len(keys)-1]); ok {
		if _, isTable := v.(map[string]any); !isTable {
			return nil, nil, fmt.Errorf("%s is not a table", strings.Join(keys[:len(keys)-1], "."))
		}
	}
	main, subs := f.tables(src, keys)
	v, exists := lookupTOML(doc, keys)
	if !exists {
		return main, subs, nil
	}
	if _, isTable := v.(map[string]any); !isTable {
		return nil, nil, fmt.Errorf("%s is not a table", strings.Join(keys, "."))
	}
	if main == nil { // is it defined by its sub-tables alone?
		if rest, err := decodeTOML(editTables(src, deletions(subs))); err == nil {
			_, exists = lookupTOML(rest, keys)
		}
	}
	if main == nil && exists {
		return nil, nil, fmt.Errorf("%s is written inline or with dotted keys, not as its own [%s] table; "+
			"phantom edits only that table: delete those lines and run this again", strings.Join(keys, "."), strings.Join(keys, "."))
	}
	return main, subs, nil
}

func (f tomlFile) set(src []byte, name string, entry fields) ([]byte, error) {
	doc, err := decodeTOML(src)
	if err != nil {
		return nil, err
	}
	keys := slices.Concat(f.table, []string{name})
	main, subs, err := f.check(src, doc, keys)
	if err != nil {
		return nil, err
	}
	nl := styleOf(src).nl
	text := renderTOMLTable(keys, entry, nl)
	edits := deletions(subs)
	if main != nil {
		edits = append(edits, tableEdit{*main, text})
	}
	out := editTables(src, edits)
	if main == nil {
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, nl...)
		}
		if len(bytes.TrimSpace(out)) > 0 && !bytes.HasSuffix(out, []byte(nl+nl)) {
			out = append(out, nl...)
		}
		out = append(out, text...)
	}
	return out, f.verify(doc, out, keys, entry)
}

// verify re-reads an edited file and makes sure the edit did exactly what
// it should: our table as intended and every other setting unchanged.
func (f tomlFile) verify(before map[string]any, out []byte, keys []string, entry fields) error {
	after, err := decodeTOML(out)
	if err != nil {
		return fmt.Errorf("the edited file would not parse (%v): left unchanged; this is a bug", err)
	}
	got, ok := lookupTOML(after, keys)
	if entry != nil && (!ok || !sameValue(got, entry)) {
		return fmt.Errorf("the edited file would not hold the intended [%s] table: left unchanged; this is a bug", strings.Join(keys, "."))
	}
	if entry == nil && ok {
		return fmt.Errorf("the edited file would still hold [%s]: left unchanged; this is a bug", strings.Join(keys, "."))
	}
	if !sameValue(without(before, keys), without(after, keys)) {
		return fmt.Errorf("the edit would change settings other than [%s]: left unchanged; this is a bug", strings.Join(keys, "."))
	}
	return nil
}

// without returns doc with the value at keys removed (a shallow copy of
// every table on the way), and parents that became empty dropped.
func without(doc map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if len(keys) == 1 {
		delete(out, keys[0])
		return out
	}
	if sub, ok := out[keys[0]].(map[string]any); ok {
		out[keys[0]] = without(sub, keys[1:])
		if len(out[keys[0]].(map[string]any)) == 0 {
			delete(out, keys[0])
		}
	}
	return out
}

func (f tomlFile) remove(src []byte, name string) ([]byte, bool, error) {
	doc, err := decodeTOML(src)
	if err != nil {
		return nil, false, err
	}
	keys := slices.Concat(f.table, []string{name})
	main, subs, err := f.check(src, doc, keys)
	if err != nil {
		return nil, false, err
	}
	if _, ok := lookupTOML(doc, keys); !ok {
		return src, false, nil
	}
	if main != nil {
		subs = append(subs, *main)
	}
	out := editTables(src, deletions(subs))
	return out, true, f.verify(doc, out, keys, nil)
}

// tableEdit replaces a table's lines with text, or deletes them when
// text is empty.
type tableEdit struct {
	t    tomlTable
	text string
}

func deletions(ts []tomlTable) []tableEdit {
	var edits []tableEdit
	for _, t := range ts {
		edits = append(edits, tableEdit{t: t})
	}
	return edits
}

// editTables applies edits last first, so that earlier offsets stay valid.
// A deletion takes one blank line with it when that line would otherwise
// double up with the blank line before the table, or end the file.
func editTables(src []byte, edits []tableEdit) []byte {
	slices.SortFunc(edits, func(a, b tableEdit) int { return b.t.start - a.t.start })
	for _, ed := range edits {
		s, e := ed.t.start, ed.t.end
		if ed.text == "" {
			blankBefore := s == 0 || bytes.HasSuffix(src[:s], []byte("\n\n")) || bytes.HasSuffix(src[:s], []byte("\n\r\n"))
			switch rest := src[e:]; {
			case len(bytes.TrimSpace(rest)) == 0 && blankBefore && len(bytes.TrimSpace(src[:s])) > 0:
				s = blankLineStart(src, s)
			case blankBefore && bytes.HasPrefix(rest, []byte("\n")):
				e++
			case blankBefore && bytes.HasPrefix(rest, []byte("\r\n")):
				e += 2
			}
		}
		src = splice(src, s, e, ed.text)
	}
	return src
}

// blankLineStart returns the offset where the blank line just before
// offset s starts (s is a line start preceded by a blank line).
func blankLineStart(src []byte, s int) int {
	p := s - 1 // the newline ending the blank line
	if p > 0 && src[p-1] == '\r' {
		p--
	}
	return p
}

// renderTOMLTable writes [keys] and one line per field.
func renderTOMLTable(keys []string, entry fields, nl string) string {
	var b strings.Builder
	b.WriteString("[")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(".")
		}
		b.WriteString(tomlKey(k))
	}
	b.WriteString("]" + nl)
	for _, f := range entry {
		b.WriteString(tomlKey(f.key) + " = " + renderTOMLValue(f.value) + nl)
	}
	return b.String()
}

// tomlKey writes a key bare when TOML allows it, else quoted.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyChar(k[i]) {
			return quoteString(k)
		}
	}
	return k
}

func isBareKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '-'
}

// scanTOML finds every table header of a valid TOML text and the lines
// that belong to it. It follows strings (multi-line ones too), comments
// and brackets, so that a line starting with '[' inside a multi-line array
// or string is not taken for a header.
func scanTOML(src []byte) []tomlTable {
	var tables []tomlTable
	depth := 0 // open [ and { of values
	for i := 0; i < len(src); {
		inValue := depth > 0 // this line continues a value
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if depth == 0 && j < len(src) && src[j] == '[' {
			if keys, array, after, ok := parseTOMLHeader(src, j); ok {
				next := min(lineEndOf(src, after)+1, len(src))
				tables = append(tables, tomlTable{keys: keys, array: array, start: i, end: next})
				i = next
				continue
			}
		}
		content := false
		for i = j; i < len(src) && src[i] != '\n'; {
			switch c := src[i]; c {
			case '#':
				i = lineEndOf(src, i)
			case ' ', '\t', '\r':
				i++
			case '"', '\'':
				content = true
				i = skipTOMLString(src, i)
			case '[', '{':
				content = true
				depth++
				i++
			case ']', '}':
				content = true
				depth = max(depth-1, 0)
				i++
			default:
				content = true
				i++
			}
		}
		i = min(i+1, len(src))
		if (content || inValue) && len(tables) > 0 {
			tables[len(tables)-1].end = i
		}
	}
	return tables
}

// skipTOMLString returns the offset just past the string starting at i.
func skipTOMLString(src []byte, i int) int {
	q := src[i]
	escapes := q == '"'
	if bytes.HasPrefix(src[i:], []byte{q, q, q}) {
		for j := i + 3; j < len(src); j++ {
			switch {
			case escapes && src[j] == '\\':
				j++
			case bytes.HasPrefix(src[j:], []byte{q, q, q}):
				k := j + 3
				for k < len(src) && src[k] == q && k < j+5 { // up to two quotes may end the content
					k++
				}
				return k
			}
		}
		return len(src)
	}
	for j := i + 1; j < len(src); j++ {
		switch {
		case escapes && src[j] == '\\':
			j++
		case src[j] == q:
			return j + 1
		case src[j] == '\n':
			return j
		}
	}
	return len(src)
}

// parseTOMLHeader reads [a.b."c"] or [[a.b]] at src[i] == '['. It returns
// the keys, whether it is an array table, and the offset after the header.
func parseTOMLHeader(src []byte, i int) (keys []string, array bool, after int, ok bool) {
	i++
	if i < len(src) && src[i] == '[' {
		array = true
		i++
	}
	blanks := func() {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
			i++
		}
	}
	for {
		blanks()
		if i >= len(src) {
			return nil, false, 0, false
		}
		switch c := src[i]; {
		case c == '"' || c == '\'':
			end := skipTOMLString(src, i)
			if end-i < 2 || src[end-1] != c {
				return nil, false, 0, false
			}
			k, err := unquoteTOMLKey(src[i:end])
			if err != nil {
				return nil, false, 0, false
			}
			keys = append(keys, k)
			i = end
		case isBareKeyChar(c):
			j := i
			for j < len(src) && isBareKeyChar(src[j]) {
				j++
			}
			keys = append(keys, string(src[i:j]))
			i = j
		default:
			return nil, false, 0, false
		}
		blanks()
		if i < len(src) && src[i] == '.' {
			i++
			continue
		}
		close := "]"
		if array {
			close = "]]"
		}
		if !bytes.HasPrefix(src[i:], []byte(close)) {
			return nil, false, 0, false
		}
		return keys, array, i + len(close), true
	}
}

// unquoteTOMLKey decodes a quoted key: 'literal' as is, "basic" with its
// escapes.
func unquoteTOMLKey(q []byte) (string, error) {
	s := string(q[1 : len(q)-1])
	if q[0] == '\'' {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", errors.New("dangling backslash")
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case '"', '\\':
			b.WriteByte(s[i])
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
			if i+n >= len(s) {
				return "", errors.New("short escape")
			}
			r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(r)) {
				return "", errors.New("bad escape")
			}
			b.WriteRune(rune(r))
			i += n
		default:
			return "", errors.New("unknown escape")
		}
	}
	return b.String(), nil
}
