// Package authz is the permission daemon: a thin gRPC adapter over the
// policy (authz/policy: which tool needs which capability, how far a call
// reaches), the grants a human gave (authz/grants) and the sheets that ask
// the human (authz/sheets). Every decision is recorded in the audit log
// (authz/audit), within budgets that keep any flood of callers from
// pushing older records out of it (see Budget).
package authz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/grants"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/authz/sheets"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/procfs"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// Service implements authzv1.AuthzServiceServer.
type Service struct {
	authzv1.UnimplementedAuthzServiceServer

	policy    *policy.Policy
	grants    *grants.Store
	sheets    *sheets.Queue
	mayAnswer func(context.Context) error
	alive     func(conn string) bool
	logger    *slog.Logger
	audit     Auditor
	coalesce  *coalescer
	budget    *budget
	acts      *budget
	closing   sync.Once
	done      chan struct{} // closed by Close: ends the watch streams
	// summarized is closed once the last summary of the audit lines left
	// out is recorded, after done.
	summarized chan struct{}
}

// Auditor is where decisions are recorded (*audit.Log in production).
type Auditor interface {
	// Record appends an entry in the background; it never blocks.
	Record(audit.Entry)
	// Commit appends an entry and waits, for a bounded time, until it is
	// on disk; an error means it may not be.
	Commit(context.Context, audit.Entry) error
	// Status reports how writing goes.
	Status() audit.Status
}

// Options are a Service's parts.
type Options struct {
	Policy *policy.Policy
	Grants *grants.Store
	Sheets *sheets.Queue
	// MayAnswer refuses an AnswerSheet caller that is not the human (see
	// HumanGate); nil allows everyone, for tests only.
	MayAnswer func(context.Context) error
	Logger    *slog.Logger
	// Audit records every decision; nil records nothing (tests).
	Audit Auditor
	// Budget bounds the audit lines callers can cause; zero fields take
	// DefaultBudget's.
	Budget Budget
	// ActBudget bounds the lines of acts under standing grants; zero
	// fields take DefaultActBudget's.
	ActBudget Budget
}

// NewService builds the service.
func NewService(o Options) *Service {
	if o.MayAnswer == nil {
		o.MayAnswer = func(context.Context) error { return nil }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Audit == nil {
		o.Audit = noAudit{}
	}
	o.Budget, o.ActBudget = o.Budget.or(DefaultBudget), o.ActBudget.or(DefaultActBudget)
	s := &Service{policy: o.Policy, grants: o.Grants, sheets: o.Sheets, mayAnswer: o.MayAnswer,
		alive: connectionAlive(procfs.Default), logger: o.Logger, audit: o.Audit, coalesce: newCoalescer(o.Sheets.Now),
		budget: newBudget(o.Budget, o.Sheets.Now), acts: newBudget(o.ActBudget, o.Sheets.Now),
		done: make(chan struct{}), summarized: make(chan struct{})}
	s.coalesce.lost = s.budget.leftOut
	o.Sheets.OnRaised(s.sheetRaised)
	o.Grants.Observe(s.grantsChanged)
	go s.summarize(o.Sheets.Clock(), o.Budget.SummaryEvery)
	return s
}

// Close refuses the waiting sheets, ends the watch streams and records
// the last summary of the audit lines left out (shutdown).
func (s *Service) Close() {
	s.sheets.Close()
	s.closing.Do(func() { close(s.done) })
	<-s.summarized
}

// Authorize decides one tool call: the policy says what it needs; a grant
// covers it, or a sheet asks the human and the call waits for the answer.
// Every refusal is a response with a reason, never an open door. Every
// decision on a call that needs a capability is audited (see allow).
func (s *Service) Authorize(ctx context.Context, req *authzv1.AuthorizeRequest) (*authzv1.AuthorizeResponse, error) {
	c := callerFromProto(req.GetCaller())
	need, err := s.policy.Evaluate(ctx, c, req.GetTool(), req.GetArgumentsJson())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.record(callEntry(audit.Refused, c, policy.Need{Tool: req.GetTool()}, err.Error()))
		return &authzv1.AuthorizeResponse{Reason: err.Error()}, nil
	}
	resp := &authzv1.AuthorizeResponse{Capability: capabilityToProto(need.Capability), Reach: scopeToProto(need.Reach)}
	if need.Capability == policy.None {
		resp.Allowed = true
		return resp, nil
	}
	if need.Free {
		// A tab the caller opened, for a tool free there: no grant, no
		// sheet, yet recorded before it acts, as every act is.
		return s.allow(ctx, c, need, grants.Grant{}, "", resp), nil
	}
	s.grants.Prune(s.alive)
	g, ok, err := s.findAll(caller{c.Client, c.Program, c.ConnectionID}, need)
	if err != nil {
		s.logger.ErrorContext(ctx, "refused: grants file unusable", "tool", need.Tool, "err", err)
		resp.Reason = "refused: " + err.Error()
		s.record(callEntry(audit.Refused, c, need, resp.Reason))
		return resp, nil
	}
	if ok {
		return s.allow(ctx, c, need, g, "", resp), nil
	}
	gid, sheet, err := s.sheets.AskSheet(ctx, sheets.Request{Client: c.Client, Program: c.Program, ConnectionID: c.ConnectionID,
		TabID: c.TabID, TabTitle: need.CallerTitle, PID: c.PID, InsideWithoutTab: c.InsideWithoutTab, Need: need})
	var refusal *sheets.Refusal
	switch {
	case errors.As(err, &refusal):
		e := callEntry(refusal.Kind.String(), c, need, refusal.Reason)
		e.Sheet = refusal.SheetID
		s.record(e)
		resp.Reason = refusal.Reason
		return resp, nil
	case err != nil:
		e := callEntry(audit.Withdrawn, c, need, "the caller gave up before the human answered: "+err.Error())
		e.Sheet = sheet
		s.record(e)
		return nil, err
	}
	g, ok = s.grants.Get(gid)
	if !ok {
		// Revoked between the answer and now: a once grant whose
		// connection ended, or a revocation. Either way, not allowed.
		resp.Reason = fmt.Sprintf("refused: grant %s was revoked right after the human gave it; ask again", gid)
		s.record(callEntry(audit.Refused, c, need, resp.Reason))
		return resp, nil
	}
	return s.allow(ctx, c, need, g, sheet, resp), nil
}

// allow allows a call that grant g covers (none for a free call, see
// policy.Need.Free), once the audit log has it.
// A call that acts — types a command, changes how a language server
// starts, changes worktrees — goes ahead only once its line is on disk:
// nothing is done in the human's name that the log does not hold. A read
// goes ahead even when the log cannot be written (status says so). An
// act beyond the act budget is refused (see fitAct).
func (s *Service) allow(ctx context.Context, c policy.Caller, need policy.Need, g grants.Grant, sheet string, resp *authzv1.AuthorizeResponse) *authzv1.AuthorizeResponse {
	e := callEntry(audit.Allowed, c, need, "")
	e.Sheet, e.Grant, e.GrantKind, e.Scope = sheet, g.ID, grantKind(g), g.Scope.String()
	if need.Free {
		e.GrantKind, e.Scope, e.Reason = "", "", freeReason
	}
	e.Command = need.Typed
	if need.Capability == policy.Read {
		s.record(e)
	} else if refusal := s.fitAct(ctx, &e); refusal != "" {
		resp.Reason = refusal
		s.record(callEntry(audit.Refused, c, need, refusal))
		return resp
	} else if err := s.audit.Commit(ctx, e); err != nil {
		s.logger.ErrorContext(ctx, "refused: the audit log cannot be written", "tool", need.Tool, "err", err)
		resp.Reason = fmt.Sprintf("refused: the audit log cannot be written (%v), and Phantom does nothing in the human's name "+
			"that it cannot record; the human must fix it (phantom status shows why), then ask again", err)
		return resp
	}
	resp.Allowed, resp.GrantId = true, g.ID
	return resp
}

// freeReason is why an allowed call free for the tabs the caller opened
// needed no grant, in its audit line.
const freeReason = "no grant needed: the tab is one this agent opened, which runs in its sandbox"

// record writes an entry about a call, leaving out the repeats a caller
// could flood the log with (see coalescer) and what is over the budget
// (see Budget).
func (s *Service) record(e audit.Entry) {
	if s.coalesce.admit(&e) && s.withinBudget(&e) {
		s.audit.Record(e)
	}
}

// ListPolicy returns the capability each tool needs.
func (s *Service) ListPolicy(context.Context, *authzv1.ListPolicyRequest) (*authzv1.ListPolicyResponse, error) {
	caps, err := s.policy.Capabilities()
	if err != nil {
		return nil, err
	}
	resp := &authzv1.ListPolicyResponse{}
	for name, c := range caps {
		resp.Tools = append(resp.Tools, &authzv1.ToolPolicy{Tool: name, Capability: capabilityToProto(c)})
	}
	slices.SortFunc(resp.Tools, func(a, b *authzv1.ToolPolicy) int { return strings.Compare(a.GetTool(), b.GetTool()) })
	return resp, nil
}

// EndConnection withdraws a closed connection's sheets and drops its once
// grants.
func (s *Service) EndConnection(_ context.Context, req *authzv1.EndConnectionRequest) (*authzv1.EndConnectionResponse, error) {
	s.sheets.Withdraw(req.GetConnectionId())
	s.grants.EndConnection(req.GetConnectionId())
	return &authzv1.EndConnectionResponse{}, nil
}

// ListSheets lists the waiting sheets, the one on screen first.
func (s *Service) ListSheets(context.Context, *authzv1.ListSheetsRequest) (*authzv1.ListSheetsResponse, error) {
	list := s.sheets.List()
	now := s.sheets.Now()
	resp := &authzv1.ListSheetsResponse{}
	for i, sh := range list {
		resp.Sheets = append(resp.Sheets, sheetToProto(sh, now, len(list)-i-1))
	}
	return resp, nil
}

// WatchSheets sends the sheet on screen now and after every change, until
// the client goes or authz stops.
func (s *Service) WatchSheets(_ *authzv1.WatchSheetsRequest, stream authzv1.AuthzService_WatchSheetsServer) error {
	for {
		changed, grantsChanged := s.sheets.Changed(), s.grants.Changed()
		list := s.sheets.List()
		ev := &authzv1.WatchSheetsResponse{Waiting: int32(len(list))}
		if len(list) > 0 {
			ev.Sheet = sheetToProto(list[0], s.sheets.Now(), len(list)-1)
		}
		if err := s.grants.Err(); err != nil {
			ev.GrantsProblem = err.Error()
		}
		if err := stream.Send(ev); err != nil {
			return err
		}
		select {
		case <-changed:
		case <-grantsChanged:
		case <-stream.Context().Done():
			return nil
		case <-s.done:
			return nil
		}
	}
}

// AnswerSheet answers a sheet for the human; a caller inside any Phantom
// tab is refused (an agent must not answer for itself).
func (s *Service) AnswerSheet(ctx context.Context, req *authzv1.AnswerSheetRequest) (*authzv1.AnswerSheetResponse, error) {
	if err := s.mayAnswer(ctx); err != nil {
		return nil, err
	}
	by := actorOf(ctx)
	by.For = relayedFor(req.GetRelayedForPid())
	if req.GetDecision() == authzv1.Decision_DECISION_DENY {
		err := s.sheets.DenySheet(req.GetSheetId(), func(sh sheets.Sheet) {
			e := sheetEntry(audit.SheetAnswered, sh)
			e.Decision, e.By = "deny", by
			s.audit.Record(e)
		})
		return &authzv1.AnswerSheetResponse{}, err
	}
	always := req.GetDecision() == authzv1.Decision_DECISION_ALWAYS
	var (
		made     grants.Grant
		answered sheets.Sheet
	)
	err := s.sheets.Allow(req.GetSheetId(), func(sh sheets.Sheet) (string, error) {
		answered = sh
		g, err := answerGrant(sh, always, scopeFromProto(req.GetScope()))
		if err != nil {
			return "", err
		}
		if always {
			if err := s.addAlso(g, sh.Need); err != nil {
				return "", err
			}
		}
		made, err = s.grants.Add(g)
		if err == nil {
			// Recorded while the sheet is held, so before the call it
			// allows is recorded.
			e := sheetEntry(audit.SheetAnswered, sh)
			e.Decision, e.Grant, e.GrantKind, e.Scope, e.By = grantKind(made), made.ID, grantKind(made), made.Scope.String(), by
			s.audit.Record(e)
		}
		return made.ID, err
	})
	if err != nil {
		return nil, err
	}
	// A grant wide enough may answer other waiting sheets too.
	s.sheets.Settle(func(sh sheets.Sheet) (string, bool) {
		g, ok, _ := s.findAll(caller{sh.Client, sh.Program, sh.ConnectionID}, sh.Need)
		return g.ID, ok
	})
	s.logger.InfoContext(ctx, "sheet answered", "sheet", req.GetSheetId(), "grant", made.ID, "always", always, "scope", made.Scope.String(),
		"client", answered.Client, "capability", answered.Need.Capability.String(), "subject", answered.Need.Subject)
	return &authzv1.AnswerSheetResponse{Grant: grantToProto(made)}, nil
}

// ListGrants lists the standing grants and the once grants of live
// connections.
func (s *Service) ListGrants(context.Context, *authzv1.ListGrantsRequest) (*authzv1.ListGrantsResponse, error) {
	if err := s.grants.Err(); err != nil {
		return nil, err
	}
	s.grants.Prune(s.alive)
	resp := &authzv1.ListGrantsResponse{}
	for _, g := range s.grants.List() {
		resp.Grants = append(resp.Grants, grantToProto(g))
	}
	return resp, nil
}

// RevokeGrant revokes a grant. It is the human's act (Settings › MCP, or
// attach's grants view, which terminald relays): the guard refuses it to
// processes inside Phantom. The grant is revoked in
// memory even when the grants file cannot be written; the response then
// says why the file was not updated.
func (s *Service) RevokeGrant(ctx context.Context, req *authzv1.RevokeGrantRequest) (*authzv1.RevokeGrantResponse, error) {
	r, err := s.grants.Revoke(req.GetGrantId())
	if err != nil {
		return nil, err
	}
	e := grantEntry(audit.GrantRevoked, r.Grant)
	e.By = actorOf(ctx)
	e.By.For = relayedFor(req.GetRelayedForPid())
	resp := &authzv1.RevokeGrantResponse{}
	if r.FileErr != nil {
		resp.FileError = r.FileErr.Error()
		e.Reason = "revoked in memory; the grants file could not be updated: " + resp.FileError
		s.logger.ErrorContext(ctx, "grant revoked in memory only: the grants file could not be updated", "grant", r.Grant.ID, "err", r.FileErr)
	}
	s.audit.Record(e)
	return resp, nil
}

// AcceptGrant puts in force a pending grant (one that appeared in the
// grants file while authz ran). Like revoking, it is the human's act: the
// guard refuses it to processes inside Phantom.
func (s *Service) AcceptGrant(ctx context.Context, req *authzv1.AcceptGrantRequest) (*authzv1.AcceptGrantResponse, error) {
	g, err := s.grants.Accept(req.GetGrantId())
	if err != nil {
		return nil, err
	}
	e := grantEntry(audit.GrantAccepted, g)
	e.By = actorOf(ctx)
	s.audit.Record(e)
	s.logger.InfoContext(ctx, "pending grant accepted", "grant", g.ID, "client", g.Client, "capability", g.Capability.String())
	return &authzv1.AcceptGrantResponse{Grant: grantToProto(g)}, nil
}

// GetStatus reports the grants file's and the audit log's state.
func (s *Service) GetStatus(context.Context, *authzv1.GetStatusRequest) (*authzv1.GetStatusResponse, error) {
	g, a := s.grants.Status(), s.audit.Status()
	resp := &authzv1.GetStatusResponse{
		Grants: &authzv1.GrantsFileStatus{Path: g.Path, Problem: errText(g.Problem), Unsaved: errText(g.Unsaved),
			Standing: int32(g.Standing), Pending: int32(g.Pending)},
		Audit: &authzv1.AuditLogStatus{Path: a.Path, Problem: errText(a.Problem), Lost: a.Lost},
	}
	if !a.FailingSince.IsZero() {
		resp.Audit.FailingSince = a.FailingSince.UTC().Format(time.RFC3339)
	}
	return resp, nil
}

// answerGrant is the grant an allow answer to sh makes. "Once" allows
// exactly the call on the sheet, on the caller's connection: it has no
// scope to widen, so a scope wider than the call's reach is refused rather
// than silently dropped. "Always" is written down for the client and the
// program behind it, with the scope asked for (the reach by default),
// never narrower than the reach.
func answerGrant(sh sheets.Sheet, always bool, scope policy.Scope) (grants.Grant, error) {
	g := grants.Grant{Client: sh.Client, Capability: sh.Need.Capability, Scope: sh.Need.Reach, Project: sh.Need.Project}
	if !always {
		if scope != policy.ScopeUnspecified && scope != sh.Need.Reach {
			return grants.Grant{}, fmt.Errorf("a once answer allows only the call on the sheet, so it takes no scope (%s asked, the call "+
				"reaches %s); a scope goes with --always: %w", scope, sh.Need.Reach, errdefs.ErrInvalidArgument)
		}
		g.ConnectionID, g.Call, g.CallText = sh.ConnectionID, sh.Need.Call, sh.Need.Subject
		return g, nil
	}
	if sh.Program == "" {
		return grants.Grant{}, fmt.Errorf("the program that asked could not be read from the process tree, so an always grant "+
			"could not say whom it is for; answer once instead: %w", errdefs.ErrFailedPrecondition)
	}
	if scope != policy.ScopeUnspecified {
		g.Scope = scope
	}
	if !g.Scope.Covers(sh.Need.Reach) {
		return grants.Grant{}, fmt.Errorf("scope %s is narrower than the request's reach %s: %w", g.Scope, sh.Need.Reach, errdefs.ErrInvalidArgument)
	}
	g.Always, g.Program = true, sh.Program
	return g, nil
}

// grantKey is what a request is matched against grants with.
func grantKey(c caller, need policy.Need) grants.Key {
	return grants.Key{Client: c.client, Program: c.program, ConnectionID: c.conn, Capability: need.Capability, Reach: need.Reach,
		Project: need.Project, Call: need.Call}
}

// caller is who a grant is looked up for.
type caller struct{ client, program, conn string }

// findAll finds a grant covering the call: a once grant for exactly this
// call (which covers everything the call needs: one sheet asked for all
// of it), or standing grants covering need's capability and each of its
// Also capabilities (run_command with wait_seconds needs read as well as
// run); it returns the grant of the main capability.
func (s *Service) findAll(c caller, need policy.Need) (grants.Grant, bool, error) {
	g, ok, err := s.grants.Find(grantKey(c, need))
	if err != nil || !ok || !g.Always {
		return g, ok, err
	}
	for _, a := range need.Also {
		k := grantKey(c, need)
		k.Capability, k.Call = a, ""
		if _, ok, err := s.grants.Find(k); err != nil || !ok {
			return grants.Grant{}, false, err
		}
	}
	return g, true, nil
}

// addAlso adds, for a sheet answered "always" with grant g, a grant like g
// for each Also capability of need that no grant covers yet: the human
// answered once for all of them.
func (s *Service) addAlso(g grants.Grant, need policy.Need) error {
	for _, c := range need.Also {
		k := grantKey(caller{g.Client, g.Program, ""}, need)
		k.Capability, k.Call = c, ""
		if _, ok, err := s.grants.Find(k); err != nil || ok {
			if err != nil {
				return err
			}
			continue
		}
		a := g
		a.Capability = c
		if _, err := s.grants.Add(a); err != nil {
			return fmt.Errorf("add the %s grant that goes with the %s one: %w", c, g.Capability, err)
		}
	}
	return nil
}
