package terminald

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/guard"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// recordTimeout bounds the report of an agent's focus to authz.
const recordTimeout = 5 * time.Second

// EventRecorder writes what terminald did for an agent to authz's audit
// log (authzv1.AuthzServiceClient is one).
type EventRecorder interface {
	RecordEvent(ctx context.Context, in *authzv1.RecordEventRequest, opts ...grpc.CallOption) (*authzv1.RecordEventResponse, error)
}

// SetEventRecorder installs where agents' focus requests are recorded and
// the logger that says when recording fails (nil: none). Call it before
// serving; without it nothing is recorded (tests).
func (s *Service) SetEventRecorder(r EventRecorder, logger *slog.Logger) {
	s.events = r
	if logger != nil {
		s.logger = logger
	}
}

// FocusTerminal brings a tab forward. The human's call (the CLI outside
// Phantom) switches every attached client of the tab's window at once.
// An agent's — through the gateway, or a process inside Phantom calling
// directly — switches only the clients whose human is not typing; the
// others show a notice (package attach, focus.go). Every agent's call is
// recorded in authz's audit log with what it did.
func (s *Service) FocusTerminal(ctx context.Context, r *terminalv1.FocusTerminalRequest) (*terminalv1.FocusTerminalResponse, error) {
	id := r.GetTerminalId()
	c, _ := guard.CallerFrom(ctx)
	if !c.ForAgent {
		t, err := s.ws.Focus(id)
		if err != nil {
			return nil, err
		}
		n := s.focuses.Attached(t.WindowID)
		resp := &terminalv1.FocusTerminalResponse{Terminal: s.terminalFor(ctx, t, false), Outcome: terminalv1.FocusTerminalResponse_OUTCOME_MOVED,
			MovedClients: int32(n), Note: fmt.Sprintf("Tab %s is in front: every attached client of window %s shows it.", id, t.WindowID)}
		if n == 0 {
			resp.Outcome, resp.Note = terminalv1.FocusTerminalResponse_OUTCOME_NO_CLIENT, noClientNote(id, t.WindowID)
		}
		return resp, nil
	}
	who := auditCaller(c, s.callerClient(ctx))
	res, err := s.focuses.Request(ctx, s.ws, attach.FocusRequest{Tab: id, Client: who.GetClient(), FromTab: c.TabID})
	if err != nil {
		return nil, err
	}
	resp := focusResponse(id, res)
	resp.Terminal = s.terminalFor(ctx, res.Terminal, false)
	s.recordFocus(ctx, who, id, res)
	return resp, nil
}

// focusResponse words what an agent's request did.
func focusResponse(id string, res attach.FocusResult) *terminalv1.FocusTerminalResponse {
	resp := &terminalv1.FocusTerminalResponse{MovedClients: int32(res.Moved), NotifiedClients: int32(res.Noticed)}
	win := res.Terminal.WindowID
	switch res.Outcome {
	case attach.FocusMoved:
		resp.Outcome = terminalv1.FocusTerminalResponse_OUTCOME_MOVED
		resp.Note = fmt.Sprintf("Tab %s is in front: every attached client of window %s shows it (%d).", id, win, res.Moved)
	case attach.FocusNotice:
		resp.Outcome = terminalv1.FocusTerminalResponse_OUTCOME_NOTICE
		resp.Note = fmt.Sprintf("Tab %s was NOT brought forward for the human: %s, and an agent never moves the keys of a human "+
			"who is typing. A notice on their status line names you and tab %s; they may show it with a key or ignore it. "+
			"Do not call focus_terminal again to insist.", id, strings.Join(uniq(res.Why), "; "), id)
		if res.Moved > 0 {
			resp.Note += fmt.Sprintf(" %d other attached client(s) of window %s, which were quiet, show it now.", res.Moved, win)
		}
	case attach.FocusNoClient:
		resp.Outcome, resp.Note = terminalv1.FocusTerminalResponse_OUTCOME_NO_CLIENT, noClientNote(id, win)
	}
	return resp
}

func noClientNote(id, win string) string {
	return fmt.Sprintf("Nobody is attached to window %s: tab %s is now its focused tab, which the next client to attach shows.", win, id)
}

// uniq drops repeated reasons, keeping the order.
func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// focusEvents are the audit events of the outcomes.
var focusEvents = map[attach.FocusOutcome]authzv1.ReportedEvent{
	attach.FocusMoved:    authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_MOVED,
	attach.FocusNotice:   authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NOTICE,
	attach.FocusNoClient: authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NO_CLIENT,
}

// recordFocus reports an agent's focus request and what it did to authz's
// audit log. The call has happened by then; a report that fails is
// logged, for the human, and does not undo it.
func (s *Service) recordFocus(ctx context.Context, who *authzv1.Caller, id string, res attach.FocusResult) {
	if s.events == nil {
		return
	}
	req := &authzv1.RecordEventRequest{Caller: who, Event: focusEvents[res.Outcome], Target: id, Detail: focusDetail(id, res)}
	// Recorded even when the agent gave up on its call meanwhile.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if _, err := s.events.RecordEvent(ctx, req); err != nil {
		s.logger.Error("an agent's focus_terminal is not in the audit log: authz did not record it",
			"tab", id, "caller_tab", who.GetTabId(), "client", who.GetClient(), "outcome", req.GetEvent().String(), "err", err)
	}
}

// auditCaller is the agent as the audit log names it: the client name its
// tab records ("shell" for a process inside Phantom with none, "agent"
// for one relayed from outside every tab), its tab, and — for a process
// that called terminald itself — its process. A call relayed for an agent
// (by the gateway, gitd or editord) is named by who relayed it.
func auditCaller(c guard.Caller, client string) *authzv1.Caller {
	ac := &authzv1.Caller{Client: client, TabId: c.TabID, InsideWithoutTab: (c.Inside || c.LeftTab) && c.TabID == "",
		ConnectionId: "relayed"}
	switch {
	case c.Peer != "":
		ac.ConnectionId = "relayed-by-" + c.Peer
	case c.PID > 0:
		ac.ConnectionId = "relayed-by-pid-" + strconv.Itoa(c.PID)
	}
	if c.Inside {
		ac.ConnectionId, ac.Pid, ac.ProcessStartTime = guard.ProcessConnection(c.PID, c.StartTime), int32(c.PID), c.StartTime
	}
	if ac.Client == "" {
		ac.Client = "agent"
		if c.Inside {
			ac.Client = "shell"
		}
	}
	return ac
}

// focusDetail says in words what a request did, for the audit log.
func focusDetail(id string, res attach.FocusResult) string {
	win := res.Terminal.WindowID
	switch res.Outcome {
	case attach.FocusMoved:
		return fmt.Sprintf("switched %d attached client(s) of window %s to tab %s", res.Moved, win, id)
	case attach.FocusNotice:
		return fmt.Sprintf("%d attached client(s) of window %s in use, not switched: shown a notice about tab %s (%s); %d switched",
			res.Noticed, win, id, strings.Join(uniq(res.Why), "; "), res.Moved)
	}
	return fmt.Sprintf("nobody attached to window %s: its focused tab set to %s", win, id)
}
