package testenv

import (
	"testing"
	"time"
)

// WaitTimeout bounds Eventually. It is generous because CI machines are
// slow and busy; a test that passes only waits as long as it must.
const WaitTimeout = 20 * time.Second

// Eventually polls cond until it holds, failing the test after WaitTimeout
// with what and the state cond last described.
func Eventually(t testing.TB, what string, cond func() (ok bool, state string)) {
	t.Helper()
	EventuallyWithin(t, WaitTimeout, what, cond)
}

// EventuallyWithin is Eventually for something that may take up to d, such
// as a step that moves megabytes.
func EventuallyWithin(t testing.TB, d time.Duration, what string, cond func() (ok bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s; last seen:\n%s", d, what, last)
}
