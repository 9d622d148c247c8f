package policy

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// touches works out the call's reach from the tool's reach field and says
// what it touches in words: the target, the subject fields, and why the
// reach is what it is. A tool's special rule checks and words it when it
// has one. It records the target and the typed text in e.
func (e *evaluation) touches() (Scope, string, error) {
	t := e.tool
	values := make([]protoreflect.Value, len(t.Subject))
	for i, f := range t.Subject {
		values[i] = e.req.Get(f)
	}
	sp := specials[t.Name]
	var (
		reach       Scope
		target, why string
		sep         = ", "
	)
	switch t.Reach.Kind {
	case mcpv1.ReachKind_REACH_KIND_TAB:
		r, tab, w, err := e.reachTab(t.Reach.Field)
		if err != nil {
			return 0, "", err
		}
		if sp.check != nil {
			if err := sp.check(tab, values); err != nil {
				return 0, "", err
			}
		}
		reach, target, why = r, describeTab(tab), w
		e.target = tab.ID
	case mcpv1.ReachKind_REACH_KIND_DIRECTORY:
		dir, err := e.dirArg(t.Reach.Field)
		if err != nil {
			return 0, "", err
		}
		reach, why = e.reachDir(dir)
		e.target = dir
		target, sep = string(t.Reach.Field.Name())+" "+printable(dir), "; "
	default:
		return 0, "", fmt.Errorf("tool %s: reach %s cannot be evaluated", t.Name, t.Reach.Kind)
	}
	if sp.typed != nil {
		e.typed = sp.typed(values)
	}
	if sp.say != nil {
		return reach, sp.say(e, target, values, why) + e.others(), nil
	}
	subject := target
	for i, f := range t.Subject {
		if e.req.Has(f) {
			subject += ", " + string(f.Name()) + " " + showValue(f, values[i])
		}
	}
	return reach, subject + sep + why + e.others(), nil
}

// others words every other argument the call sets — neither the reach
// field nor a subject field nor one hidden from agents (the gateway's
// caller fields) — so that the sheet shows the whole call: a "once" is
// for exactly what the human read (see call).
func (e *evaluation) others() string {
	var parts []string
	fields := e.req.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if !e.req.Has(f) || f == e.tool.Reach.Field || slices.Contains(e.tool.Subject, f) || e.tool.Hidden[f.Name()] {
			continue
		}
		parts = append(parts, string(f.Name())+" "+showValue(f, e.req.Get(f)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; with " + strings.Join(parts, ", ")
}

// showValue writes a subject field's value for the sheet: text quoted
// whole (see quote), lists item by item, maps pair by pair, enums by name.
func showValue(f protoreflect.FieldDescriptor, v protoreflect.Value) string {
	if f.IsMap() { // key=value pairs by key, each quoted whole
		var pairs []string
		v.Map().Range(func(k protoreflect.MapKey, val protoreflect.Value) bool {
			pairs = append(pairs, quote(k.String()+"="+fmt.Sprint(val.Interface())))
			return true
		})
		slices.Sort(pairs)
		return strings.Join(pairs, " ")
	}
	if f.IsList() {
		l := v.List()
		items := make([]string, l.Len())
		for i := range l.Len() {
			items[i] = showScalar(f, l.Get(i))
		}
		return strings.Join(items, " ")
	}
	return showScalar(f, v)
}

func showScalar(f protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch f.Kind() {
	case protoreflect.StringKind:
		return quote(v.String())
	case protoreflect.BytesKind:
		return quote(string(v.Bytes()))
	case protoreflect.EnumKind:
		if ev := f.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
	}
	return printable(fmt.Sprint(v.Interface()))
}

// call identifies the call exactly, for a "once" grant: the tool, the
// target it acts on, the value of every field it sets (the sheet shows
// them all: subject fields and others) and the further capabilities it
// needs. Another command, another tab, another flag or another tool is
// another call.
func (e *evaluation) call(also []Capability) string {
	var b strings.Builder
	b.WriteString(e.tool.Name + "\x00" + e.target)
	fields := e.req.Descriptor().Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); e.req.Has(f) {
			b.WriteString("\x00" + string(f.Name()) + "=" + showValue(f, e.req.Get(f)))
		}
	}
	for _, c := range also {
		b.WriteString("\x00+" + c.String())
	}
	return b.String()
}
