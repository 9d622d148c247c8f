package agentconf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var codexEntry = fields{{"command", "/bin/phantom"}, {"args", []string{"+mcp-server"}}, {"tool_timeout_sec", 120}}

const codexTable = "[mcp_servers.phantom]\ncommand = \"/bin/phantom\"\nargs = [\"+mcp-server\"]\ntool_timeout_sec = 120\n"

// TestTOMLSetExact pins down what an install does to config.toml: our
// table is appended or replaced, no other line changes.
func TestTOMLSetExact(t *testing.T) {
	tests := []struct {
		name    string
		in, out string
	}{
		{"missing file", "", codexTable},
		{"settings without a final newline", "model = \"o3\"", "model = \"o3\"\n\n" + codexTable},
		{"other servers and comments",
			"# my config\nmodel = \"o3\"\n\n[mcp_servers.db] # db\ncommand = \"db\"\n",
			"# my config\nmodel = \"o3\"\n\n[mcp_servers.db] # db\ncommand = \"db\"\n\n" + codexTable},
		{"stale table replaced in place, comments around it kept",
			"a = 1\n\n# ours\n[mcp_servers.phantom]\ncommand = \"/old\" # moved\nargs = [\n  \"x\",\n]\n\n# the next one\n[mcp_servers.db]\ncommand = \"db\"\n",
			"a = 1\n\n# ours\n" + codexTable + "\n# the next one\n[mcp_servers.db]\ncommand = \"db\"\n"},
		{"quoted header and a sub-table",
			"[mcp_servers.\"phantom\"]\ncommand = \"/old\"\n\n[mcp_servers.phantom.env]\nX = \"1\"\n\n[other]\nk = 1\n",
			codexTable + "\n[other]\nk = 1\n"},
		{"only a sub-table of ours", "[mcp_servers.phantom.env]\nK = \"v\"\n", codexTable},
		{"CRLF", "a = 1\r\n", "a = 1\r\n\r\n" + strings.ReplaceAll(codexTable, "\n", "\r\n")},
	}
	f := tomlFile{[]string{"mcp_servers"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.set([]byte(tt.in), "phantom", codexEntry)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.out {
				t.Fatalf("set(%q) =\n%s\nwant\n%s", tt.in, out, tt.out)
			}
		})
	}
}

// TestTOMLRemove checks that uninstall removes our table and its
// sub-tables only, and undoes an install byte for byte.
func TestTOMLRemove(t *testing.T) {
	f := tomlFile{[]string{"mcp_servers"}}
	for _, in := range []string{
		"",
		"model = \"o3\"\n",
		"# c\n[mcp_servers.db]\ncommand = \"db\"\nargs = [\n  [\"[not a header]\"],\n]\ns = '''\n[also not]\n'''\n",
		"[profiles.x]\nmodel = \"o3\"\n\n# trailing comment\n",
	} {
		out, err := f.set([]byte(in), "phantom", codexEntry)
		if err != nil {
			t.Fatalf("set(%q): %v", in, err)
		}
		back, removed, err := f.remove(out, "phantom")
		if err != nil || !removed {
			t.Fatalf("remove(%q) = %v, %v", out, removed, err)
		}
		if string(back) != in {
			t.Errorf("install then uninstall of\n%q\ngave\n%q", in, back)
		}
	}
	in := "a = 1\n\n[mcp_servers.phantom]\ncommand = \"x\"\n\n[mcp_servers.phantom.env]\nK = \"v\"\n\n[b]\nc = 2\n"
	out, _, err := f.remove([]byte(in), "phantom")
	if want := "a = 1\n\n[b]\nc = 2\n"; err != nil || string(out) != want {
		t.Errorf("remove(%q) = %q, %v; want %q", in, out, err, want)
	}
}

// TestTOMLRefuses checks broken files and entries we do not edit.
func TestTOMLRefuses(t *testing.T) {
	f := tomlFile{[]string{"mcp_servers"}}
	tests := []struct {
		name, in, want string
		line, col      int
	}{
		{name: "syntax error", in: "a = 1\nb = \n", line: 2, col: 5},
		{name: "duplicate key", in: "a = 1\na = 2\n", line: 2, col: 1},
		{name: "inline entry", in: "[mcp_servers]\nphantom = { command = \"x\" }\n", want: "written inline or with dotted keys"},
		{name: "dotted entry", in: "mcp_servers.phantom.command = \"x\"\n", want: "written inline or with dotted keys"},
		{name: "dotted entry beside a sub-table", in: "[mcp_servers]\nphantom.x = 1\n\n[mcp_servers.phantom.env]\nK = \"v\"\n", want: "written inline or with dotted keys"},
		{name: "servers not a table", in: "mcp_servers = 1\n", want: "mcp_servers is not a table"},
		{name: "entry not a table", in: "[mcp_servers]\nphantom = 1\n", want: "mcp_servers.phantom is not a table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.set([]byte(tt.in), "phantom", codexEntry)
			if err == nil {
				t.Fatal("set succeeded")
			}
			var se *SyntaxError
			if tt.line > 0 {
				if !errors.As(err, &se) || se.Line != tt.line || se.Column != tt.col {
					t.Errorf("set(%q) = %v, want line %d, column %d", tt.in, err, tt.line, tt.col)
				}
			} else if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("set(%q) = %v, want %q", tt.in, err, tt.want)
			}
			if _, _, err := f.remove([]byte(tt.in), "phantom"); err == nil && tt.line > 0 {
				t.Errorf("remove accepted a broken file")
			}
		})
	}
}

// TestScanTOML checks the header finder on what could fool a line-based one.
func TestScanTOML(t *testing.T) {
	src := "top = 1\n" +
		"[ a . \"b.c\" ]  # comment [x]\n" +
		"k = \"\"\"\n[not.a.header]\n\"\"\"\n" +
		"arr = [\n  [1],\n  # [no]\n]\n" +
		"\n# after\n" +
		"[[t]]\n" +
		"'lit' = 'x'\n"
	got := scanTOML([]byte(src))
	want := []tomlTable{
		{keys: []string{"a", "b.c"}, start: 8, end: strings.Index(src, "\n\n# after") + 1},
		{keys: []string{"t"}, array: true, start: strings.Index(src, "[[t]]"), end: len(src)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scanTOML =\n%+v\nwant\n%+v", got, want)
	}
}
