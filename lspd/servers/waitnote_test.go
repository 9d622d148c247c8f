package servers

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitTimedOutNote: a query whose wait ran out before every file
// settled (here the server's progress never ends) is an answer, not an
// error, and says that the wait timed out.
func TestWaitTimedOutNote(t *testing.T) {
	r, dir := fakeRegistry(t, Options{}, nil)
	write(t, dir, map[string]string{"a.fake": "begin\nerror: x\npublish\n"})
	rep, err := r.Diagnostics(context.Background(), Query{Path: filepath.Join(dir, "a.fake"), Wait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(rep.Notes, "\n"); rep.Settled || !strings.Contains(notes, "the wait timed out") || !strings.Contains(notes, "300 ms") {
		t.Errorf("settled %v, notes %q; want unsettled and a note that the wait timed out", rep.Settled, notes)
	}
}
