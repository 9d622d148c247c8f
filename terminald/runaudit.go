package terminald

import (
	"context"
	"errors"
	"fmt"

	"github.com/phantom-dev/phantom/internal/guard"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// recordKeysNotTyped tells the audit log that an agent's send_keys,
// which authz allowed (and recorded with its keys), typed nothing into
// tab id (it closed in between): what the log holds is what reached the
// tab.
func (s *Service) recordKeysNotTyped(ctx context.Context, id string, err error) {
	c, _ := guard.CallerFrom(ctx)
	if s.events == nil || !c.ForAgent {
		return
	}
	s.report(ctx, c, &authzv1.RecordEventRequest{Event: authzv1.ReportedEvent_REPORTED_EVENT_KEYS_NOT_TYPED, Target: id,
		Detail: fmt.Sprintf("send_keys was allowed but typed nothing into tab %s: %v", id, err)})
}

// report sends req, for caller c, to authz's audit log, within a bound.
func (s *Service) report(ctx context.Context, c guard.Caller, req *authzv1.RecordEventRequest) {
	req.Caller = auditCaller(c, s.callerClient(ctx))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if _, err := s.events.RecordEvent(ctx, req); err != nil {
		s.logger.Error("an agent's act that did nothing is not in the audit log: authz did not record it",
			"event", req.GetEvent().String(), "tab", req.GetTarget(), "caller_tab", req.GetCaller().GetTabId(), "err", err)
	}
}

// recordNotTyped tells the audit log that an agent's run_command, which
// authz allowed (and recorded with its command), typed nothing into tab
// id: what the log holds is what reached the shell. The reason never
// quotes the line's text (it may be the human's secret).
func (s *Service) recordNotTyped(ctx context.Context, id, command string, err error) {
	var nt *workspace.NotTyped
	c, _ := guard.CallerFrom(ctx)
	if s.events == nil || !c.ForAgent || !errors.As(err, &nt) {
		return
	}
	if len(command) > 200 {
		command = command[:200] + "…"
	}
	s.report(ctx, c, &authzv1.RecordEventRequest{Event: authzv1.ReportedEvent_REPORTED_EVENT_RUN_NOT_TYPED, Target: id,
		Detail: fmt.Sprintf("run_command %q was allowed but not typed into tab %s: %v", command, id, nt.Err)})
}
