package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// lastCommandTimes is tab's last command's times, as read_output's
// last_command has them for the human.
func lastCommandTimes(t *testing.T, env *testenv.Env, tab string) (started, finished string, ms int64) {
	t.Helper()
	tc, _ := humanClients(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitTimeout)
	defer cancel()
	resp, err := tc.ReadOutput(ctx, &terminalv1.ReadOutputRequest{TerminalId: tab, LastCommand: true})
	if err != nil {
		t.Fatalf("read_output last_command of tab %s: %v", tab, err)
	}
	c := resp.GetLastCommand()
	return c.GetStartedAt(), c.GetFinishedAt(), c.GetDurationMs()
}

// TestCommandTimesSurviveRestarts: a command's start, end and duration
// stay what they were across `phantom upgrade` and a terminald killed
// with -9 and started again — not the restart's time, "in 0 ms" — in
// read_output's last_command and `phantom read --last-command`.
func TestCommandTimesSurviveRestarts(t *testing.T) {
	env, tab := shellUp(t, "/usr/bin/bash")
	mustPhantom(t, env, "run", tab, "--wait=30", "--", "sleep 1.2; echo timed")
	started, finished, ms := lastCommandTimes(t, env, tab)
	if started == "" || finished == "" || ms < 1000 {
		t.Fatalf("before any restart: started %q, finished %q, %d ms; want both times and about 1200 ms", started, finished, ms)
	}
	// The state the holder keeps is saved within a second of a change;
	// and the restarts below must not land in the same millisecond.
	time.Sleep(2 * time.Second)
	check := func(after string) {
		t.Helper()
		runTabIdle(t, env, tab)
		s, f, d := lastCommandTimes(t, env, tab)
		if s != started || f != finished || d != ms {
			t.Errorf("after %s: started %q, finished %q, %d ms; want %q, %q, %d ms as before", after, s, f, d, started, finished, ms)
		}
		r := phantom(t, env, "read", tab, "--last-command")
		if r.code != 0 || !strings.Contains(r.stderr, "finished at "+finished) || !strings.Contains(r.stderr, fmt.Sprintf("in %d ms", ms)) {
			t.Errorf("after %s, phantom read --last-command:\n%v\nwant it finished at %s, in %d ms", after, r, finished, ms)
		}
	}

	mustPhantom(t, env, "upgrade")
	check("phantom upgrade")

	pid, err := daemonPID(env.Layout, "terminald")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "terminald to die", func() (bool, string) { return !running(pid), "" })
	mustPhantom(t, env, "up")
	check("terminald was killed and started again")
}
