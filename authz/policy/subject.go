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
		return reach, sp.say(e, target, values, why), nil
	}
	subject := target
	for i, f := range t.Subject {
		if e.req.Has(f) {
			subject += ", " + string(f.Name()) + " " + showValue(f, values[i])
		}
	}
	return reach, subject + sep + why, nil
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
// target it acts on, the value of every subject field it sets (what the
// sheet showed, for run_command the command) and the further capabilities
// it needs. Another command, another tab or another tool is another call.
func (e *evaluation) call(also []Capability) string {
	var b strings.Builder
	b.WriteString(e.tool.Name + "\x00" + e.target)
	for _, f := range e.tool.Subject {
		if e.req.Has(f) {
			b.WriteString("\x00" + string(f.Name()) + "=" + showValue(f, e.req.Get(f)))
		}
	}
	for _, c := range also {
		b.WriteString("\x00+" + c.String())
	}
	return b.String()
}
