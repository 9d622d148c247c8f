package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnknownFieldFileOrder: of several unknown fields, the one reported
// is the first in the file (not in the alphabet), at its own line and
// column, at every depth.
func TestUnknownFieldFileOrder(t *testing.T) {
	tests := []struct {
		name, body string
		want       string
	}{
		{"top level: z before a", "{\n  \"zebra\": 1,\n  \"apple\": 2\n}", `line 2, column 3: unknown field "zebra" at the top level`},
		{"top level: a before z", "{\"apple\": 2, \"zebra\": 1}", `line 1, column 2: unknown field "apple"`},
		{"known fields before, unknown after", `{"shell": "/bin/sh", "yy": 1, "bb": 2}`, `unknown field "yy"`},
		{"nested", `{"status": {"style": {"zz": "red", "aa": "red"}}}`, `unknown field "zz" in status.style`},
		{"nested comes before a later top-level one", `{"status": {"zz": 1}, "aa": 1}`, `unknown field "zz" in status`},
		{"map of structs, in file order", `{"language_servers": {"zgo": {"cmd": ["x"]}, "apy": {"opts": 1}}}`,
			`unknown field "cmd" in language_servers["zgo"]`},
		{"the same name known above, unknown below: the right one's place",
			"{\"status\": {\"left\": \"x\"},\n \"sandbox\": {\"left\": 1}}", `line 2, column 14: unknown field "left" in sandbox`},
		{"a key with escapes", `{"a\u00e9": 1, "b": 2}`, `line 1, column 2: unknown field "aé"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.json", []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%s) = %v, want an error with %q", tt.body, err, tt.want)
			}
		})
	}
}

// FuzzParseOrdered: the ordered parse of any valid JSON has the keys
// json.Unmarshal sees, each at an offset that names its opening quote.
func FuzzParseOrdered(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":{"c":[1,{"d":2}]}}`, "{\n \"x\" :\t{ \"y\":null } , \"z\":\"\\u00e9\"}", `[{"a":1}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		tree, err := parseOrdered(b)
		if err != nil {
			t.Fatalf("parseOrdered(%q): %v", b, err)
		}
		var check func(v any)
		check = func(v any) {
			switch v := v.(type) {
			case jsonObject:
				for _, m := range v {
					if m.off < 1 || m.off > int64(len(b)) || b[m.off-1] != '"' {
						t.Fatalf("key %q at offset %d of %q: not its opening quote", m.key, m.off, b)
					}
					check(m.value)
				}
			case []any:
				for _, e := range v {
					check(e)
				}
			}
		}
		check(tree)
	})
}
