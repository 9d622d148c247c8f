package toolreg

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// Wait is what a call of a tool may wait for (the option's waits_for and
// wait_bound), so that the gateway tells its client while it waits.
type Wait struct {
	// For completes "<tool> is waiting for …"; {field} placeholders name
	// request fields (see Describe).
	For string
	// Bound is the request field holding the longest wait; nil for a
	// fixed bound (Default).
	Bound protoreflect.FieldDescriptor
	// Unit is what one of Bound's units lasts (a second, a millisecond).
	Unit time.Duration
	// Default is the bound when Bound is unset, or the fixed bound; 0
	// when none is stated.
	Default time.Duration
}

// placeholder is a {field} in waits_for.
var placeholder = regexp.MustCompile(`\{([a-z_][a-z0-9_]*)\}`)

// newWait checks the option's waits_for and wait_bound; nil when the tool
// states no wait.
func newWait(req protoreflect.MessageDescriptor, opt *mcpv1.Tool) (*Wait, error) {
	what, b := opt.GetWaitsFor(), opt.GetWaitBound()
	if what == "" {
		if b != nil {
			return nil, fmt.Errorf("wait_bound without waits_for: say what the call waits for")
		}
		return nil, nil
	}
	for _, m := range placeholder.FindAllStringSubmatch(what, -1) {
		f, err := field(req, "waits_for", m[1])
		if err != nil {
			return nil, err
		}
		if f.IsList() || f.IsMap() || f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind {
			return nil, fmt.Errorf("waits_for field %q of %s is a %s; only a scalar can be shown", m[1], req.FullName(), kindOf(f))
		}
	}
	w := &Wait{For: what, Default: time.Duration(b.GetDefaultSeconds()) * time.Second}
	if name := b.GetField(); name != "" {
		f, err := field(req, "wait_bound", name)
		if err != nil {
			return nil, err
		}
		switch f.Kind() {
		case protoreflect.Int32Kind, protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Uint64Kind:
		default:
			return nil, fmt.Errorf("wait_bound field %q of %s is a %s, not an integer", name, req.FullName(), kindOf(f))
		}
		switch {
		case f.IsList():
			return nil, fmt.Errorf("wait_bound field %q of %s is a list, not an integer", name, req.FullName())
		case strings.HasSuffix(name, "_seconds"):
			w.Unit = time.Second
		case strings.HasSuffix(name, "_ms"):
			w.Unit = time.Millisecond
		default:
			return nil, fmt.Errorf("wait_bound field %q: its name must say its unit (end in _seconds or _ms)", name)
		}
		if !hasMaximum(f) {
			return nil, fmt.Errorf("wait_bound field %q of %s has no maximum: give it a (buf.validate.field) lte rule, so that no call waits without a bound", name, req.FullName())
		}
		w.Bound = f
	}
	return w, nil
}

// hasMaximum reports whether f's protovalidate rules bound it from above.
func hasMaximum(f protoreflect.FieldDescriptor) bool {
	r, _ := proto.GetExtension(f.Options(), validate.E_Field).(*validate.FieldRules)
	switch f.Kind() {
	case protoreflect.Int32Kind:
		return r.GetInt32().HasLte()
	case protoreflect.Uint32Kind:
		return r.GetUint32().HasLte()
	case protoreflect.Int64Kind:
		return r.GetInt64().HasLte()
	case protoreflect.Uint64Kind:
		return r.GetUint64().HasLte()
	}
	return false
}

// Generic is what any call waits for, each placeholder shown as the
// field's name in angle brackets: "`<command>` to finish in tab
// <terminal_id>".
func (w *Wait) Generic() string {
	return placeholder.ReplaceAllString(w.For, "<$1>")
}

// Describe is what the call req waits for, its placeholders filled in
// with req's fields (a string field longer than 80 characters cut), and
// its bound: the bound field's value when set, else Default.
func (w *Wait) Describe(req protoreflect.Message) (what string, bound time.Duration) {
	fields := req.Descriptor().Fields()
	what = placeholder.ReplaceAllStringFunc(w.For, func(m string) string {
		f := fields.ByName(protoreflect.Name(m[1 : len(m)-1]))
		v := req.Get(f)
		s := v.String()
		if f.Kind() == protoreflect.EnumKind {
			if ev := f.Enum().Values().ByNumber(v.Enum()); ev != nil {
				s = string(ev.Name())
			}
		}
		if r := []rune(s); len(r) > 80 {
			s = string(r[:79]) + "…"
		}
		return s
	})
	bound = w.Default
	if w.Bound != nil && req.Has(w.Bound) {
		switch v := req.Get(w.Bound).Interface().(type) {
		case int32:
			bound = time.Duration(v) * w.Unit
		case int64:
			bound = time.Duration(v) * w.Unit
		case uint32:
			bound = time.Duration(v) * w.Unit
		case uint64:
			bound = time.Duration(v) * w.Unit
		}
	}
	return what, bound
}
