package agentconf

import (
	"strings"
	"testing"
)

// testEntry is a small entry, so that expected texts stay readable.
var testEntry = fields{{"command", "/bin/phantom"}, {"args", []string{"+mcp-server"}}}

// TestJSONSetExact pins down, byte for byte, what an install does to a
// range of files: everything outside our entry stays as it was.
func TestJSONSetExact(t *testing.T) {
	tests := []struct {
		name    string
		d       dialect
		in, out string
	}{
		{"missing file", plainJSON, "",
			"{\n  \"mcpServers\": {\n    \"phantom\": {\n      \"command\": \"/bin/phantom\",\n      \"args\": [\"+mcp-server\"]\n    }\n  }\n}\n"},
		{"empty object", plainJSON, "{}\n",
			"{\n  \"mcpServers\": {\n    \"phantom\": {\n      \"command\": \"/bin/phantom\",\n      \"args\": [\"+mcp-server\"]\n    }\n  }\n}\n"},
		{"other settings, no servers", plainJSON, "{\n    \"theme\": \"dark\"\n}\n",
			"{\n    \"mcpServers\": {\n        \"phantom\": {\n            \"command\": \"/bin/phantom\",\n            \"args\": [\"+mcp-server\"]\n        }\n    },\n    \"theme\": \"dark\"\n}\n"},
		{"other servers and comments", jsonc, "{\n  // mine\n  \"mcpServers\": { // servers\n    \"db\": {\"command\": \"db\"}, // the db\n  },\n}\n",
			"{\n  // mine\n  \"mcpServers\": { // servers\n    \"phantom\": {\n      \"command\": \"/bin/phantom\",\n      \"args\": [\"+mcp-server\"]\n    },\n    \"db\": {\"command\": \"db\"}, // the db\n  },\n}\n"},
		{"tabs and CRLF", plainJSON, "{\r\n\t\"mcpServers\": {\r\n\t\t\"db\": {}\r\n\t}\r\n}\r\n",
			"{\r\n\t\"mcpServers\": {\r\n\t\t\"phantom\": {\r\n\t\t\t\"command\": \"/bin/phantom\",\r\n\t\t\t\"args\": [\"+mcp-server\"]\r\n\t\t},\r\n\t\t\"db\": {}\r\n\t}\r\n}\r\n"},
		{"one line", plainJSON, `{"a":1,"mcpServers":{"db":{}}}`,
			`{"a":1,"mcpServers":{"phantom": {"command": "/bin/phantom", "args": ["+mcp-server"]}, "db":{}}}`},
		{"one line, empty servers", plainJSON, `{"mcpServers":{}}`,
			`{"mcpServers":{"phantom": {"command": "/bin/phantom", "args": ["+mcp-server"]}}}`},
		{"servers holding only a comment", jsonc, "{\"mcpServers\": {\n  // none yet\n}}",
			"{\"mcpServers\": {\n  \"phantom\": {\n    \"command\": \"/bin/phantom\",\n    \"args\": [\"+mcp-server\"]\n  }\n  // none yet\n}}"},
		{"a stale entry is replaced in place", plainJSON, "{\"mcpServers\": {\n  \"a\": 1,\n  \"phantom\": {\"command\": \"/old\"},\n  \"b\": 2\n}}",
			"{\"mcpServers\": {\n  \"a\": 1,\n  \"phantom\": {\n    \"command\": \"/bin/phantom\",\n    \"args\": [\"+mcp-server\"]\n  },\n  \"b\": 2\n}}"},
		{"only comments", jsonc, "// settings\n",
			"// settings\n{\n  \"mcpServers\": {\n    \"phantom\": {\n      \"command\": \"/bin/phantom\",\n      \"args\": [\"+mcp-server\"]\n    }\n  }\n}\n"},
	}
	f := func(d dialect) jsonFile { return jsonFile{d, []string{"mcpServers"}} }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f(tt.d).set([]byte(tt.in), "phantom", testEntry)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.out {
				t.Fatalf("set(%q) =\n%s\nwant\n%s", tt.in, out, tt.out)
			}
			if _, err := parseJSON(out, tt.d); err != nil {
				t.Errorf("the result does not parse as %s: %v", tt.d.name, err)
			}
		})
	}
}

// TestJSONRemoveExact pins down what an uninstall does, wherever our entry
// sits: it and the comma joining it go, nothing else.
func TestJSONRemoveExact(t *testing.T) {
	tests := []struct {
		name    string
		in, out string
	}{
		{"first of several", "{\"s\": {\n  \"phantom\": {},\n  \"b\": 2\n}}", "{\"s\": {\n  \"b\": 2\n}}"},
		{"last of several", "{\"s\": {\n  \"a\": 1, // keep me\n  \"phantom\": {}\n}}", "{\"s\": {\n  \"a\": 1 // keep me\n}}"},
		{"middle", "{\"s\": {\n  \"a\": 1,\n  \"phantom\": {\n    \"x\": 1\n  },\n  \"b\": 2\n}}", "{\"s\": {\n  \"a\": 1,\n  \"b\": 2\n}}"},
		{"one line, first", `{"s": {"phantom": {}, "b": 2}}`, `{"s": {"b": 2}}`},
		{"one line, last", `{"s": {"a": 1, "phantom": {}}}`, `{"s": {"a": 1}}`},
		{"trailing comma", "{\"s\": {\n  \"a\": 1,\n  \"phantom\": {},\n}}", "{\"s\": {\n  \"a\": 1,\n}}"},
		{"only entry: the servers object goes too", "{\n  \"x\": 1,\n  \"s\": {\n    \"phantom\": {}\n  }\n}", "{\n  \"x\": 1\n}"},
		{"only entry beside a comment: the object stays", "{\"s\": { // mine\n  \"phantom\": {}\n}}", "{\"s\": { // mine\n}}"},
		{"comment after the entry stays", "{\"s\": {\n  \"phantom\": {}, // ours?\n  \"b\": 2\n}}", "{\"s\": {\n  // ours?\n  \"b\": 2\n}}"},
		{"absent", "{\"s\": {\"a\": 1}}", "{\"s\": {\"a\": 1}}"},
		{"no servers object", "{\"x\": 1}", "{\"x\": 1}"},
	}
	f := jsonFile{jsonc, []string{"s"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, removed, err := f.remove([]byte(tt.in), "phantom")
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.out {
				t.Fatalf("remove(%q) =\n%s\nwant\n%s", tt.in, out, tt.out)
			}
			if removed != (tt.in != tt.out) {
				t.Errorf("remove reported removed=%v", removed)
			}
		})
	}
}

// TestJSONInstallUninstallRestores checks that uninstall undoes install
// byte for byte on files that had no servers object or a non-empty one.
func TestJSONInstallUninstallRestores(t *testing.T) {
	for _, in := range []string{
		"{\n  \"theme\": \"dark\"\n}\n",
		"{\n  // mine\n  \"mcpServers\": { // servers\n    \"db\": {\"command\": \"db\"}, // the db\n  },\n}\n",
		"{ /* a */ \"mcpServers\": { /* b\n */ \"db\": 1 } }",
		`{"a":1,"mcpServers":{"db":{}}}`,
		"{\"mcpServers\": {\n  // none yet\n}}",
		"{\r\n\t\"x\": [1,\r\n\t\t2]\r\n}",
	} {
		f := jsonFile{jsonc, []string{"mcpServers"}}
		out, err := f.set([]byte(in), "phantom", testEntry)
		if err != nil {
			t.Fatalf("set(%q): %v", in, err)
		}
		back, _, err := f.remove(out, "phantom")
		if err != nil {
			t.Fatalf("remove(%q): %v", out, err)
		}
		if string(back) != in {
			t.Errorf("install then uninstall of\n%q\ngave\n%q", in, back)
		}
	}
}

// TestJSONRefusesWrongShapes checks files whose structure leaves no place
// for our entry.
func TestJSONRefusesWrongShapes(t *testing.T) {
	f := jsonFile{plainJSON, []string{"mcpServers"}}
	for in, want := range map[string]string{
		"[]":                     "the top level is an array, not an object",
		"{\n\"mcpServers\": []}": `"mcpServers" at line 2, column 15 is an array, not an object`,
	} {
		_, err := f.set([]byte(in), "phantom", testEntry)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("set(%q) = %v, want %q", in, err, want)
		}
	}
}
