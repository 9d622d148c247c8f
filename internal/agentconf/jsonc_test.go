package agentconf

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestParseJSONRefuses checks that what an agent could not read is refused
// with the line and column of the fault, in plain words.
func TestParseJSONRefuses(t *testing.T) {
	tests := []struct {
		name      string
		d         dialect
		in        string
		line, col int
		msg       string
	}{
		{"missing comma", plainJSON, "{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected ',' or '}'"},
		{"comment in plain JSON", plainJSON, "{\n  // hi\n}", 2, 3, "comments are not allowed in plain JSON"},
		{"trailing comma in plain JSON", plainJSON, "{\"a\": 1,}", 1, 8, "trailing comma"},
		{"trailing comma where only comments are allowed", jsonComments, "[1,\n]", 1, 3, "trailing comma"},
		{"unclosed block comment", jsonc, "{} /* never", 1, 4, "comment is not closed"},
		{"single quotes", jsonc, "{'a': 1}", 1, 2, "member name in double quotes"},
		{"unquoted key", jsonc, "{a: 1}", 1, 2, "member name in double quotes"},
		{"unclosed string", plainJSON, "{\"a\": \"b\n}", 1, 7, "string is not closed"},
		{"bad escape", plainJSON, `["\x"]`, 1, 3, `unknown escape 'x'`},
		{"leading zero", plainJSON, "[01]", 1, 3, "expected ',' or ']'"},
		{"bare minus", plainJSON, "[-]", 1, 2, "malformed number"},
		{"NaN", jsonc, "[NaN]", 1, 2, "unexpected 'N'"},
		{"two documents", plainJSON, "{}\n{}", 2, 1, "after the end of the document"},
		{"column counts characters", plainJSON, "{\"é\": x}", 1, 7, "unexpected 'x'"},
		{"missing colon", plainJSON, `{"a" 1}`, 1, 6, `expected ':' after the member name "a"`},
		{"end of file", plainJSON, `{"a": `, 1, 7, "unexpected end of file"},
		{"too deep", plainJSON, strings.Repeat("[", maxDepth+2), 1, maxDepth + 2, "nested more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseJSON([]byte(tt.in), tt.d)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("parse(%q) = %v, want a SyntaxError", tt.in, err)
			}
			if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("parse(%q) = %q, want line %d, column %d, containing %q", tt.in, se, tt.line, tt.col, tt.msg)
			}
		})
	}
}

// TestParseJSONAccepts checks each dialect's extensions and that decoding
// gives what encoding/json gives once comments are gone.
func TestParseJSONAccepts(t *testing.T) {
	tests := []struct {
		name  string
		d     dialect
		in    string
		plain string // the same document in plain JSON
	}{
		{"plain", plainJSON, `{"a": [1, -2.5e3, true, null, "\u00e9\n"], "b": {}}`, `{"a": [1, -2.5e3, true, null, "\u00e9\n"], "b": {}}`},
		{"byte-order mark", plainJSON, "\uFEFF{\"a\": 1}", `{"a": 1}`},
		{"comments", jsonComments, "// head\n{\"a\": /* x */ 1 // tail\n}", `{"a": 1}`},
		{"comment-like text in strings", plainJSON, `{"url": "http://x/*y*/"}`, `{"url": "http://x/*y*/"}`},
		{"trailing commas", jsonc, "{\"a\": [1, 2,],\n}", `{"a": [1, 2]}`},
		{"scalar root", plainJSON, ` "s" `, `"s"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parseJSON([]byte(tt.in), tt.d)
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.in, err)
			}
			dec := json.NewDecoder(strings.NewReader(tt.plain))
			dec.UseNumber()
			var want any
			if err := dec.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if got := doc.root.decode(doc.src); !reflect.DeepEqual(got, want) {
				t.Errorf("decode(%q) = %#v, want %#v", tt.in, got, want)
			}
		})
	}
}

// TestParseJSONEmpty checks that a file with nothing in it is a document
// without a root, which set() fills in.
func TestParseJSONEmpty(t *testing.T) {
	for _, in := range []string{"", "  \n", "// nothing yet\n", "/* x */"} {
		doc, err := parseJSON([]byte(in), jsonc)
		if err != nil || doc.root != nil {
			t.Errorf("parse(%q) = %v, %v; want an empty document", in, doc, err)
		}
	}
}

// TestParseJSONDuplicateEntry checks that two entries of one name are
// refused by line rather than one of them edited at random.
func TestParseJSONDuplicateEntry(t *testing.T) {
	f := jsonFile{plainJSON, []string{"mcpServers"}}
	in := "{\"mcpServers\": {\n\"phantom\": {},\n\"phantom\": {}\n}}"
	_, err := f.set([]byte(in), "phantom", fields{{"command", "x"}})
	if err == nil || !strings.Contains(err.Error(), "lines 2 and 3") {
		t.Errorf("set on a duplicate entry: %v, want an error naming lines 2 and 3", err)
	}
}
