package attach

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// The grants view (prefix g): the standing and once grants authz keeps,
// one of which the human may revoke (d or x, then y), and the last
// decisions of authz's audit log. It is a box over the tab like the sheet
// and the key list. Only the human reaches it: attach is refused to every
// process inside Phantom, and the keys come from the attach client's
// terminal, never from a tab. Every text in it (client names, programs,
// projects, tabs, commands) is an agent's choice and is made visible
// (Visible) before it is laid out.

// GrantInfo is one grant as the grants view shows it.
type GrantInfo struct {
	// ID names the grant for a revocation.
	ID string
	// Client is the agent's client name; Program the program an always
	// grant is for ("" for a once grant, or an always grant written before
	// grants named one, which covers nothing).
	Client, Program string
	// Capability is what it allows: "read", "run", ...
	Capability string
	// Scope is how far it reaches.
	Scope Scope
	// Project is what it is keyed by; "" for none.
	Project string
	// Always is true for a standing grant, false for a once grant.
	Always bool
	// Pending is true for a standing grant added to the grants file by
	// hand while authz ran: it covers nothing until accepted.
	Pending bool
	// Call is, for a once grant, the one call it allows, in words.
	Call string
}

// AuditDecision is one decision of authz's audit log.
type AuditDecision struct {
	// Time is when it was made.
	Time time.Time
	// Outcome is what was decided, in words: "allowed", "denied", "timed
	// out", "turned away", "refused", "withdrawn", "revoked".
	Outcome string
	// Client and Tab are the caller (Tab is empty outside tabs).
	Client, Tab string
	// Tool is the tool called; Target the tab it acts on, if any.
	Tool, Target string
	// What is the decisive argument (the command typed, the tab read) or,
	// for a revocation, the grant.
	What string
	// Repeated counts the calls just like it the log left out.
	Repeated int
}

// Grants is where the grants view reads the grants and the audit log,
// and revokes a grant for the human.
type Grants interface {
	// List returns the standing grants and the once grants of live
	// connections.
	List(ctx context.Context) ([]GrantInfo, error)
	// Revoke revokes grant id for the human of the attach client
	// ClientPID(ctx) names. A non-empty note says the revocation holds
	// but not everything went well (the grants file was not updated).
	Revoke(ctx context.Context, id string) (note string, err error)
	// Decisions returns the last n decisions of the audit log, newest
	// first.
	Decisions(ctx context.Context, n int) ([]AuditDecision, error)
}

// grantsDecisions is how many decisions of the audit log the view shows.
const grantsDecisions = 20

// grantsState is the grants view's state while it is open.
type grantsState struct {
	loaded    bool   // a first answer came back
	busy      bool   // a load or a revocation is in flight
	again     bool   // something changed while busy: load again after
	queued    string // a revocation confirmed while busy: sent next
	grants    []GrantInfo
	listErr   string
	decisions []AuditDecision
	auditErr  string
	chosen    int    // the highlighted grant
	confirm   string // the grant a y would revoke; "" when not asking
	revoking  string // the grant whose revocation is in flight
}

// grantsResult is what a load or a revocation in the background brought.
type grantsResult struct {
	grants    []GrantInfo
	listErr   error
	decisions []AuditDecision
	auditErr  error
	revoked   string // the grant revoked, if this was a revocation
	note      string // the revocation's note
	revokeErr error
}

// openGrants opens the grants view (prefix g) and loads what it shows.
func (s *session) openGrants() {
	if s.o.Grants == nil {
		s.setMessage("no grants here: this terminald does not talk to authz")
		return
	}
	s.leaveCopy()
	// A load from an earlier opening may still be in flight: it stays
	// the one in flight (see loadGrants), and a new one follows it.
	s.mode, s.gv, s.needFull = modeGrants, grantsState{busy: s.gv.busy, queued: s.gv.queued}, true
	s.loadGrants("")
}

// closeGrants closes the view; a load still in flight is dropped when it
// comes back.
func (s *session) closeGrants() {
	if s.mode != modeGrants {
		return
	}
	s.mode, s.needFull = modeNormal, true
	s.gv.confirm = ""
}

// grantsChanged reloads an open view when authz's grants or sheets
// changed (a sheet answered always, a grant revoked elsewhere).
func (s *session) grantsChanged() {
	if s.mode == modeGrants {
		s.loadGrants("")
	}
}

// loadGrants lists the grants and reads the audit log in the background,
// after revoking grant revoke when it is not "". One request is in
// flight at a time (so that s.grantsIn never blocks a goroutine, and
// Run's wait for them ends); a change meanwhile loads again when it is
// done, and a revocation confirmed meanwhile is sent then.
func (s *session) loadGrants(revoke string) {
	if s.gv.busy {
		s.gv.again = true
		if revoke != "" {
			s.gv.queued = revoke
		}
		return
	}
	s.gv.busy, s.gv.revoking, s.needFrame = true, revoke, true
	g, pid := s.o.Grants, s.o.ClientPID
	s.bg.Go(func() {
		// Not the session's context: a revocation right before a detach
		// still counts.
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		var r grantsResult
		if revoke != "" {
			r.revoked = revoke
			r.note, r.revokeErr = g.Revoke(context.WithValue(ctx, clientPIDKey{}, pid), revoke)
		}
		r.grants, r.listErr = g.List(ctx)
		r.decisions, r.auditErr = g.Decisions(ctx, grantsDecisions)
		s.grantsIn <- r
	})
}

// grantsDone takes what a load brought; the highlight stays on the grant
// it was on.
func (s *session) grantsDone(r grantsResult) {
	gv := &s.gv
	gv.busy, gv.revoking = false, ""
	switch {
	case r.revoked == "":
	case r.revokeErr != nil:
		s.setMessage(fmt.Sprintf("revoke %s: %v", r.revoked, r.revokeErr))
	case r.note != "":
		s.setMessage(fmt.Sprintf("revoked %s in memory; %s", r.revoked, r.note))
	default:
		s.setMessage("revoked " + r.revoked)
	}
	queued, again := gv.queued, gv.again
	gv.queued, gv.again = "", false
	if queued != "" {
		// Confirmed while this load ran: sent even if the view closed.
		defer s.loadGrants(queued)
	}
	if s.mode != modeGrants {
		return
	}
	was := ""
	if gv.chosen >= 0 && gv.chosen < len(gv.grants) {
		was = gv.grants[gv.chosen].ID
	}
	gv.loaded, gv.grants, gv.decisions = true, r.grants, r.decisions
	gv.listErr, gv.auditErr = errString(r.listErr), errString(r.auditErr)
	if i := slices.IndexFunc(gv.grants, func(g GrantInfo) bool { return g.ID == was }); i >= 0 {
		gv.chosen = i
	}
	gv.chosen = max(min(gv.chosen, len(gv.grants)-1), 0)
	if gv.confirm != "" && !slices.ContainsFunc(gv.grants, func(g GrantInfo) bool { return g.ID == gv.confirm }) {
		gv.confirm = "" // gone meanwhile: nothing to confirm
	}
	s.needFrame = true
	if again && queued == "" {
		s.loadGrants("")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// grantsKeys handles keys while the view is open and returns the bytes
// left over when a key closes it. While it asks y/n, y revokes the grant
// the question names and any other key keeps it.
func (s *session) grantsKeys(b []byte) []byte {
	for len(b) > 0 && s.mode == modeGrants {
		gv := &s.gv
		n := 1
		c := b[0]
		if c == 0x1b && len(b) > 1 {
			n = escLen(b)
		}
		key := string(b[:n])
		b = b[n:]
		s.needFrame = true
		if gv.confirm != "" {
			id := gv.confirm
			gv.confirm = ""
			if key == "y" || key == "Y" {
				s.loadGrants(id)
			} else {
				s.setMessage("kept " + id)
			}
			continue
		}
		switch key {
		case "q", "\x03", "\x1b":
			s.closeGrants()
		case "\x1b[A", "\x1bOA", "k":
			gv.chosen = max(gv.chosen-1, 0)
		case "\x1b[B", "\x1bOB", "j":
			gv.chosen = max(min(gv.chosen+1, len(gv.grants)-1), 0)
		case "d", "x":
			if gv.chosen < len(gv.grants) {
				gv.confirm = gv.grants[gv.chosen].ID
			} else {
				s.setMessage("no grant to revoke")
			}
		case "r":
			s.loadGrants("")
		case string(rune(s.o.Prefix)):
			s.closeGrants()
			s.prefixed = true
			return b
		}
	}
	return b
}
