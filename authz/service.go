// Package authz is the permission daemon: a thin gRPC adapter over the
// policy (authz/policy: which tool needs which capability, how far a call
// reaches), the grants a human gave (authz/grants) and the sheets that ask
// the human (authz/sheets).
package authz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

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
	done      chan struct{} // closed by Close: ends the watch streams
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
}

// NewService builds the service.
func NewService(o Options) *Service {
	if o.MayAnswer == nil {
		o.MayAnswer = func(context.Context) error { return nil }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{policy: o.Policy, grants: o.Grants, sheets: o.Sheets, mayAnswer: o.MayAnswer,
		alive: connectionAlive(procfs.Default), logger: o.Logger, done: make(chan struct{})}
}

// Close refuses the waiting sheets and ends the watch streams (shutdown).
func (s *Service) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.sheets.Close()
}

// Authorize decides one tool call: the policy says what it needs; a grant
// covers it, or a sheet asks the human and the call waits for the answer.
// Every refusal is a response with a reason, never an open door.
func (s *Service) Authorize(ctx context.Context, req *authzv1.AuthorizeRequest) (*authzv1.AuthorizeResponse, error) {
	c := callerFromProto(req.GetCaller())
	need, err := s.policy.Evaluate(ctx, c, req.GetTool(), req.GetArgumentsJson())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return &authzv1.AuthorizeResponse{Reason: err.Error()}, nil
	}
	resp := &authzv1.AuthorizeResponse{Capability: capabilityToProto(need.Capability), Reach: scopeToProto(need.Reach)}
	if need.Capability == policy.None {
		resp.Allowed = true
		return resp, nil
	}
	s.grants.Prune(s.alive)
	g, ok, err := s.grants.Find(grantKey(c.Client, c.ConnectionID, need))
	if err != nil {
		s.logger.ErrorContext(ctx, "refused: grants file unusable", "tool", need.Tool, "err", err)
		resp.Reason = "refused: " + err.Error()
		return resp, nil
	}
	if ok {
		resp.Allowed, resp.GrantId = true, g.ID
		return resp, nil
	}
	gid, err := s.sheets.Ask(ctx, sheets.Request{Client: c.Client, ConnectionID: c.ConnectionID,
		TabID: c.TabID, TabTitle: need.CallerTitle, PID: c.PID, InsideWithoutTab: c.InsideWithoutTab, Need: need})
	var refusal *sheets.Refusal
	switch {
	case errors.As(err, &refusal):
		resp.Reason = refusal.Reason
		return resp, nil
	case err != nil:
		return nil, err
	}
	resp.Allowed, resp.GrantId = true, gid
	return resp, nil
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
		changed := s.sheets.Changed()
		list := s.sheets.List()
		ev := &authzv1.WatchSheetsResponse{Waiting: int32(len(list))}
		if len(list) > 0 {
			ev.Sheet = sheetToProto(list[0], s.sheets.Now(), len(list)-1)
		}
		if err := stream.Send(ev); err != nil {
			return err
		}
		select {
		case <-changed:
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
	if req.GetDecision() == authzv1.Decision_DECISION_DENY {
		return &authzv1.AnswerSheetResponse{}, s.sheets.Deny(req.GetSheetId())
	}
	always := req.GetDecision() == authzv1.Decision_DECISION_ALWAYS
	var made grants.Grant
	err := s.sheets.Allow(req.GetSheetId(), func(sh sheets.Sheet) (string, error) {
		scope := scopeFromProto(req.GetScope())
		if scope == policy.ScopeUnspecified {
			scope = sh.Need.Reach
		}
		if !scope.Covers(sh.Need.Reach) {
			return "", fmt.Errorf("scope %s is narrower than the request's reach %s: %w", scope, sh.Need.Reach, errdefs.ErrInvalidArgument)
		}
		g := grants.Grant{Client: sh.Client, Capability: sh.Need.Capability, Scope: scope, Project: sh.Need.Project, Always: always}
		if !always {
			g.ConnectionID = sh.ConnectionID
		}
		var err error
		made, err = s.grants.Add(g)
		return made.ID, err
	})
	if err != nil {
		return nil, err
	}
	// A grant wide enough may answer other waiting sheets too.
	s.sheets.Settle(func(sh sheets.Sheet) (string, bool) {
		g, ok, _ := s.grants.Find(grantKey(sh.Client, sh.ConnectionID, sh.Need))
		return g.ID, ok
	})
	s.logger.InfoContext(ctx, "sheet answered", "sheet", req.GetSheetId(), "grant", made.ID, "always", always, "scope", made.Scope.String())
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

// RevokeGrant revokes a grant. It is the human's act (Settings › MCP): the
// guard refuses it to processes inside Phantom.
func (s *Service) RevokeGrant(_ context.Context, req *authzv1.RevokeGrantRequest) (*authzv1.RevokeGrantResponse, error) {
	return &authzv1.RevokeGrantResponse{}, s.grants.Revoke(req.GetGrantId())
}

// grantKey is what a request is matched against grants with.
func grantKey(client, conn string, need policy.Need) grants.Key {
	return grants.Key{Client: client, ConnectionID: conn, Capability: need.Capability, Reach: need.Reach, Project: need.Project}
}
