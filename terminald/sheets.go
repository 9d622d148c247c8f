package terminald

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/status"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/toolreg"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	"github.com/phantom-dev/phantom/terminald/attach"
)

// Reconnect delays of the sheet watcher when authz is down or restarts.
const (
	sheetRetryMin = 100 * time.Millisecond
	sheetRetryMax = 2 * time.Second
)

// sheetWatcher keeps terminald's copy of the permission sheet on screen:
// a WatchSheets stream to authz, reopened with backoff while authz is down
// or after it restarts. Attach sessions read it (attach.Sheets) and answer
// through it. terminald runs outside every tab, and attach refuses clients
// inside tabs, so authz takes these answers as the human's.
type sheetWatcher struct {
	cc     *grpc.ClientConn
	az     authzv1.AuthzServiceClient
	logger *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	cur     *attach.Sheet
	waiting int
	alert   string        // authz's grants problem; see Alert
	changed chan struct{} // closed and replaced at each change
}

// startSheetWatcher starts watching the sheets of authz at addr. Stop it
// with stop.
func startSheetWatcher(addr string, logger *slog.Logger) (*sheetWatcher, error) {
	// gRPC's own reconnect backoff grows to two minutes; a restarted authz
	// must show its sheets sooner.
	cc, err := daemon.Dial(addr, grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: sheetRetryMin, Multiplier: 1.6, Jitter: 0.2, MaxDelay: sheetRetryMax},
		MinConnectTimeout: 5 * time.Second,
	}))
	if err != nil {
		return nil, fmt.Errorf("permission sheets: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &sheetWatcher{cc: cc, az: authzv1.NewAuthzServiceClient(cc), logger: logger,
		cancel: cancel, done: make(chan struct{}), changed: make(chan struct{})}
	go w.run(ctx)
	return w, nil
}

// stop ends the watch and waits for it.
func (w *sheetWatcher) stop() {
	w.cancel()
	<-w.done
	w.cc.Close()
}

// run keeps a stream open until ctx ends.
func (w *sheetWatcher) run(ctx context.Context) {
	defer close(w.done)
	delay := sheetRetryMin
	for {
		got, err := w.watch(ctx)
		// Whatever was on screen is unknown now; a new stream starts with
		// the current sheet.
		w.set(nil, 0, "")
		if ctx.Err() != nil {
			return
		}
		if got {
			w.logger.Info("permission sheet stream from authz ended; reconnecting", "err", err)
			delay = sheetRetryMin
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(delay*2, sheetRetryMax)
	}
}

// watch follows one stream until it fails; got reports whether it
// delivered anything.
func (w *sheetWatcher) watch(ctx context.Context) (got bool, err error) {
	stream, err := w.az.WatchSheets(ctx, &authzv1.WatchSheetsRequest{})
	if err != nil {
		return false, err
	}
	for {
		r, err := stream.Recv()
		if err != nil {
			return got, err
		}
		got = true
		w.set(toAttachSheet(r.GetSheet(), time.Now()), int(r.GetWaiting()), r.GetGrantsProblem())
	}
}

// set records the sheet on screen and authz's grants problem, and wakes
// whoever waits for a change.
func (w *sheetWatcher) set(s *attach.Sheet, waiting int, alert string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s == nil && w.cur == nil && waiting == w.waiting && alert == w.alert {
		return
	}
	w.cur, w.waiting, w.alert = s, waiting, alert
	close(w.changed)
	w.changed = make(chan struct{})
}

// Current returns the sheet on screen and how many wait in all.
func (w *sheetWatcher) Current() (*attach.Sheet, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur, w.waiting
}

// Alert is why authz refuses its grants file (every call that needs a
// grant is then refused), or "" (attach.Alerter).
func (w *sheetWatcher) Alert() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.alert
}

// Changed returns a channel closed at the next change.
func (w *sheetWatcher) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// Answer forwards the human's answer to authz.
func (w *sheetWatcher) Answer(ctx context.Context, id string, d attach.Decision, scope attach.Scope) error {
	req := &authzv1.AnswerSheetRequest{SheetId: id, Decision: toDecision(d), RelayedForPid: int32(attach.ClientPID(ctx))}
	if d != attach.DecisionDeny {
		req.Scope = toScope(scope)
	}
	if _, err := w.az.AnswerSheet(ctx, req); err != nil {
		if st, ok := status.FromError(err); ok {
			return errors.New(st.Message())
		}
		return err
	}
	return nil
}

// toAttachSheet converts a sheet for attach; its countdown starts at now.
func toAttachSheet(s *authzv1.Sheet, now time.Time) *attach.Sheet {
	if s == nil || s.GetId() == "" {
		return nil
	}
	out := &attach.Sheet{
		ID: s.GetId(), Client: s.GetClient(), TabID: s.GetTabId(), TabTitle: s.GetTabTitle(), LeftTab: s.GetInsideWithoutTab(),
		Capability: toolreg.CapabilityName(s.GetCapability()), Reach: fromScope(s.GetReach()),
		Tool: s.GetTool(), Subject: s.GetSubject(), Project: s.GetProject(), Program: s.GetProgram(),
		WaitingBehind: int(s.GetWaitingBehind()),
	}
	if s.GetSecondsLeft() > 0 {
		out.Deadline = now.Add(time.Duration(s.GetSecondsLeft()) * time.Second)
	}
	return out
}

func fromScope(s authzv1.Scope) attach.Scope {
	switch s {
	case authzv1.Scope_SCOPE_GROUP:
		return attach.ScopeGroup
	case authzv1.Scope_SCOPE_ALL:
		return attach.ScopeAll
	}
	return attach.ScopeTab
}

func toScope(s attach.Scope) authzv1.Scope {
	switch s {
	case attach.ScopeTab:
		return authzv1.Scope_SCOPE_TAB
	case attach.ScopeGroup:
		return authzv1.Scope_SCOPE_GROUP
	case attach.ScopeAll:
		return authzv1.Scope_SCOPE_ALL
	}
	return authzv1.Scope_SCOPE_UNSPECIFIED
}

func toDecision(d attach.Decision) authzv1.Decision {
	switch d {
	case attach.DecisionDeny:
		return authzv1.Decision_DECISION_DENY
	case attach.DecisionOnce:
		return authzv1.Decision_DECISION_ONCE
	case attach.DecisionAlways:
		return authzv1.Decision_DECISION_ALWAYS
	}
	return authzv1.Decision_DECISION_UNSPECIFIED
}
