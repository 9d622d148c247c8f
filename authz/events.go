package authz

import (
	"context"
	"fmt"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/errdefs"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// reportedEvents maps what a daemon may report to the audit event and the
// tool it is about. Only these are accepted: RecordEvent writes the log
// in the daemons' name, not whatever line a caller makes up.
var reportedEvents = map[authzv1.ReportedEvent]struct{ event, tool string }{
	authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_MOVED:     {audit.FocusMoved, "focus_terminal"},
	authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NOTICE:    {audit.FocusNotice, "focus_terminal"},
	authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NO_CLIENT: {audit.FocusNoClient, "focus_terminal"},
	authzv1.ReportedEvent_REPORTED_EVENT_RUN_NOT_TYPED:   {audit.RunNotTyped, "run_command"},
	authzv1.ReportedEvent_REPORTED_EVENT_KEYS_NOT_TYPED:  {audit.KeysNotTyped, "send_keys"},
}

// RecordEvent writes an event a daemon reports to the audit log: an act
// done for an agent on a call authz did not decide (its tool needs no
// grant) that still reaches the human. The guard keeps processes inside
// Phantom out (insideRefusals) and, over TCP, every certificate but
// terminald's. Repeats go through the coalescer, as every line an agent
// can cause in a loop does, so that a flood cannot push the log out.
func (s *Service) RecordEvent(_ context.Context, req *authzv1.RecordEventRequest) (*authzv1.RecordEventResponse, error) {
	ev, ok := reportedEvents[req.GetEvent()]
	if !ok {
		return nil, fmt.Errorf("record event: %v is no event a daemon reports: %w", req.GetEvent(), errdefs.ErrInvalidArgument)
	}
	c := callerFromProto(req.GetCaller())
	s.record(callEntry(ev.event, c, policy.Need{Tool: ev.tool, Target: req.GetTarget(), Subject: req.GetDetail()}, ""))
	return &authzv1.RecordEventResponse{}, nil
}
