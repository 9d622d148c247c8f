package authz

import (
	"time"

	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

func callerFromProto(c *authzv1.Caller) policy.Caller {
	return policy.Caller{Client: c.GetClient(), ConnectionID: c.GetConnectionId(), TabID: c.GetTabId(), PID: c.GetPid(),
		InsideWithoutTab: c.GetInsideWithoutTab(), Program: c.GetProgram()}
}

// capabilityToProto is a cast: authz's protos carry the tool option's
// own enum (see policy.Capability).
func capabilityToProto(c policy.Capability) mcpv1.Capability { return c.Proto() }

var scopes = map[policy.Scope]authzv1.Scope{
	policy.ScopeUnspecified: authzv1.Scope_SCOPE_UNSPECIFIED,
	policy.Tab:              authzv1.Scope_SCOPE_TAB,
	policy.Group:            authzv1.Scope_SCOPE_GROUP,
	policy.All:              authzv1.Scope_SCOPE_ALL,
}

func scopeToProto(s policy.Scope) authzv1.Scope { return scopes[s] }

func scopeFromProto(s authzv1.Scope) policy.Scope {
	for k, v := range scopes {
		if v == s {
			return k
		}
	}
	return policy.ScopeUnspecified
}

// sheetToProto converts a sheet, with the seconds left at now and how many
// sheets wait behind it.
func sheetToProto(s sheets.Sheet, now time.Time, behind int) *authzv1.Sheet {
	left := int32(s.Deadline.Sub(now).Round(time.Second) / time.Second)
	return &authzv1.Sheet{
		Id:            s.ID,
		Client:        s.Client,
		TabId:         s.TabID,
		TabTitle:      s.TabTitle,
		Capability:    capabilityToProto(s.Need.Capability),
		Reach:         scopeToProto(s.Need.Reach),
		Tool:          s.Need.Tool,
		Subject:       s.Need.Subject,
		Project:       s.Need.Project,
		SecondsLeft:   max(left, 0),
		WaitingBehind: int32(behind),
		Pid:           s.PID,

		InsideWithoutTab: s.InsideWithoutTab,
		Program:          s.Program,
	}
}

func grantToProto(g grants.Grant) *authzv1.Grant {
	return &authzv1.Grant{
		Id:           g.ID,
		Client:       g.Client,
		Capability:   capabilityToProto(g.Capability),
		Scope:        scopeToProto(g.Scope),
		Project:      g.Project,
		Always:       g.Always,
		ConnectionId: g.ConnectionID,
		Created:      g.Created.Format(time.RFC3339),
		Pending:      g.Pending,
		Program:      g.Program,
		Call:         g.CallText,
	}
}
