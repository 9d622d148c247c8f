// Package policy is Phantom's permission policy: which MCP tool needs which
// capability, and how far a call reaches from the caller's tab. It decides
// what a call needs; whether a grant covers it, and asking the human when
// none does, are the grants and sheets packages' business.
//
// The rules come from the tool registry (internal/toolreg): each tool's
// proto option names its capability, the request field that decides its
// reach and the fields its sheet shows, and the policy evaluates them on
// the typed request. The gateway sends every tool call with its arguments;
// a tool the registry does not know is refused (fail closed).
package policy

import (
	"context"
	"fmt"
	"strconv"

	"github.com/phantom-dev/phantom/internal/toolreg"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
)

// Capability is a kind of sensitive act: the tool option's enum
// (phantom.mcp.v1.Capability), declared once in the proto, with the text
// methods the grants file and the sheets use. The conversion to and from
// the proto is a cast; there is no table to keep in step.
type Capability mcpv1.Capability

// The capabilities, as the proto numbers them. None means the tool needs
// no permission; Unspecified, or any value the proto does not declare, is
// refused wherever it is met (see Known).
const (
	Unspecified = Capability(mcpv1.Capability_CAPABILITY_UNSPECIFIED)
	None        = Capability(mcpv1.Capability_CAPABILITY_NONE)
	Read        = Capability(mcpv1.Capability_CAPABILITY_READ)
	Run         = Capability(mcpv1.Capability_CAPABILITY_RUN)
	Configure   = Capability(mcpv1.Capability_CAPABILITY_CONFIGURE)
	Worktree    = Capability(mcpv1.Capability_CAPABILITY_WORKTREE)
)

// String names the capability as the human sees it: "read" for
// CAPABILITY_READ (toolreg.CapabilityName).
func (c Capability) String() string { return toolreg.CapabilityName(mcpv1.Capability(c)) }

// Proto is the capability as the protos carry it.
func (c Capability) Proto() mcpv1.Capability { return mcpv1.Capability(c) }

// Known reports whether the proto declares c and it says something: none
// or a real capability. Unspecified and undeclared values are not known.
func (c Capability) Known() bool { return c == None || c.Valid() }

// Valid reports whether c is one of the capabilities a grant can name:
// declared by the proto, and neither unspecified nor none.
func (c Capability) Valid() bool {
	_, declared := mcpv1.Capability_name[int32(c)]
	return declared && c != Unspecified && c != None
}

// Scope is how far a request or a grant reaches, narrow to wide; the order
// of the constants is the order of reach.
type Scope uint8

// The scopes.
const (
	ScopeUnspecified Scope = iota
	Tab
	Group
	All
)

// String names the scope.
func (s Scope) String() string {
	switch s {
	case ScopeUnspecified:
		return "unspecified"
	case Tab:
		return "tab"
	case Group:
		return "group"
	case All:
		return "all"
	}
	return "scope(" + strconv.Itoa(int(s)) + ")"
}

// Valid reports whether s is tab, group or all.
func (s Scope) Valid() bool { return s >= Tab && s <= All }

// Covers reports whether a grant of scope s reaches at least as far as a
// request of reach r.
func (s Scope) Covers(r Scope) bool { return s.Valid() && r.Valid() && s >= r }

// ParseScope reads "tab", "group" or "all".
func ParseScope(v string) (Scope, error) {
	for _, s := range []Scope{Tab, Group, All} {
		if s.String() == v {
			return s, nil
		}
	}
	return ScopeUnspecified, fmt.Errorf("scope %q: want tab, group or all", v)
}

// TabInfo is what the policy needs to know about one tab.
type TabInfo struct {
	ID, Title, Directory, GroupID string
	// Idle is true when the tab waits at its prompt and can take a
	// command; Exited once its program has ended.
	Idle, Exited bool
	// Foreground names the program in the foreground, for messages.
	Foreground string
	// GroupSetByAgent is true when an agent, not the human, put the tab
	// in its group (created it there or moved it): such membership never
	// widens reach (see the rule on sameGroup).
	GroupSetByAgent bool
	// NameSetByAgent is true when an agent gave the tab its name (its
	// Title then is that name): the sheet marks it.
	NameSetByAgent bool
	// Sandboxed is true when the tab's programs run in a sandbox: what
	// Phantom starts for its calls runs in that sandbox too, and the
	// sheet says so.
	Sandboxed bool
	// OpenedBy is the tab whose agent this one was opened for; "" for a
	// tab the human opened. Such a tab is no more privileged than that
	// agent, so for reach it counts as the agent's own tab.
	OpenedBy string
	// Project is the project the tab works in as terminald decided it
	// (Terminal.project): never from OSC 7 or repository config, which
	// the tab writes. It keys the caller's standing grants.
	Project string
}

// Lister lists the tabs (terminald's ListTerminals in production).
type Lister interface {
	Tabs(ctx context.Context) ([]TabInfo, error)
}

// Projector names the project a directory argument belongs to (see
// internal/project: the nearest directory holding a .git entry, links
// resolved, no repository config read). Tabs' projects come from
// terminald (TabInfo.Project).
type Projector func(ctx context.Context, dir string) string

// Caller is who asks, as the gateway verified it.
type Caller struct {
	// Client is the name the agent gave.
	Client string
	// ConnectionID identifies the gateway connection.
	ConnectionID string
	// TabID is the caller's verified tab; empty outside any tab.
	TabID string
	// InsideWithoutTab is true when the caller runs inside Phantom but in
	// no tab: it left its tab's process tree. Everything it touches
	// reaches all, and its calls carry no project.
	InsideWithoutTab bool
	// PID is the caller's process id.
	PID int32
	// Program is the program that asks as the process tree shows it (the
	// executable behind the MCP bridge), not the client name it chose: a
	// standing grant covers only the program it was given to.
	Program string
}

// Need is what a call needs: the result of Evaluate.
type Need struct {
	// Tool is the MCP tool.
	Tool string
	// Capability is what the call needs; None when it needs nothing.
	Capability Capability
	// Also are further capabilities the call needs, with the same reach
	// and project (the tool option's `also`, e.g. read for run_command
	// with wait_seconds, which returns the output). A grant must cover
	// each; one sheet asks for all.
	Also []Capability
	// Reach is the narrowest scope holding everything the call touches.
	Reach Scope
	// Subject is the decisive argument in words, for the sheet.
	Subject string
	// Project keys an "always" grant: the caller tab's project, or ""
	// outside any tab.
	Project string
	// CallerTitle is the caller tab's title, for the sheet, marked when an
	// agent named the tab.
	CallerTitle string
	// Target is what the call acts on, for the audit log: the id of the
	// tab its reach field names, or the directory.
	Target string
	// Typed is, for run_command, the exact command line it types (the
	// Subject shows it escaped).
	Typed string
	// Free is true when the call needs no grant and raises no sheet: its
	// tool is free for the tabs the caller opened (the tool option's
	// free_for_opened_tabs) and its target is one (see opened). It is
	// still audited, as any call that needs a capability.
	Free bool
	// Call identifies the call exactly — its tool, its target and the
	// values of its decisive fields (for run_command, the command), and
	// the further capabilities it needs — so that "once" allows this call
	// and no other.
	Call string
}

// MarshalText writes the capability's name (the grants file uses it).
func (c Capability) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a capability's name; a name the proto does not
// declare, or "unspecified", is an error.
func (c *Capability) UnmarshalText(b []byte) error {
	for n := range mcpv1.Capability_name {
		if v := Capability(n); v.Known() && v.String() == string(b) {
			*c = v
			return nil
		}
	}
	return fmt.Errorf("unknown capability %q", b)
}

// MarshalText writes the scope's name.
func (s Scope) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a scope's name; an unknown name is an error.
func (s *Scope) UnmarshalText(b []byte) error {
	v, err := ParseScope(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
