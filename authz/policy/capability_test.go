package policy

import (
	"context"
	"errors"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/toolreg"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// TestEveryCapabilityValue walks every value the proto declares, and some
// it does not: only CAPABILITY_NONE is free, the real ones need a grant,
// and unspecified or undeclared ones are refused — never free.
func TestEveryCapabilityValue(t *testing.T) {
	values := []mcpv1.Capability{mcpv1.Capability(42), mcpv1.Capability(-1)}
	for n := range mcpv1.Capability_name {
		values = append(values, mcpv1.Capability(n))
	}
	for _, v := range values {
		name := toolreg.CapabilityName(v)
		t.Run(name, func(t *testing.T) {
			c, err := capabilityOf(v)
			_, declared := mcpv1.Capability_name[int32(v)]
			switch {
			case v == mcpv1.Capability_CAPABILITY_NONE:
				if err != nil || c != None || c.Valid() || !toolreg.Free(v) {
					t.Errorf("none: capabilityOf = %v, %v; Valid %v; Free %v", c, err, c.Valid(), toolreg.Free(v))
				}
			case v == mcpv1.Capability_CAPABILITY_UNSPECIFIED || !declared:
				if err == nil || toolreg.Free(v) || Capability(v).Known() {
					t.Errorf("%s: capabilityOf = %v, %v; Free %v; want refused and not free", name, c, err, toolreg.Free(v))
				}
			default:
				if err != nil || !c.Valid() || toolreg.Free(v) || c.Proto() != v {
					t.Errorf("%s: capabilityOf = %v, %v; Valid %v; Free %v", name, c, err, c.Valid(), toolreg.Free(v))
				}
				var back Capability
				if txt, _ := c.MarshalText(); back.UnmarshalText(txt) != nil || back != c {
					t.Errorf("%s: text %q reads back as %v", name, txt, back)
				}
			}
			// A tool stating v: a policy evaluating it refuses anything but
			// a known capability, and asks for a grant for a real one.
			p := fixturePolicy(t)
			tl, _ := p.reg.ByName("configure_thing")
			saved := tl.Capability
			tl.Capability = v
			defer func() { tl.Capability = saved }()
			need, err := p.Evaluate(context.Background(), Caller{Client: "c", ConnectionID: "k"}, "configure_thing",
				`{"workspace":"/w","language":"go","command":"gopls"}`)
			switch {
			case v == mcpv1.Capability_CAPABILITY_NONE:
				if err != nil || need.Capability != None {
					t.Errorf("evaluate as none: %+v, %v", need, err)
				}
			case v == mcpv1.Capability_CAPABILITY_UNSPECIFIED || !declared:
				if !errors.Is(err, errdefs.ErrInvalidArgument) {
					t.Errorf("evaluate as %s: %+v, %v; want refused", name, need, err)
				}
			default:
				if err != nil || need.Capability.Proto() != v {
					t.Errorf("evaluate as %s: %+v, %v", name, need, err)
				}
			}
		})
	}
	var c Capability
	for _, bad := range []string{"unspecified", "capability(42)", "READ", ""} {
		if err := c.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) = %v, want an error", bad, c)
		}
	}
}
