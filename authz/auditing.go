package authz

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/peercred"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// maxSubject bounds the subject an entry keeps: a sheet's subject can
// quote a megabyte of arguments, and one line should stay readable. The
// typed command is never cut (run_command takes at most 8 KiB).
const maxSubject = 16 << 10

// maxCallerText bounds the subject and the reason of a line about a call
// that was not allowed (refused, turned away, withdrawn, timed out), and
// the subject of a typed command's line: the whole subject is in the
// sheet's lines (raised, answered), and a caller can repeat such calls
// at will.
const maxCallerText = 1 << 10

// callEntry is the audit entry of a decision on a call.
func callEntry(event string, c policy.Caller, need policy.Need, reason string) audit.Entry {
	e := audit.Entry{Event: event, Client: c.Client, Connection: c.ConnectionID, Tab: c.TabID, PID: c.PID, Program: c.Program,
		Tool: need.Tool, Project: need.Project, Subject: clip(need.Subject), Target: need.Target, Reason: reason}
	if need.Capability.Valid() {
		e.Capability, e.Reach = need.Capability.String(), need.Reach.String()
	}
	if c.InsideWithoutTab {
		e.Tab = ""
	}
	return e
}

// sheetEntry is the audit entry about a sheet.
func sheetEntry(event string, sh sheets.Sheet) audit.Entry {
	e := callEntry(event, policy.Caller{Client: sh.Client, ConnectionID: sh.ConnectionID, TabID: sh.TabID, PID: sh.PID,
		InsideWithoutTab: sh.InsideWithoutTab, Program: sh.Program}, sh.Need, "")
	e.Sheet = sh.ID
	return e
}

// grantEntry is the audit entry about a grant.
func grantEntry(event string, g grants.Grant) audit.Entry {
	e := audit.Entry{Event: event, Grant: g.ID, GrantKind: grantKind(g), Client: g.Client, Capability: g.Capability.String(),
		Scope: g.Scope.String(), Project: g.Project, Program: g.Program}
	if !g.Always {
		e.Connection, e.Subject = g.ConnectionID, clip(g.CallText)
	}
	return e
}

func grantKind(g grants.Grant) string {
	if g.Always {
		return "always"
	}
	return "once"
}

// sheetRaised audits a request that became a sheet.
func (s *Service) sheetRaised(sh sheets.Sheet) {
	s.record(sheetEntry(audit.SheetRaised, sh))
}

// callerDriven reports whether e is a line a caller can make authz write
// at will, without the human: these are budgeted (see Budget).
func callerDriven(e audit.Entry) bool {
	switch e.Event {
	case audit.SheetRaised, audit.Refused, audit.TurnedAway, audit.Withdrawn, audit.TimedOut:
		return true
	case audit.FocusMoved, audit.FocusNotice, audit.FocusNoClient, audit.RunNotTyped, audit.KeysNotTyped:
		return true // an agent may cause these in a loop
	case audit.Allowed:
		return e.Capability == "read" && e.Command == ""
	}
	return false
}

// withinBudget reports whether e, when caller-driven, fits the budget,
// cutting its texts first (see maxCallerText); what does not fit is
// counted in the next summary.
func (s *Service) withinBudget(e *audit.Entry) bool {
	if !callerDriven(*e) {
		return true
	}
	if e.Event != audit.SheetRaised && e.Event != audit.Allowed {
		e.Subject, e.Reason = clipN(e.Subject, maxCallerText), clipN(e.Reason, maxCallerText)
	}
	return s.budget.admit(*e)
}

// fitAct takes the bytes of an act's line from the act budget, and
// returns why the act is refused when they are not there: an agent that
// acts under a standing grant in a loop (typing 8 KiB commands as fast as
// its shell returns) would otherwise push every older record out of the
// log. An act the human allowed on its sheet just now (e.Sheet) always
// goes ahead. The subject of a typed command is cut first (see
// maxCallerText): the line holds the command itself, whole, and the
// sheet's lines the subject.
func (s *Service) fitAct(ctx context.Context, e *audit.Entry) string {
	if e.Command != "" {
		e.Subject = clipN(e.Subject, maxCallerText)
	}
	wait, ok := s.acts.act(*e, e.Sheet != "")
	if ok {
		return ""
	}
	s.logger.WarnContext(ctx, "refused: over the audit budget for acts", "tool", e.Tool, "caller", callerKey(*e), "wait", wait)
	return fmt.Sprintf("refused: %s is over the audit log's budget for acts (%s an hour of records for one caller, %s for all): "+
		"every command typed and every change is recorded before it happens, and recording more now would push older records out "+
		"of the log. Wait about %s before this call, or ask the human to do it", callerKey(*e), sizeText(s.acts.b.PerCaller),
		sizeText(s.acts.b.All), max(wait, time.Second).Round(time.Second))
}

// sizeText writes a byte count in KiB or MiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// summarize writes the summary of the lines left out every SummaryEvery,
// and a last one when the service closes.
func (s *Service) summarize(clock sheets.Clock, every time.Duration) {
	defer close(s.summarized)
	for {
		select {
		case <-clock.After(every):
			s.writeSummary(false)
		case <-s.done:
			s.writeSummary(true)
			return
		}
	}
}

// writeSummary writes the summary of the lines left out, if any: those
// the budget refused, and those the coalescer left out that no later line
// will count (all of them when final).
func (s *Service) writeSummary(final bool) {
	s.coalesce.drain(final)
	if e, ok := s.budget.summary(); ok {
		s.audit.Record(e)
	}
}

// grantsChanged audits and logs what the grants store noticed without
// having done it: grants changed by hand, the file refused or usable.
func (s *Service) grantsChanged(c grants.Change) {
	switch c.Kind {
	case grants.HandRevoked:
		via := "edit of the grants file"
		if c.Removed {
			via = "removal of the grants file"
		}
		e := grantEntry(audit.GrantRevoked, c.Grant)
		e.By = &audit.Actor{Via: via}
		s.audit.Record(e)
		s.logger.Info("grant revoked by a change to the grants file", "grant", c.Grant.ID, "client", c.Grant.Client, "via", via)
	case grants.HandAdded:
		e := grantEntry(audit.GrantAdded, c.Grant)
		e.By = &audit.Actor{Via: "edit of the grants file"}
		e.Reason = "pending: it covers nothing until the human accepts it (phantom grants accept) or authz starts again"
		s.audit.Record(e)
		s.logger.Warn("grant added by a change to the grants file", "grant", c.Grant.ID, "client", c.Grant.Client,
			"capability", c.Grant.Capability.String(), "scope", c.Grant.Scope.String(), "project", c.Grant.Project)
	case grants.Unusable:
		s.audit.Record(audit.Entry{Event: audit.GrantsFileRefused, Reason: errText(c.Err)})
		s.logger.Error("grants file unusable: every request that needs a grant is refused", "err", c.Err)
	case grants.Usable:
		s.audit.Record(audit.Entry{Event: audit.GrantsFileUsable})
		s.logger.Info("grants file usable again", "path", s.grants.Path())
	case grants.Saved:
		s.audit.Record(audit.Entry{Event: audit.GrantsFileUpdated})
		s.logger.Info("grants file updated after an earlier write failed", "path", s.grants.Path())
	}
}

// actorOf is who made a call (answered a sheet, revoked a grant), as the
// kernel told it on the socket: the process, its command line and its
// controlling terminal. The command line is the process's own to rewrite:
// it is for the reader, while the pid and uid are the kernel's.
func actorOf(ctx context.Context) *audit.Actor {
	creds, unix := peercred.FromContext(ctx)
	if !unix {
		return &audit.Actor{Via: "TCP"}
	}
	a := &audit.Actor{PID: creds.PID, UID: creds.UID}
	if c, ok := guard.CallerFrom(ctx); ok && c.PID > 0 {
		a.PID = c.PID
	}
	describeProcess(a)
	return a
}

// describeProcess fills in a's command line and terminal from /proc.
func describeProcess(a *audit.Actor) {
	if a.PID <= 0 {
		return
	}
	if args, err := procfs.Default.Cmdline(a.PID); err == nil {
		a.Command = clipN(strings.Join(args, " "), 512)
	}
	if st, err := procfs.Default.Stat(a.PID); err == nil {
		a.Terminal = ttyName(st.TTYNr)
	}
}

// relayedFor is the attach client an answer was relayed for, or nil.
func relayedFor(pid int32) *audit.Actor {
	if pid <= 0 {
		return nil
	}
	a := &audit.Actor{PID: int(pid)}
	describeProcess(a)
	return a
}

// ttyName names a controlling terminal from its device number
// (/proc/<pid>/stat field 7): /dev/pts/N for pseudo-terminals, /dev/ttyN
// for virtual consoles, else the numbers.
func ttyName(nr int) string {
	if nr == 0 {
		return ""
	}
	major := (nr >> 8) & 0xfff
	minor := (nr & 0xff) | ((nr >> 12) & 0xfff00)
	switch {
	case major >= 136 && major <= 143:
		return fmt.Sprintf("/dev/pts/%d", (major-136)*256+minor)
	case major == 4 && minor < 64:
		return fmt.Sprintf("/dev/tty%d", minor)
	case major == 4:
		return fmt.Sprintf("/dev/ttyS%d", minor-64)
	}
	return fmt.Sprintf("tty %d:%d", major, minor)
}

func clip(s string) string { return clipN(s, maxSubject) }

// clipN cuts s to at most n bytes, on a rune boundary, and says so.
func clipN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xc0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// noAudit records nothing (a Service without an audit log, in tests).
type noAudit struct{}

func (noAudit) Record(audit.Entry)                        {}
func (noAudit) Commit(context.Context, audit.Entry) error { return nil }
func (noAudit) Status() audit.Status                      { return audit.Status{} }
