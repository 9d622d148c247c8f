package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestAgentKeysNeverJoinTheHuman: an agent's keys (AgentInput) are
// refused while the human's half-typed line is there — an Enter, text
// and Ctrl-U alike — and the line is left as it was; the agent's own
// half-typed keys never keep it out, and once the human entered the line
// its keys go in again.
func TestAgentKeysNeverJoinTheHuman(t *testing.T) {
	w, id, dir := shellTab(t, "bash")
	ran := filepath.Join(dir, "ran")
	// The agent's own keys, half-typed, then finished: its own line.
	for _, k := range []string{"echo ", "agent >" + filepath.Join(dir, "agent"), "\r"} {
		if err := w.AgentInput(id, []byte(k)); err != nil {
			t.Fatalf("the agent's keys %q into its own line: %v", k, err)
		}
	}
	waitTab(t, w, id, "the agent's line to run", func(tm Terminal, _ string) bool {
		_, err := os.Stat(filepath.Join(dir, "agent"))
		return tm.Idle && err == nil
	})
	typeIn(t, w, id, "echo human >"+ran)
	for _, k := range []string{"\r", " ; echo joined", "\x15", "\x03"} {
		err := w.AgentInput(id, []byte(k))
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "the human typed keys") ||
			strings.Contains(err.Error(), "echo human") {
			t.Fatalf("agent keys %q onto the human's line: %v, want a refusal that does not quote the line", k, err)
		}
	}
	typeIn(t, w, id, "\r")
	waitTab(t, w, id, "the human's line to run as typed", func(tm Terminal, _ string) bool {
		b, _ := os.ReadFile(ran)
		return tm.Idle && string(b) == "human\n"
	})
	if err := w.AgentInput(id, []byte("true\r")); err != nil {
		t.Fatalf("the agent's keys after the human's Enter: %v", err)
	}
}

// TestHumanKeysAdoptOpenedTab: a tab opened for an agent stays the
// agent's while the agent types there, and becomes the human's (no
// opened_by, in the state a next terminald restores too) at the human's
// first key.
func TestHumanKeysAdoptOpenedTab(t *testing.T) {
	w, opener, dir := shellTab(t, "bash")
	tm, err := w.Create(CreateSpec{Directory: dir, OpenedBy: opener})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		input func(string, []byte) error
		want  string
	}{
		{"the agent's keys", w.AgentInput, opener},
		{"the human's keys", w.Input, ""},
	} {
		if err := c.input(tm.ID, []byte("x")); err != nil {
			t.Fatal(err)
		}
		got, err := w.Get(tm.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.OpenedBy != c.want {
			t.Errorf("after %s, tab %s is opened by %q, want %q", c.name, tm.ID, got.OpenedBy, c.want)
		}
	}
	if st := string(w.snapshotState()); strings.Contains(st, `"opened_by"`) {
		t.Errorf("the saved state still says the adopted tab was opened for an agent: %s", st)
	}
}
