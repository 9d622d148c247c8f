package toolreg

import (
	"strconv"
	"strings"

	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// CapabilityName names a capability as the human sees it on sheets, in
// grants and in the audit log: the proto's enum name without its prefix,
// lower case ("read" for CAPABILITY_READ, "none", "unspecified"). A value
// the proto does not declare is "capability(N)". The enum is the one
// declaration; every name is derived from it.
func CapabilityName(c mcpv1.Capability) string {
	name, ok := mcpv1.Capability_name[int32(c)]
	if !ok {
		return "capability(" + strconv.Itoa(int(c)) + ")"
	}
	return strings.ToLower(strings.TrimPrefix(name, "CAPABILITY_"))
}

// Free reports whether a tool of capability c needs no permission: only
// CAPABILITY_NONE is free. Unspecified and undeclared values are not: a
// capability nobody knows is refused, never waved through.
func Free(c mcpv1.Capability) bool { return c == mcpv1.Capability_CAPABILITY_NONE }
