package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestRunFigures measures, side by side in one run, what an agent spends
// on "run the test suite in tab X and report failures" (go test -v on the
// fixture project testdata/runsuite, two failing tests): tool calls and
// bytes of results (the JSON of each response, which the MCP result
// carries as its structured content) with run_command + wait_seconds,
// with run_command then polling read_output (lines 100) and
// list_terminals every 2 s until the tab is idle, and with tmux send-keys
// then polling capture-pane (-S -100) and display-message every 2 s. It
// only logs the figures: nothing in it depends on timing. Set
// PHANTOM_BENCH=1 to run it.
func TestRunFigures(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	suite, err := filepath.Abs("testdata/runsuite")
	if err != nil {
		t.Fatal(err)
	}
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	command := "cd " + suite + " && GOCACHE=" + strings.TrimSpace(string(gocache)) + " GOFLAGS=-count=1 go test -v ./..."
	env, tab := shellUp(t, "/usr/bin/bash")
	tc, _ := humanClients(t, env)
	size := func(m proto.Message) int { b, _ := protojson.Marshal(m); return len(b) }
	const poll = 2 * time.Second
	// Warm the build cache so each variant runs the same.
	if _, err := exec.Command("sh", "-c", command).CombinedOutput(); err == nil {
		t.Fatal("the fixture suite passed; it should have two failures")
	}

	// 1. run_command with wait_seconds.
	resp, err := tc.RunCommand(tctx(t), &terminalv1.RunCommandRequest{TerminalId: tab, Command: command, WaitSeconds: 120})
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Join(resp.GetResult().GetOutput(), "\n")
	if resp.GetResult().GetExitCode() != 1 || !strings.Contains(out, "--- FAIL: TestDiv") || !strings.Contains(out, "--- FAIL: TestAbs") {
		t.Fatalf("run and wait: %v", resp)
	}
	waitCalls, waitBytes := 1, size(resp)

	// 2. run_command, then poll read_output and list_terminals.
	runTabIdle(t, env, tab)
	pollCalls, pollBytes := 0, 0
	r0, err := tc.RunCommand(tctx(t), &terminalv1.RunCommandRequest{TerminalId: tab, Command: command})
	if err != nil {
		t.Fatal(err)
	}
	pollCalls, pollBytes = 1, size(r0)
	var last *terminalv1.ReadOutputResponse
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(poll)
		n := int32(100)
		rd, err := tc.ReadOutput(tctx(t), &terminalv1.ReadOutputRequest{TerminalId: tab, Lines: &n})
		if err != nil {
			t.Fatal(err)
		}
		ls, err := tc.ListTerminals(tctx(t), &terminalv1.ListTerminalsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		pollCalls += 2
		pollBytes += size(rd) + size(ls)
		last = rd
		if idle := func() bool {
			for _, tm := range ls.GetTerminals() {
				if tm.GetId() == tab {
					return tm.GetIdle()
				}
			}
			return false
		}(); idle {
			break
		}
	}
	if !strings.Contains(strings.Join(last.GetLines(), "\n"), "--- FAIL: TestAbs") {
		t.Errorf("polling read_output never saw the failures")
	}

	// 3. tmux send-keys, then poll capture-pane and the pane's command.
	sock := fmt.Sprintf("phantomfig%d", os.Getpid())
	tmux := func(args ...string) string {
		c := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
		c.Env = append(os.Environ(), "HOME="+env.Home)
		b, err := c.Output()
		if err != nil {
			t.Fatalf("tmux %v: %v", args, err)
		}
		return string(b)
	}
	tmux("new-session", "-d", "-s", "fig", "-x", "80", "-y", "24", "bash --norc --noprofile")
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	for deadline := time.Now().Add(time.Minute); strings.TrimSpace(tmux("capture-pane", "-p", "-t", "fig")) == ""; {
		if time.Now().After(deadline) {
			t.Fatal("tmux's bash shows no prompt")
		}
		time.Sleep(50 * time.Millisecond)
	}
	tmuxCalls, tmuxBytes := 1, len(tmux("send-keys", "-t", "fig", command, "Enter"))
	var capture string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(poll)
		capture = tmux("capture-pane", "-p", "-t", "fig", "-S", "-100")
		cmd := tmux("display-message", "-p", "-t", "fig", "#{pane_current_command}")
		tmuxCalls += 2
		tmuxBytes += len(capture) + len(cmd)
		if strings.TrimSpace(cmd) == "bash" {
			break
		}
	}
	if !strings.Contains(capture, "--- FAIL: TestAbs") {
		t.Errorf("polling capture-pane never saw the failures")
	}
	t.Logf("run the fixture suite and report failures:\n"+
		"  run_command wait_seconds:               %2d calls, %6d bytes\n"+
		"  run_command + polling read_output (2 s): %2d calls, %6d bytes\n"+
		"  tmux send-keys + capture-pane (2 s):     %2d calls, %6d bytes",
		waitCalls, waitBytes, pollCalls, pollBytes, tmuxCalls, tmuxBytes)
}
