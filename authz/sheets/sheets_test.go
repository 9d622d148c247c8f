package sheets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/errdefs"
)

func waitLen(t *testing.T, q *Queue, n int) []Sheet {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if l := q.List(); len(l) == n {
			return l
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("queue never held %d sheets: %v", n, q.List())
	return nil
}

func TestCallerGoneRemovesSheet(t *testing.T) {
	q := New(Options{Clock: NewFakeClock(time.Unix(0, 0))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := q.Ask(ctx, Request{ConnectionID: "c", Need: policy.Need{Tool: "read_output"}})
		done <- err
	}()
	waitLen(t, q, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Ask = %v, want canceled", err)
	}
	waitLen(t, q, 0)
}

func TestCloseRefusesWaitersAndLaterCalls(t *testing.T) {
	q := New(Options{Clock: NewFakeClock(time.Unix(0, 0)), Timeout: time.Second})
	done := make(chan error, 1)
	go func() { _, err := q.Ask(context.Background(), Request{TabID: "t1"}); done <- err }()
	waitLen(t, q, 1)
	q.Close()
	var r *Refusal
	if err := <-done; !errors.As(err, &r) || !errdefs.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("waiter got %v, want a refusal", err)
	}
	if _, err := q.Ask(context.Background(), Request{TabID: "t2"}); !errors.As(err, &r) || !strings.Contains(r.Reason, "shutting down") {
		t.Errorf("Ask after Close = %v", err)
	}
}

func TestDenyRefusesSameTabQueue(t *testing.T) {
	q := New(Options{Clock: NewFakeClock(time.Unix(0, 0))})
	errs := make(chan error, 3)
	for _, tab := range []string{"t1", "t1", "t2"} {
		go func() { _, err := q.Ask(context.Background(), Request{TabID: tab}); errs <- err }()
	}
	l := waitLen(t, q, 3)
	var first Sheet
	for _, s := range l {
		if s.TabID == "t1" {
			first = s
			break
		}
	}
	if err := q.Deny(first.ID); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err == nil {
			t.Error("a t1 call was allowed")
		}
	}
	if l := waitLen(t, q, 1); l[0].TabID != "t2" {
		t.Errorf("left waiting: %v, want t2's sheet only", l)
	}
	q.Close()
	<-errs
}
