package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// maxTerminaldThreads bounds terminald's OS threads whatever the number of
// tabs: the Go runtime's own (GOMAXPROCS, sysmon, a few in syscalls), none
// per tab — PTY reads and program exits wait in the netpoller.
const maxTerminaldThreads = 40

// TestTwoHundredTabsFewThreads opens 200 tabs under `phantom up` and
// checks terminald's OS thread count (/proc/<pid>/task) stays bounded. It
// also logs the threads of the process that parents the tabs' programs
// (the holder, when there is one).
func TestTwoHundredTabsFewThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 200 tabs")
	}
	env, _ := up(t)
	tc, _ := humanClients(t, env)
	terminald := 0
	for _, d := range getStatus(t, env).Daemons {
		if d.Name == "terminald" {
			terminald = d.PID
		}
	}
	if terminald == 0 {
		t.Fatal("no terminald pid in phantom status")
	}
	before := taskCount(t, terminald)
	const n = 200
	for range n {
		// cat waits on its terminal for ever: each tab's reader and exit
		// watch wait all along.
		if _, err := tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Command: []string{"cat"}}); err != nil {
			t.Fatal(err)
		}
	}
	var leader int32
	eventually(t, "200 cats in the foreground", func() (bool, string) {
		r, err := tc.ListTerminals(tctx(t), &terminalv1.ListTerminalsRequest{})
		cats := 0
		for _, tm := range r.GetTerminals() {
			if tm.GetForegroundProcess().GetName() == "cat" {
				cats++
				leader = tm.GetForegroundProcess().GetPid()
			}
		}
		return err == nil && cats == n, fmt.Sprintf("%v: %d of %d", err, cats, n)
	})
	time.Sleep(time.Second) // a poll, the timers after output
	after := taskCount(t, terminald)
	parent := ppid(t, int(leader))
	t.Logf("terminald threads: %d with no tab of its own, %d with %d tabs", before, after, n)
	if parent != terminald {
		t.Logf("the tabs' parent (pid %d, the holder): %d threads", parent, taskCount(t, parent))
	}
	if after >= maxTerminaldThreads {
		t.Errorf("terminald has %d OS threads with %d tabs, want fewer than %d", after, n, maxTerminaldThreads)
	}
}

// taskCount is how many OS threads pid has.
func taskCount(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// ppid is pid's parent.
func ppid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	p, _ := strconv.Atoi(f[1])
	return p
}
