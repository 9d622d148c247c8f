package main

// An agent running in a tab that is not sandboxed — the human typed
// `claude` at a shell prompt — is seen as such (issue 22, invariant 8):
// phantom ls, list_terminals and the status line say so, and the same
// program in a sandboxed tab is not flagged.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
)

func TestUnsandboxedAgentIsShown(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	t.Cleanup(func() { phantom(t, env, "down") })
	mustPhantom(t, env, "up")

	// A program whose process name is a configured agent's (claude): a
	// copy of sleep, so nothing depends on the real CLI.
	bin := filepath.Join(t.TempDir(), "claude")
	sleep, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Skip("no /bin/sleep to stand in for an agent:", err)
	}
	if err := os.WriteFile(bin, sleep, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := strings.TrimSpace(mustPhantom(t, env, "new", "--", bin, "60"))
	boxed := strings.TrimSpace(mustPhantom(t, env, "new", "--sandbox", "--", bin, "60"))
	shell := strings.TrimSpace(mustPhantom(t, env, "new"))

	eventually(t, "the agent in the plain tab "+plain+" to be flagged", func() (bool, string) {
		tb := tabByID(tabs(t, env), plain)
		return tb["unsandboxed_agent"] == true, mustPhantom(t, env, "ls", "--json")
	})
	ts := tabs(t, env)
	if tb := tabByID(ts, boxed); tb["unsandboxed_agent"] == true {
		t.Errorf("the sandboxed tab %s running the same agent is flagged unsandboxed: %v", boxed, tb)
	}
	if tb := tabByID(ts, shell); tb["unsandboxed_agent"] == true {
		t.Errorf("a plain shell tab %s with no agent is flagged: %v", shell, tb)
	}
	ls := mustPhantom(t, env, "ls")
	for _, line := range strings.Split(ls, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		id := strings.TrimSuffix(f[0], "*")
		if flagged := strings.Contains(line, "UNSANDBOXED"); flagged != (id == plain) {
			t.Errorf("phantom ls line for %s says UNSANDBOXED=%v, want %v:\n%s", id, flagged, id == plain, ls)
		}
	}
}
