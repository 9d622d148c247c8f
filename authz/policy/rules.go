package policy

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/toolreg"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// The rules are the tool registry's (internal/toolreg, read from the
// `(phantom.mcp.v1.tool)` options): the capability a tool needs, the
// request field that decides its reach and the fields its sheet shows.
// What is not generic stays here, keyed by tool name, in specials.

// capabilityOf is the policy's view of a registry capability: the same
// value. A value that is unspecified or that the proto does not declare is
// an error, so a tool with a capability the policy does not know is
// refused, never free.
func capabilityOf(c mcpv1.Capability) (Capability, error) {
	if v := Capability(c); v.Known() {
		return v, nil
	}
	return Unspecified, fmt.Errorf("capability %d is not one Phantom declares", int32(c))
}

// special is what one tool needs beyond its generic rule.
type special struct {
	// subject names the tool's subject fields, in the proto's order;
	// checkSpecials fails when the proto says otherwise.
	subject []protoreflect.Name
	// check fails, before any sheet, a call that would fail anyway;
	// target is the tab the reach field names. The values are the
	// subject fields'.
	check func(target TabInfo, values []protoreflect.Value) error
	// say words the subject from the described target, the subject
	// fields' values and the reach in words.
	// e is the call being evaluated (its caller tab, its request).
	say func(e *evaluation, target string, values []protoreflect.Value, why string) string
	// typed is the exact text the call types, for the audit log.
	typed func(values []protoreflect.Value) string
}

// specials are the tools whose rule is more than the generic one.
var specials = map[string]special{
	// run_command: a command that is not one typable line, or a tab that
	// exited or is busy, fails before any sheet; the sheet shows the
	// whole command.
	"run_command": {
		subject: []protoreflect.Name{"command"},
		check: func(t TabInfo, v []protoreflect.Value) error {
			if err := checkCommand(v[0].String()); err != nil {
				return err
			}
			if err := checkComplete(v[0].String()); err != nil {
				return err
			}
			return checkTypable(t)
		},
		say: func(_ *evaluation, target string, v []protoreflect.Value, why string) string {
			return quote(v[0].String()) + " typed into " + target + ", " + why
		},
		typed: func(v []protoreflect.Value) string { return v[0].String() },
	},
	"configure_language_server": configureLanguageServer,
	"send_keys":                 sendKeys,
	"close_terminal":            closeTerminal,
}

// checkSpecials checks that every special names a tool of reg with the
// subject fields it words.
func checkSpecials(reg *toolreg.Registry) error {
	for name, sp := range specials {
		t, ok := reg.ByName(name)
		if !ok {
			return fmt.Errorf("the policy has a special rule for tool %q, which no proto declares", name)
		}
		var got []protoreflect.Name
		for _, f := range t.Subject {
			got = append(got, f.Name())
		}
		if fmt.Sprint(got) != fmt.Sprint(sp.subject) {
			return fmt.Errorf("tool %q: the policy words subject fields %v, the proto's subject_fields are %v", name, sp.subject, got)
		}
	}
	return nil
}

// Capabilities returns the capability each tool of the registry needs
// (None for the free ones).
func (p *Policy) Capabilities() (map[string]Capability, error) {
	if p.err != nil {
		return nil, p.err
	}
	out := make(map[string]Capability, len(p.reg.Tools()))
	for _, t := range p.reg.Tools() {
		// An unknown capability is listed as it is: callers treat only
		// None as free, and Evaluate refuses the tool.
		out[t.Name] = Capability(t.Capability)
	}
	return out, nil
}

// Known reports whether tool has a rule (every tool of the registry has).
func (p *Policy) Known(tool string) bool {
	if p.err != nil {
		return false
	}
	_, ok := p.reg.ByName(tool)
	return ok
}

// loadError refuses every call when the rules could not be loaded.
func loadError(err error) error {
	return fmt.Errorf("Phantom's tool rules did not load, so every call is refused: %w", err)
}
