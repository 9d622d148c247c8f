package agentconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// field is one key of an entry we write. Entries are ordered lists rather
// than maps so that what we write reads the way each agent's docs show it.
type field struct {
	key   string
	value any // string, []string, int, bool or fields
}

// fields is an object whose key order matters.
type fields []field

// quoteString encodes s as a JSON string, which is also a valid TOML basic
// string, without the HTML escaping encoding/json does by default.
func quoteString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// renderJSON writes v as JSON. With nl == "" it is one line; otherwise
// objects put one member per line, indented by indent+unit, and the closing
// brace at indent. Arrays of strings stay on one line either way.
func renderJSON(v any, indent, unit, nl string) string {
	var b strings.Builder
	writeJSON(&b, v, indent, unit, nl)
	return b.String()
}

func writeJSON(b *strings.Builder, v any, indent, unit, nl string) {
	switch v := v.(type) {
	case fields:
		if len(v) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{")
		for i, f := range v {
			if i > 0 {
				b.WriteString(",")
				if nl == "" {
					b.WriteString(" ")
				}
			}
			b.WriteString(nl)
			if nl != "" {
				b.WriteString(indent + unit)
			}
			b.WriteString(quoteString(f.key) + ": ")
			writeJSON(b, f.value, indent+unit, unit, nl)
		}
		b.WriteString(nl)
		if nl != "" {
			b.WriteString(indent)
		}
		b.WriteString("}")
	case []string:
		b.WriteString("[")
		for i, s := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteString(s))
		}
		b.WriteString("]")
	case string:
		b.WriteString(quoteString(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		panic(fmt.Sprintf("agentconf: cannot render %T", v))
	}
}

// renderTOMLValue writes a scalar or a string array as TOML.
func renderTOMLValue(v any) string {
	switch v.(type) {
	case fields:
		panic("agentconf: nested tables are not rendered inline")
	}
	return renderJSON(v, "", "", "")
}

// plain converts v to the shape encoding/json gives a decoded value
// (map[string]any, []any, string, float64, bool, nil), so that what we
// would write and what a file holds compare equal however each was read.
func plain(v any) any {
	switch v := v.(type) {
	case fields:
		m := make(map[string]any, len(v))
		for _, f := range v {
			m[f.key] = plain(f.value)
		}
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v // not representable in JSON (a TOML date): compares unequal to ours
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// sameValue reports whether two values are equal once both are plain.
func sameValue(a, b any) bool { return reflect.DeepEqual(plain(a), plain(b)) }
