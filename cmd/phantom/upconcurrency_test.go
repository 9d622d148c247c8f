package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// phantomSlow runs the binary in env like phantom, for commands that may
// wait their turn behind many others: it fails the test only if the
// command is stuck for many minutes.
func phantomSlow(t *testing.T, env *testenv.Env, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, phantomBin, args...)
	c.Env = env.Vars
	c.Dir = env.Home
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		r.code, r.stderr = -1, r.stderr+err.Error()
	}
	return r
}

// instanceDaemons lists the live processes that are daemons of env's
// instance, by command line, whatever the pid files say.
func instanceDaemons(t *testing.T, env *testenv.Env) map[string][]int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !running(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if len(argv) != 5 || argv[1] != "daemon" || argv[3] != "--listen" || argv[4] != env.Layout.DaemonAddr(argv[2]) {
			continue
		}
		out[argv[2]] = append(out[argv[2]], pid)
	}
	return out
}

// killInstance kills every daemon of env's instance, for clean-up after a
// failed test.
func killInstance(t *testing.T, env *testenv.Env) {
	for _, pids := range instanceDaemons(t, env) {
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// consistent checks that env's instance is either fully up — one live
// process per daemon, named by its pid file, and status healthy — or fully
// down — no daemon process, no pid file — and says which.
func consistent(t *testing.T, env *testenv.Env) (up bool) {
	t.Helper()
	live := instanceDaemons(t, env)
	if len(live) == 0 {
		for _, name := range paths.Daemons {
			if b, err := os.ReadFile(env.Layout.PIDFile(name)); err == nil {
				t.Errorf("no daemon runs, yet the pid file of %s is left: %q", name, b)
			}
		}
		if r := phantom(t, env, "status"); r.code == 0 {
			t.Errorf("no daemon runs, yet phantom status says healthy:\n%v", r)
		}
		return false
	}
	for _, name := range paths.Daemons {
		pids := live[name]
		if len(pids) != 1 {
			t.Errorf("%s: %d live processes %v, want exactly one (all daemons: %v)", name, len(pids), pids, live)
			continue
		}
		rec, err := daemon.ReadPIDFile(env.Layout.PIDFile(name))
		if err != nil || rec.PID != pids[0] || !rec.Alive() {
			t.Errorf("%s runs as pid %d, but its pid file says %+v (%v)", name, pids[0], rec, err)
		}
	}
	st := getStatus(t, env)
	if !st.Running {
		t.Errorf("every daemon runs, but status is not healthy: %+v", st)
	}
	for _, d := range st.Daemons {
		if pids := live[d.Name]; len(pids) != 1 || d.PID != pids[0] || d.Health != "serving" {
			t.Errorf("status says %s is pid %d, %s; live processes %v", d.Name, d.PID, d.Health, pids)
		}
	}
	return true
}

// TestUpDownConcurrent runs 20 `phantom up` and `phantom down` at once on
// one instance: they take turns, so the instance ends either fully up or
// fully down, never half of each, and each run either did its job or
// said it gave up waiting for its turn.
func TestUpDownConcurrent(t *testing.T) {
	env := testenv.New(t)
	t.Cleanup(func() {
		phantomSlow(t, env, "down")
		killInstance(t, env)
	})
	const runs = 20
	results := make([]result, runs)
	var wg sync.WaitGroup
	for i := range runs {
		cmd := "up"
		if i%3 == 1 {
			cmd = "down"
		}
		wg.Go(func() { results[i] = phantomSlow(t, env, cmd) })
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 && !strings.Contains(r.stderr, "gave up after") {
			t.Errorf("run %d failed other than by waiting too long for its turn:\n%v", i, r)
		}
		if strings.Contains(r.stderr, "is not running") || strings.Contains(r.stderr, "in use by a running process") {
			t.Errorf("run %d met another run's daemons:\n%v", i, r)
		}
	}
	wasUp := consistent(t, env)
	t.Logf("after %d concurrent runs the instance is up: %v", runs, wasUp)

	// Whatever state it is in, up and down still work from it.
	out := mustPhantom(t, env, "up")
	if wasUp != strings.Contains(out, "already running") {
		t.Errorf("phantom up on an instance that was up=%v printed:\n%s", wasUp, out)
	}
	if !consistent(t, env) {
		t.Fatal("phantom up left the instance down")
	}
	mustPhantom(t, env, "down")
	if consistent(t, env) {
		t.Fatal("phantom down left the instance up")
	}
}

// TestUpWaitsForLockHolder: while another process holds the instance
// lock, up waits and says whom for, and goes on once it is free.
func TestUpWaitsForLockHolder(t *testing.T) {
	env := testenv.New(t)
	t.Cleanup(func() { phantomSlow(t, env, "down"); killInstance(t, env) })
	if err := os.MkdirAll(env.Layout.Runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	// flock(1) holds the lock until the file "release" appears.
	release := env.Layout.Runtime + "/release"
	holder := exec.Command("flock", lockPath(env.Layout), "sh", "-c",
		`echo "pid $$: the test's holder" >"$0"; while [ ! -e "$1" ]; do sleep 0.05; done`, lockPath(env.Layout), release)
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	defer holder.Process.Kill()
	eventually(t, "the holder to write the lock file", func() (bool, string) {
		b, _ := os.ReadFile(lockPath(env.Layout))
		return strings.Contains(string(b), "the test's holder"), string(b)
	})
	c := exec.Command(phantomBin, "up")
	c.Env, c.Dir = env.Vars, env.Home
	var stderr lockedBuffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "up to say whom it waits for", func() (bool, string) {
		return strings.Contains(stderr.String(), "waiting for another up or down (pid ") &&
			strings.Contains(stderr.String(), "the test's holder"), stderr.String()
	})
	if live := instanceDaemons(t, env); len(live) != 0 {
		t.Errorf("up started daemons while another process held the lock: %v", live)
	}
	os.WriteFile(release, nil, 0o600)
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("up after the lock was released: %v\n%s", err, stderr.String())
	}
	if !consistent(t, env) {
		t.Error("up did not bring the instance up")
	}
}

// lockedBuffer is a bytes.Buffer safe for a process's output and a test's
// reads at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *lockedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *lockedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDownLeavesForeignProcessAlone: a pid file naming a process that is
// not the daemon (here, a sleep of the test's) makes down remove the file
// and leave the process alone; up cleans it as stale and starts the real
// daemon.
func TestDownLeavesForeignProcessAlone(t *testing.T) {
	env, _ := up(t)
	mustPhantom(t, env, "down")
	sleeper := exec.Command("sleep", "1000")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleeper.Process.Kill()
	pidFile := env.Layout.PIDFile("authz")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustPhantom(t, env, "down")
	if !running(sleeper.Process.Pid) {
		t.Fatalf("down killed pid %d, which a pid file named but is not authz", sleeper.Process.Pid)
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale pid file is still there after down: %v", err)
	}
	// A stale one again, and a tab-state file of a tab long gone: up
	// cleans both and says so.
	os.WriteFile(pidFile, []byte(strconv.Itoa(sleeper.Process.Pid)+"\n"), 0o600)
	os.MkdirAll(env.Layout.TabStateDir(), 0o700)
	gone := env.Layout.TabStateDir() + "/t99.json"
	os.WriteFile(gone, []byte(`{"version":1,"tab_id":"t99","leader_pid":`+fmt.Sprint(sleeper.Process.Pid)+`,"leader_start":1,"session":1}`), 0o600)
	out := mustPhantom(t, env, "up")
	if !strings.Contains(out, "removed what a crash left behind") || !strings.Contains(out, "authz.pid") || !strings.Contains(out, "t99.json") {
		t.Errorf("up over stale files printed:\n%s", out)
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale tab-state file is still there after up: %v", err)
	}
	if !consistent(t, env) || !running(sleeper.Process.Pid) {
		t.Errorf("after up: sleeper running %v", running(sleeper.Process.Pid))
	}
	if pid, _ := daemonPID(env.Layout, "authz"); pid == sleeper.Process.Pid || slices.Contains(instanceDaemons(t, env)["authz"], sleeper.Process.Pid) {
		t.Errorf("authz is the sleeper")
	}
}
