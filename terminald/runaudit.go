package terminald

import (
	"context"
	"errors"
	"fmt"

	"github.com/phantom-dev/phantom/internal/guard"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

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
	who := auditCaller(c, s.callerClient(ctx))
	if len(command) > 200 {
		command = command[:200] + "…"
	}
	req := &authzv1.RecordEventRequest{Caller: who, Event: authzv1.ReportedEvent_REPORTED_EVENT_RUN_NOT_TYPED, Target: id,
		Detail: fmt.Sprintf("run_command %q was allowed but not typed into tab %s: %v", command, id, nt.Err)}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if _, err := s.events.RecordEvent(ctx, req); err != nil {
		s.logger.Error("an agent's run_command that typed nothing is not in the audit log: authz did not record it",
			"tab", id, "caller_tab", who.GetTabId(), "err", err)
	}
}
