package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// decode fills c from the JSON text b. Its errors say where (line and
// column) and what was wrong in the words of the file, not of the JSON
// library: a syntax error, a field this version does not know (with the
// nearest known name), a value of the wrong type.
func decode(b []byte, c *Config) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil // an empty file is no setting, like a missing one
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s: %s (not valid JSON)", position(b, se.Offset), strings.TrimPrefix(se.Error(), "json: "))
		}
		return fmt.Errorf("not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, ok := tree.(map[string]any); !ok {
		return fmt.Errorf("the file must hold one JSON object, {…}, not %s", jsonKind(tree))
	}
	ordered, err := parseOrdered(b)
	if err != nil {
		return fmt.Errorf("not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if err := unknownFields(b, ordered, reflect.TypeFor[Config](), ""); err != nil {
		return err
	}
	if err := json.Unmarshal(b, c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: %s must be %s, not %s", position(b, te.Offset), te.Field, typeWords(te.Type), valueWords(te.Value))
		}
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// member is one key of a JSON object, in the file's order: its name,
// the offset of its opening quote plus one (as position takes it), and
// its value (a jsonObject for an object, else whatever json decodes).
type member struct {
	key   string
	off   int64
	value any
}

// jsonObject is a JSON object with its keys in the order of the file, so
// that a check reports the first wrong key a reader meets, not the first
// in the alphabet.
type jsonObject []member

// parseOrdered decodes the JSON text b (already known to be valid) with
// its objects' keys in the file's order.
func parseOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return readOrdered(dec, b)
}

// readOrdered reads the next value from dec.
func readOrdered(dec *json.Decoder, b []byte) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var obj jsonObject
		for dec.More() {
			// The key starts after the blanks and the comma that follow
			// the previous token.
			at := dec.InputOffset()
			for at < int64(len(b)) && strings.IndexByte(" \t\r\n,", b[at]) >= 0 {
				at++
			}
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := k.(string)
			v, err := readOrdered(dec, b)
			if err != nil {
				return nil, err
			}
			obj = append(obj, member{key: key, off: at + 1, value: v})
		}
		_, err := dec.Token() // }
		return obj, err
	case json.Delim('['):
		var list []any
		for dec.More() {
			v, err := readOrdered(dec, b)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ]
		return list, err
	}
	return tok, nil
}

// unknownFields reports the first object key in tree (parseOrdered's),
// in the file's order, that the Go type t has no field for, walking
// structs and maps of structs.
func unknownFields(b []byte, tree any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	obj, ok := tree.(jsonObject)
	if !ok {
		return nil // a type error, reported by the real decode
	}
	switch {
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		for _, m := range obj {
			if err := unknownFields(b, m.value, t.Elem(), fmt.Sprintf("%s[%q]", path, m.key)); err != nil {
				return err
			}
		}
		return nil
	case t.Kind() != reflect.Struct || t == reflect.TypeFor[json.RawMessage]():
		return nil
	}
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	known := slices.Sorted(maps.Keys(fields))
	for _, m := range obj {
		ft, ok := fields[m.key]
		if !ok {
			where := "at the top level"
			if path != "" {
				where = "in " + path
			}
			return fmt.Errorf("%s: unknown field %q %s%s; the fields there are %s",
				position(b, m.off), m.key, where, suggest(m.key, known), strings.Join(known, ", "))
		}
		sub := m.key
		if path != "" {
			sub = path + "." + m.key
		}
		if err := unknownFields(b, m.value, ft, sub); err != nil {
			return err
		}
	}
	return nil
}

// position writes a byte offset of b as "line L, column C" (1-based).
func position(b []byte, off int64) string {
	off = min(max(off, 1), int64(len(b)))
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n') - 1
	return fmt.Sprintf("line %d, column %d", line, max(col, 1))
}

// typeWords says what a Go type looks like in JSON.
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string in quotes"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list, [...]"
	case reflect.Map, reflect.Struct:
		return "an object, {...}"
	}
	return "a " + t.String()
}

// valueWords names a JSON value kind as json.UnmarshalTypeError gives it.
func valueWords(v string) string {
	switch v {
	case "string", "number":
		return "a " + v
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "bool":
		return "true or false"
	}
	return v
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	case nil:
		return "null"
	}
	return "something else"
}

// suggest returns ` (did you mean "x"?)` for the known name nearest to
// name, when one is near enough to be a slip; else "".
func suggest(name string, known []string) string {
	best, bestD := "", len(name)/3+2
	for _, k := range known {
		if d := distance(strings.ToLower(name), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
