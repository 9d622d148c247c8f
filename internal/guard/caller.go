package guard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/peercred"
)

// Metadata keys a daemon outside Phantom (the gateway) sets when it calls
// for an agent. The guard honours them only from callers outside Phantom.
const (
	// MDForAgent, "1", marks a call made for an agent.
	MDForAgent = "phantom-for-agent"
	// MDAgentTab names the agent's verified tab ("" when it runs in none).
	MDAgentTab = "phantom-agent-tab"
	// MDAgentLeftTab, "1", says the agent runs inside Phantom but in no
	// tab (it left its tab's tree): it gets the tightest sandbox, where an
	// agent outside Phantom gets none.
	MDAgentLeftTab = "phantom-agent-left-tab"
)

// Caller is who makes a call, as the guard established it.
type Caller struct {
	// Inside is true for a process inside Phantom: in a tab, or one that
	// left its tab's tree.
	Inside bool
	// PID and StartTime are the calling process (zero over TCP).
	PID       int
	StartTime uint64
	// TabID is the caller's tab when Inside; for a call made for an agent
	// by the gateway, the agent's tab.
	TabID string
	// ForAgent is true when the call is an agent's: from inside Phantom,
	// or made for an agent by the gateway.
	ForAgent bool
	// LeftTab is true when the caller, or the agent a call is made for,
	// runs inside Phantom but in no tab: it double-forked out of its
	// tab's tree, so nobody can tell which tab's sandbox it had.
	LeftTab bool
	// Peer is the identity in the verified client certificate of a caller
	// that came over TCP with mutual TLS ("gateway", "human", …); "" over
	// a Unix socket.
	Peer string
}

// where says where the caller runs, for messages.
func (c Caller) where() string {
	if c.TabID != "" {
		return "in Phantom tab " + c.TabID
	}
	return "inside Phantom, outside any tab"
}

// placement is what identify learnt of a connection.
type placement struct {
	caller Caller
	err    error
}

// Place places the process c names: outside Phantom, or inside and in
// which tab. It is the identify function of every daemon's guard.
func Place(ctx context.Context, c peercred.Creds, locate func(int) (lineage.Place, error),
	tabOf func(context.Context, int, lineage.Place) (string, error)) any {
	caller, err := Locate(ctx, c.PID, locate, tabOf)
	return placement{caller: caller, err: err}
}

// Locate places process pid: outside Phantom, or inside and in which tab.
// The caller must check afterwards that the process still runs (its
// pidfd), so that what was read was about it.
func Locate(ctx context.Context, pid int, locate func(int) (lineage.Place, error),
	tabOf func(context.Context, int, lineage.Place) (string, error)) (Caller, error) {
	if pid <= 0 {
		return Caller{}, errors.New("the caller runs in another pid namespace (its pid reads as 0), so it cannot be placed")
	}
	p, err := locate(pid)
	if err != nil {
		return Caller{}, fmt.Errorf("cannot tell whether process %d runs inside Phantom: %w", pid, err)
	}
	caller := Caller{Inside: p.Inside, ForAgent: p.Inside, PID: pid, StartTime: p.Self.StartTime}
	if p.Inside && tabOf != nil {
		tab, err := tabOf(ctx, pid, p)
		if err != nil {
			return Caller{}, fmt.Errorf("cannot tell which tab process %d runs in: %w", pid, err)
		}
		caller.TabID = tab
		caller.LeftTab = tab == ""
	}
	return caller, nil
}

// callerOf returns the caller of the call in ctx: placed at connection
// time, plus what a daemon outside Phantom says it does for an agent.
//
// A peer over TCP is outside Phantom (its processes are on another
// machine or in another container) and is known by its client
// certificate, which the TLS handshake verified against our CA; which
// methods it may call is checked in check. Only the gateway's certificate
// may say a call is made for an agent: any other daemon saying so is
// refused, so a stolen certificate cannot borrow an agent's standing.
func callerOf(ctx context.Context) (Caller, error) {
	id, unix := peercred.IdentityFromContext(ctx)
	var c Caller
	if unix {
		p, ok := id.(placement)
		if !ok {
			return Caller{}, errors.New("the caller was not placed")
		}
		if p.err != nil {
			return Caller{}, p.err
		}
		c = p.caller
	}
	tlsPeer := false
	if !unix {
		name, isTLS := daemon.PeerIdentity(ctx)
		if isTLS && name == "" {
			return Caller{}, errors.New("the caller's certificate names no Phantom identity (a phantom: URI SAN, as `phantom certs` writes)")
		}
		c.Peer, tlsPeer = name, isTLS
	}
	if !c.Inside {
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get(MDForAgent); len(v) == 1 && v[0] == "1" {
			if tlsPeer && !slices.Contains(actsForAgents, c.Peer) {
				return Caller{}, fmt.Errorf("the certificate of %q may not make calls for an agent; only those of %s may", c.Peer, strings.Join(actsForAgents, ", "))
			}
			c.ForAgent = true
			if t := md.Get(MDAgentTab); len(t) == 1 {
				c.TabID = t[0]
			}
			if l := md.Get(MDAgentLeftTab); c.TabID == "" && len(l) == 1 && l[0] == "1" {
				c.LeftTab = true
			}
		}
	}
	return c, nil
}

type callerKey struct{}

// NewContext returns ctx carrying c as the call's caller, as the guard's
// interceptors do (and tests of handlers that read CallerFrom).
func NewContext(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller the guard established for the call in ctx;
// ok is false when no guard ran.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// ForAgent returns outgoing metadata that marks a call as made for an agent
// in tab (which may be ""): what the gateway adds to every tool call.
func ForAgent(ctx context.Context, tab string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, MDForAgent, "1", MDAgentTab, tab)
}

// ForAgentCaller returns outgoing metadata that marks a call as made for
// the agent c: its tab, or that it left its tab. The gateway adds it to
// every tool call; gitd and editord add it to the calls they make to
// terminald for an agent (the tab opened for it), so that the agent's
// standing travels with what is done for it. A c that is not an agent's
// adds nothing.
func ForAgentCaller(ctx context.Context, c Caller) context.Context {
	if !c.ForAgent {
		return ctx
	}
	ctx = ForAgent(ctx, c.TabID)
	if c.LeftTab && c.TabID == "" {
		ctx = metadata.AppendToOutgoingContext(ctx, MDAgentLeftTab, "1")
	}
	return ctx
}
