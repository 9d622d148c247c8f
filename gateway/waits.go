package gateway

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/toolreg"
)

// whileDaemonWaits sends notifications/progress while the daemon serves a
// call of a tool that states what it may wait for (the tool option's
// waits_for): every p.every, saying what it waits for, how long it has
// and how long it waits at most. A call that answers within p.every
// sends none.
func (p progress) whileDaemonWaits(ctx context.Context, t *tool, msg protoreflect.ProtoMessage) (stop func()) {
	if t.wait == nil || p.token == nil || p.session == nil {
		return func() {} // nothing to tell: no cost on the call's path
	}
	what, bound := t.wait.Describe(msg.ProtoReflect())
	return p.while(ctx, p.every, func(waited time.Duration) string { return daemonWaitMessage(t.name, what, waited, bound) })
}

// daemonWaitMessage is one progress message of a daemon's wait, e.g.
// "run_command is waiting for `make test` to finish in tab t3 (20 s of at
// most 120 s)".
func daemonWaitMessage(tool, what string, waited, bound time.Duration) string {
	s := int(waited / time.Second)
	if bound > 0 {
		return fmt.Sprintf("%s is waiting for %s (%d s of at most %s)", tool, what, s, seconds(bound))
	}
	return fmt.Sprintf("%s is waiting for %s (%d s so far)", tool, what, s)
}

// waitSentence is what a tool's description says of its wait: generated
// from the tool option, so that it cannot drift from what the gateway
// does. Empty for a tool that answers at once.
func waitSentence(rt *toolreg.Tool) string {
	w := rt.Wait
	if w == nil {
		return ""
	}
	bound := ""
	switch {
	case w.Bound != nil && w.Default > 0:
		bound = fmt.Sprintf(" (at most `%s`, %s unless set)", w.Bound.Name(), seconds(w.Default))
	case w.Bound != nil:
		bound = fmt.Sprintf(" (at most `%s`)", w.Bound.Name())
	case w.Default > 0:
		bound = fmt.Sprintf(" (at most %s)", seconds(w.Default))
	}
	return fmt.Sprintf("May wait for %s%s, with notifications/progress every %s.",
		w.Generic(), bound, seconds(progressEvery))
}

// seconds words d in whole seconds, "120 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%d s", int((d+time.Second-1)/time.Second))
}
