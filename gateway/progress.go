package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressEvery is how often a call waiting on a permission sheet tells
// its client so. Codex and Gemini CLI time a call out after 60 s unless
// progress arrives, and a sheet may wait for the human for longer.
const progressEvery = 5 * time.Second

// progress reports a call's progress to its client: nothing unless the
// client sent a progressToken with the call.
type progress struct {
	session *mcp.ServerSession
	token   any
	every   time.Duration
	// sent counts the notifications sent for the call, by all its waits
	// (the permission sheet's, the daemon's), so that progress values
	// keep increasing.
	sent *atomic.Int64
}

// progressFor is the progress reporter of a tools/call.
func progressFor(req *mcp.CallToolRequest, every time.Duration) progress {
	p := progress{session: req.Session, token: req.Params.GetProgressToken(), every: every}
	if p.token != nil {
		p.sent = new(atomic.Int64)
	}
	return p
}

// whileWaiting sends notifications/progress while the call waits for the
// human: the first once the permission check has taken longer than a
// standing grant would (waitingAfter), then every p.every, until stop,
// which returns after the last one was sent, so that none follows the
// result.
func (p progress) whileWaiting(ctx context.Context, tool string) (stop func()) {
	return p.while(ctx, waitingAfter, func(waited time.Duration) string { return waitingMessage(tool, waited) })
}

// while sends notifications/progress, the first after first and then
// every p.every, each with the message say(time waited), until stop,
// which returns after the last one was sent.
func (p progress) while(ctx context.Context, first time.Duration, say func(waited time.Duration) string) (stop func()) {
	if p.token == nil || p.session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTimer(first)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: p.token,
				Progress:      float64(p.sent.Add(1)),
				Message:       say(time.Since(start)),
			})
			t.Reset(p.every)
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// waitingMessage says what a call waits for, and since when.
func waitingMessage(tool string, waited time.Duration) string {
	msg := tool + " is waiting for the human to answer a permission sheet in Phantom; it runs once they allow it"
	if waited >= time.Second {
		msg += fmt.Sprintf(" (waiting for %s)", waited.Round(time.Second))
	}
	return msg
}
