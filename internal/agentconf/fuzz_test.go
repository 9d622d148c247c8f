package agentconf

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2/unstable"
)

// The fuzz targets' seeds live in testdata/fuzz/<target>/; a plain
// `go test` runs them, `go test -fuzz=<target>` explores from them.

// FuzzJSONParse checks the parser against encoding/json: the same texts are
// valid plain JSON, they decode to the same values, and nothing panics in
// any dialect.
func FuzzJSONParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range []dialect{jsonc, jsonComments} {
			if _, err := parseJSON(data, d); err != nil {
				checkSyntaxError(t, err)
			}
		}
		doc, err := parseJSON(data, plainJSON)
		if err != nil {
			checkSyntaxError(t, err)
			if strings.Contains(err.Error(), "nested more than") {
				return // deeper than encoding/json's limit lets us compare
			}
		}
		body := bytes.TrimPrefix(data, []byte("\uFEFF"))
		if len(bytes.Trim(body, " \t\r\n")) == 0 {
			if err != nil || doc.root != nil {
				t.Fatalf("blank input: %v", err)
			}
			return
		}
		if valid := json.Valid(body); valid != (err == nil) {
			t.Fatalf("encoding/json says valid=%v, we say %v, for %q", valid, err, data)
		}
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := doc.root.decode(data); !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %#v, encoding/json %#v", got, want)
		}
	})
}

func checkSyntaxError(t *testing.T, err error) {
	t.Helper()
	se, ok := err.(*SyntaxError)
	if !ok || se.Line < 1 || se.Column < 1 || se.Msg == "" {
		t.Fatalf("not a usable syntax error: %#v", err)
	}
}

// FuzzJSONEdit checks install and uninstall on any file that parses: the
// result parses in the file's own dialect, holds our entry (or not), keeps
// every other value, changes only blanks outside our span, and uninstall
// undoes install.
func FuzzJSONEdit(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := plainJSON
		if _, err := parseJSON(data, d); err != nil {
			d = jsonc
			if _, err := parseJSON(data, d); err != nil {
				return
			}
		}
		jf := jsonFile{d, []string{"mcpServers"}}
		before, had, err := jf.get(data, "phantom")
		if err != nil {
			return // duplicate keys, a servers value that is not an object, …
		}
		out, err := jf.set(data, "phantom", testEntry)
		if err != nil {
			return
		}
		got, ok, err := jf.get(out, "phantom")
		if err != nil || !ok || !sameValue(got, testEntry) {
			t.Fatalf("after set: %v %v %v\n%s", got, ok, err, out)
		}
		if !had {
			// Only our entry was inserted; at most blanks were replaced.
			p, s := commonEnds(data, out)
			if len(bytes.Trim(data[p:len(data)-s], " \t\r\n")) > 0 {
				t.Fatalf("set changed %q into %q", data[p:len(data)-s], out[p:len(out)-s])
			}
		}
		back, removed, err := jf.remove(out, "phantom")
		if err != nil || !removed {
			t.Fatalf("remove after set: %v, %v\n%s", removed, err, out)
		}
		if _, err := parseJSON(back, d); err != nil {
			t.Fatalf("remove left text that does not parse: %v\n%s", err, back)
		}
		if _, still, _ := jf.get(back, "phantom"); still {
			t.Fatalf("remove left the entry")
		}
		want := withoutEntry(t, data, d)
		if gotBack := withoutEntry(t, back, d); !reflect.DeepEqual(gotBack, want) {
			t.Fatalf("other values changed:\n%#v\nwant\n%#v", gotBack, want)
		}
		_ = before
	})
}

// withoutEntry decodes a document, drops mcpServers.phantom and an
// mcpServers left empty, which is what uninstall promises to leave.
func withoutEntry(t *testing.T, src []byte, d dialect) any {
	doc, err := parseJSON(src, d)
	if err != nil {
		t.Fatal(err)
	}
	if doc.root == nil {
		return map[string]any{}
	}
	v := doc.root.decode(src)
	if m, ok := v.(map[string]any); ok {
		if s, ok := m["mcpServers"].(map[string]any); ok {
			delete(s, "phantom")
			if len(s) == 0 {
				delete(m, "mcpServers")
			}
		}
	}
	return v
}

// commonEnds returns the lengths of a's and b's common prefix and suffix.
func commonEnds(a, b []byte) (p, s int) {
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return p, s
}

// FuzzTOMLTables checks the header finder against go-toml's own parser:
// the same tables, in the same order, each starting at its '['.
func FuzzTOMLTables(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeTOML(data); err != nil {
			scanTOML(data) // must not panic on anything
			return
		}
		var want [][]string
		p := unstable.Parser{}
		p.Reset(data)
		for p.NextExpression() {
			e := p.Expression()
			if e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
				continue
			}
			var keys []string
			for it := e.Key(); it.Next(); {
				keys = append(keys, string(it.Node().Data))
			}
			want = append(want, keys)
		}
		var got [][]string
		for _, tb := range scanTOML(data) {
			got = append(got, tb.keys)
			if line := bytes.TrimLeft(data[tb.start:], " \t"); len(line) == 0 || line[0] != '[' || tb.end < tb.start || tb.end > len(data) {
				t.Fatalf("table %v spans [%d, %d) of %q", tb.keys, tb.start, tb.end, data)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("headers %q, go-toml %q in %q", got, want, data)
		}
	})
}

// FuzzTOMLEdit checks install and uninstall on any valid TOML: each edit
// either passes its own verification (our table as intended, every other
// setting unchanged) or is refused for a reason a user can act on.
func FuzzTOMLEdit(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tf := tomlFile{[]string{"mcp_servers"}}
		if _, err := decodeTOML(data); err != nil {
			return
		}
		_, had, _ := tf.get(data, "phantom")
		out, err := tf.set(data, "phantom", codexEntry)
		if err != nil {
			if strings.Contains(err.Error(), "bug") {
				t.Fatalf("set: %v\n%s", err, data)
			}
			return
		}
		back, _, err := tf.remove(out, "phantom")
		if err != nil {
			t.Fatalf("remove after set: %v\n%s", err, out)
		}
		// Install separates its table by one blank line, which uninstall
		// takes back; a file that ended in a blank line of its own loses it.
		ending := string(data[len(bytes.TrimRight(data, "\r\n")):])
		if !had && (ending == "\n" || ending == "\r\n") && !bytes.Equal(back, data) {
			t.Fatalf("uninstall did not undo install:\n%q\n%q", data, back)
		}
	})
}
