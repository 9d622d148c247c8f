package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be the launcher: run as `BINARY +sandbox
// ARGS`, it is what `phantom +sandbox ARGS` is, so the first stage can
// start /proc/self/exe as its second.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		if err := Run(os.Args[2:], os.Environ()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// requireIsolation skips unless this machine can build the walls.
func requireIsolation(t *testing.T) {
	t.Helper()
	if abi := ABI(); abi < MinABI {
		t.Skipf("kernel Landlock ABI %d < %d", abi, MinABI)
	}
	if err := ProbeWalls(os.Args[0]); err != nil {
		t.Skipf("no walls here: %v", err)
	}
}

// isolated is the command that runs script under walled rules whose one
// writable directory is work.
func isolated(t *testing.T, work, script string) *exec.Cmd {
	// work is in the test's /tmp, which the private one covers: kept.
	r := Rules{Isolate: true, WriteDirs: []string{work}, Keep: []string{work}, Devices: Devices, Tmp: filepath.Join(work, "tmp")}
	argv := r.Argv(os.Args[0], []string{"sh", "-c", script})
	return exec.Command(argv[0], argv[1:]...)
}

// TestMonitorExitStatus checks that the launcher, which stays as the
// monitor of a walled program, ends as the program ended: the same exit
// status, or death by the same signal.
func TestMonitorExitStatus(t *testing.T) {
	requireIsolation(t)
	for _, tt := range []struct {
		script string
		code   int
		sig    syscall.Signal
	}{
		{"exit 0", 0, 0},
		{"exit 7", 7, 0},
		{"kill -TERM $$", -1, syscall.SIGTERM},
		{"kill -INT $$", -1, syscall.SIGINT},
		{"kill -KILL $$", -1, syscall.SIGKILL},
	} {
		err := isolated(t, t.TempDir(), tt.script).Run()
		var ee *exec.ExitError
		var ws syscall.WaitStatus
		if errors.As(err, &ee) {
			ws = ee.Sys().(syscall.WaitStatus)
		} else if err != nil {
			t.Fatalf("%q: %v", tt.script, err)
		}
		switch {
		case tt.sig == 0 && (ws.Signaled() || ws.ExitStatus() != tt.code):
			t.Errorf("%q: launcher ended with %v, want exit status %d", tt.script, ws, tt.code)
		case tt.sig != 0 && (!ws.Signaled() || ws.Signal() != tt.sig):
			t.Errorf("%q: launcher ended with %v (exit %d), want death by %v", tt.script, ws, ws.ExitStatus(), tt.sig)
		}
	}
}

// TestMonitorForwardsSignals checks that a signal sent to the tab's
// leader (the monitor) reaches the program, and that the private /tmp is
// gone afterwards.
func TestMonitorForwardsSignals(t *testing.T) {
	requireIsolation(t)
	work := t.TempDir()
	c := isolated(t, work, `trap 'echo got-term; exit 3' TERM; echo ready >"$READY"; while :; do sleep 0.05; done`)
	ready := filepath.Join(work, "ready")
	c.Env = append(os.Environ(), "READY="+ready)
	var out strings.Builder
	c.Stdout = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
		if time.Now().After(deadline) {
			c.Process.Kill()
			c.Wait()
			t.Fatal("the walled program did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if runs, _ := filepath.Glob(filepath.Join(work, "tmp", "run-*")); len(runs) != 1 {
		t.Errorf("the private /tmp's directories while the program runs: %q, want one", runs)
	}
	c.Process.Signal(syscall.SIGTERM)
	err := c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(out.String(), "got-term") {
		t.Errorf("after SIGTERM to the monitor: %v, output %q; want the program's trap to run and exit 3", err, out.String())
	}
	if runs, _ := filepath.Glob(filepath.Join(work, "tmp", "run-*")); len(runs) != 0 {
		t.Errorf("the private /tmp is still there after the program ended: %q", runs)
	}
}

// TestOwnDirOrNothing checks what the launcher agrees to empty as a
// private /tmp.
func TestOwnDirOrNothing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		p  string
		ok bool
	}{
		{dir, true},
		{filepath.Join(dir, "missing"), true},
		{file, false},
		{link, false},
	} {
		if err := ownDirOrNothing(tt.p); (err == nil) != tt.ok {
			t.Errorf("ownDirOrNothing(%s) = %v, want ok %v", tt.p, err, tt.ok)
		}
	}
}

// TestMonitorLeavesDispositions checks that the walled program starts
// with no signal ignored: the monitor catches what it must not die or stop
// from, and an ignored signal would stay ignored in the program (a Ctrl-Z
// that stops nothing).
func TestMonitorLeavesDispositions(t *testing.T) {
	requireIsolation(t)
	out, err := isolated(t, t.TempDir(), "exec grep ^SigIgn: /proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); len(got) != 2 || strings.Trim(got[1], "0") != "" {
		t.Errorf("the walled program starts with %q, want no signal ignored", out)
	}
}
