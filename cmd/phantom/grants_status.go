package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/phantom-dev/phantom/internal/paths"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// permissionsStatus is what `phantom status` says about authz's files:
// whether the grants file is in use (an invalid or unsafe one refuses
// every call that needs a grant) and whether the audit log is written.
type permissionsStatus struct {
	GrantsFile        string `json:"grants_file"`
	GrantsProblem     string `json:"grants_problem,omitempty"`
	GrantsUnsaved     string `json:"grants_unsaved,omitempty"`
	StandingGrants    int    `json:"standing_grants"`
	PendingGrants     int    `json:"pending_grants,omitempty"`
	AuditLog          string `json:"audit_log"`
	AuditProblem      string `json:"audit_problem,omitempty"`
	AuditFailingSince string `json:"audit_failing_since,omitempty"`
	AuditLost         uint64 `json:"audit_lost,omitempty"`
}

// permissionsHealth asks authz how its grants file and audit log fare; nil
// when authz does not answer (status already shows it down).
func permissionsHealth(l paths.Layout) *permissionsStatus {
	cc, err := dialDaemon(l, "authz")
	if err != nil {
		return nil
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := authzv1.NewAuthzServiceClient(cc).GetStatus(ctx, &authzv1.GetStatusRequest{})
	if err != nil {
		return nil
	}
	g, a := r.GetGrants(), r.GetAudit()
	return &permissionsStatus{GrantsFile: g.GetPath(), GrantsProblem: g.GetProblem(), GrantsUnsaved: g.GetUnsaved(),
		StandingGrants: int(g.GetStanding()), PendingGrants: int(g.GetPending()), AuditLog: a.GetPath(), AuditProblem: a.GetProblem(),
		AuditFailingSince: a.GetFailingSince(), AuditLost: a.GetLost()}
}

// printPermissions prints p for `phantom status`: one line each for the
// grants file and the audit log, and their problems in full.
func printPermissions(w io.Writer, p *permissionsStatus) {
	if p == nil {
		return
	}
	switch {
	case p.GrantsProblem != "":
		fmt.Fprintf(w, "grants      REFUSED: %s\n", p.GrantsProblem)
	case p.GrantsUnsaved != "":
		fmt.Fprintf(w, "grants      %d standing, held in memory: the file could not be updated (a revocation would come back "+
			"if authz restarted now): %s\n", p.StandingGrants, p.GrantsUnsaved)
	case p.PendingGrants > 0:
		fmt.Fprintf(w, "grants      %d standing, %d added to the file by hand and pending (phantom grants accept ID)  (%s)\n",
			p.StandingGrants, p.PendingGrants, p.GrantsFile)
	default:
		fmt.Fprintf(w, "grants      %d standing  (%s)\n", p.StandingGrants, p.GrantsFile)
	}
	switch {
	case p.AuditProblem != "":
		fmt.Fprintf(w, "audit log   FAILING since %s, %d entries lost; commands and other acts are refused until it "+
			"can be written: %s\n", p.AuditFailingSince, p.AuditLost, p.AuditProblem)
	case p.AuditLost > 0:
		fmt.Fprintf(w, "audit log   %s  (writing again; %d entries were lost)\n", p.AuditLog, p.AuditLost)
	default:
		fmt.Fprintf(w, "audit log   %s\n", p.AuditLog)
	}
}
