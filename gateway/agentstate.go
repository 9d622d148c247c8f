package gateway

import (
	"context"
	"sync"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// stateInterval is the least time between two agent-state reports for one
// connection. Fast calls would otherwise cost terminald two extra RPCs
// each; with it, a burst of calls shows as WORKING and settles on IDLE
// within an interval of the last one.
const stateInterval = 25 * time.Millisecond

// waitingAfter is how long Authorize may take before the tab shows
// WAITING_FOR_PERMISSION: a decision from a standing grant comes back in
// well under a millisecond, so one still pending after this waits for a
// sheet.
const waitingAfter = 100 * time.Millisecond

// agentState tracks what one connection's agent is doing — from the number
// of calls in progress and of calls waiting for authz — and reports it to
// terminald from its own goroutine, coalescing changes so tool calls never
// wait for it.
type agentState struct {
	tab, client string
	set         func(ctx context.Context, req *terminalv1.SetAgentStateRequest) error

	mu               sync.Mutex
	working, waiting int
	wake             chan struct{}
}

func newAgentState(tab, client string, set func(context.Context, *terminalv1.SetAgentStateRequest) error) *agentState {
	return &agentState{tab: tab, client: client, set: set, wake: make(chan struct{}, 1)}
}

// desired is the state to show.
func (a *agentState) desired() terminalv1.AgentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.waiting > 0:
		return terminalv1.AgentState_AGENT_STATE_WAITING_FOR_PERMISSION
	case a.working > 0:
		return terminalv1.AgentState_AGENT_STATE_WORKING
	}
	return terminalv1.AgentState_AGENT_STATE_IDLE
}

func (a *agentState) change(working, waiting int) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.working += working
	a.waiting += waiting
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// callStarted and callEnded bracket a tool call.
func (a *agentState) callStarted() { a.change(1, 0) }
func (a *agentState) callEnded()   { a.change(-1, 0) }

// authorizing marks the call as waiting for permission if Authorize has not
// returned within waitingAfter; the returned func ends that.
func (a *agentState) authorizing() (done func()) {
	if a == nil {
		return func() {}
	}
	var mu sync.Mutex
	finished, marked := false, false
	t := time.AfterFunc(waitingAfter, func() {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			marked = true
			a.change(0, 1)
		}
	})
	return func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		finished = true
		if marked {
			a.change(0, -1)
		}
	}
}

// run reports the state (IDLE first) until ctx is done. It does not send
// the final UNSPECIFIED: the connection does, once it knows it was the
// tab's last.
func (a *agentState) run(ctx context.Context) {
	sent := terminalv1.AgentState(-1)
	for {
		if want := a.desired(); want != sent {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			pause := stateInterval
			if a.set(cctx, &terminalv1.SetAgentStateRequest{TerminalId: a.tab, Client: a.client, State: want}) == nil {
				sent = want
			} else {
				pause = time.Second // terminald is down or the tab closed
			}
			cancel()
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
	}
}
