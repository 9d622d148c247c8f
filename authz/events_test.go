package authz

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/audit"
	"github.com/phantom-dev/phantom/internal/errdefs"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
)

// TestRecordEvent: each event a daemon reports is one line naming the
// agent, the tool, the tab and what happened; an agent's loop of the same
// call is one line a minute; anything but the known events is refused.
func TestRecordEvent(t *testing.T) {
	f, a := newAuditFixture(t)
	ctx := context.Background()
	caller := &authzv1.Caller{Client: "claude", ConnectionId: "proc-42-7", TabId: "t2", Pid: 42}
	report := func(ev authzv1.ReportedEvent, target, detail string) error {
		_, err := f.svc.RecordEvent(ctx, &authzv1.RecordEventRequest{Caller: caller, Event: ev, Target: target, Detail: detail})
		return err
	}
	for _, c := range []struct {
		ev          authzv1.ReportedEvent
		event, tool string
	}{
		{authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_MOVED, audit.FocusMoved, "focus_terminal"},
		{authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NOTICE, audit.FocusNotice, "focus_terminal"},
		{authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NO_CLIENT, audit.FocusNoClient, "focus_terminal"},
		{authzv1.ReportedEvent_REPORTED_EVENT_RUN_NOT_TYPED, audit.RunNotTyped, "run_command"},
		{authzv1.ReportedEvent_REPORTED_EVENT_KEYS_NOT_TYPED, audit.KeysNotTyped, "send_keys"},
	} {
		if err := report(c.ev, "t3", "what happened"); err != nil {
			t.Fatalf("%v: %v", c.ev, err)
		}
		es := a.events()
		got := es[len(es)-1]
		want := audit.Entry{Event: c.event, Client: "claude", Connection: "proc-42-7", Tab: "t2", PID: 42,
			Tool: c.tool, Target: "t3", Subject: "what happened"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: entry %+v, want %+v", c.ev, got, want)
		}
	}

	// The same notice in a loop: left out for a minute, then counted.
	n := len(a.events())
	for range 100 {
		if err := report(authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NOTICE, "t3", "again"); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(a.events()); got != n {
		t.Errorf("100 repeats within the minute wrote %d lines, want none", got-n)
	}
	f.clock.Advance(time.Minute)
	if err := report(authzv1.ReportedEvent_REPORTED_EVENT_FOCUS_NOTICE, "t3", "again"); err != nil {
		t.Fatal(err)
	}
	if es := a.events(); len(es) != n+1 || es[n].Repeated != 100 {
		t.Errorf("after the minute: %d new lines, last %+v; want one counting 100 left out", len(es)-n, es[len(es)-1])
	}

	if err := report(authzv1.ReportedEvent_REPORTED_EVENT_UNSPECIFIED, "t3", ""); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("an unspecified event: %v, want an invalid-argument refusal", err)
	}
	if err := report(authzv1.ReportedEvent(99), "t3", ""); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("an unknown event: %v, want an invalid-argument refusal", err)
	}
}
