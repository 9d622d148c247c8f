package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// phantomBin is the binary under test, built once by TestMain.
var phantomBin string

// TestMain builds ./cmd/phantom once for every end-to-end test here, unless
// PHANTOM_TEST_BIN names a phantom binary built beforehand: scripts/test
// does that to run these tests as an unprivileged user, who may have
// neither a Go toolchain nor a writable build cache.
func TestMain(m *testing.M) {
	if bin := os.Getenv("PHANTOM_TEST_BIN"); bin != "" {
		phantomBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "phantom-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	phantomBin = filepath.Join(dir, "phantom")
	build := exec.Command("go", "build", "-o", phantomBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build phantom:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr string
	// code is the exit status; -1 if it did not exit normally.
	code int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// phantom runs the binary in env, in its home directory, and waits for it.
func phantom(t *testing.T, env *testenv.Env, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
		t.Fatalf("phantom %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("phantom %s did not finish within a minute:\n%v", strings.Join(args, " "), r)
	}
	return r
}

// mustPhantom runs the binary and fails the test unless it succeeds.
func mustPhantom(t *testing.T, env *testenv.Env, args ...string) string {
	t.Helper()
	r := phantom(t, env, args...)
	if r.code != 0 {
		t.Fatalf("phantom %s failed:\n%v\nterminald log:\n%s", strings.Join(args, " "), r, daemonLog(env))
	}
	return r.stdout
}

// daemonLog is terminald's log, for failure messages.
func daemonLog(env *testenv.Env) string {
	b, _ := os.ReadFile(filepath.Join(env.Layout.Logs, "terminald.log"))
	return string(b)
}

// up runs `phantom up` in a fresh environment and makes sure `phantom down`
// runs when the test ends, whatever happens in between.
func up(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	env := testenv.New(t)
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	return env, mustPhantom(t, env, "up")
}

// eventually is testenv.Eventually.
var eventually = testenv.Eventually

// statusJSON is `phantom status --json`.
type statusJSON struct {
	BundleID string `json:"bundle_id"`
	Running  bool   `json:"running"`
	Daemons  []struct {
		Name   string `json:"name"`
		Addr   string `json:"addr"`
		PID    int    `json:"pid"`
		Health string `json:"health"`
		Log    string `json:"log"`
	} `json:"daemons"`
	MCPSocket string `json:"mcp_socket"`
	Runtime   string `json:"runtime_dir"`
	TabState  string `json:"tab_state_dir"`
	State     string `json:"state_dir"`
	Config    string `json:"config_dir"`
}

// getStatus is `phantom status --json`, which exits 3 (and still prints
// the JSON) when Phantom is not running.
func getStatus(t *testing.T, env *testenv.Env) statusJSON {
	t.Helper()
	r := phantom(t, env, "status", "--json")
	if r.code != 0 && r.code != exitNotRunning {
		t.Fatalf("phantom status --json failed:\n%v", r)
	}
	var s statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, r.stdout)
	}
	if s.Running != (r.code == 0) {
		t.Errorf("status --json says running=%v but exits %d (0 running, 3 not)", s.Running, r.code)
	}
	return s
}

// tabs is `phantom ls --json`, each tab as a generic object so that the
// presence of every field can be checked.
func tabs(t *testing.T, env *testenv.Env) []map[string]any {
	t.Helper()
	out := mustPhantom(t, env, "ls", "--json")
	var l struct {
		Terminals []map[string]any `json:"terminals"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("ls --json is not JSON: %v\n%s", err, out)
	}
	return l.Terminals
}

func tabByID(ts []map[string]any, id string) map[string]any {
	for _, tb := range ts {
		if tb["id"] == id {
			return tb
		}
	}
	return nil
}

// procStat is the part of /proc/<pid>/stat after the command name.
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	f, ok := procStat(pid)
	return ok && len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// sessionPIDs lists the live processes of session sid.
func sessionPIDs(t *testing.T, sid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// After ")": state ppid pgrp session ...
		if f, ok := procStat(pid); ok && len(f) > 3 && f[3] == strconv.Itoa(sid) && running(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// tabProcesses is every live process of tab id: its session (from the
// tab-state file's leader) and its foreground process.
func tabProcesses(t *testing.T, env *testenv.Env, tab map[string]any) []int {
	t.Helper()
	id, _ := tab["id"].(string)
	b, err := os.ReadFile(filepath.Join(env.Layout.TabStateDir(), id+".json"))
	if err != nil {
		t.Fatalf("tab %s has no tab-state file: %v", id, err)
	}
	var st struct {
		LeaderPID int `json:"leader_pid"`
		Session   int `json:"session"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.LeaderPID <= 0 {
		t.Fatalf("tab-state file of %s: %v %s", id, err, b)
	}
	pids := append(sessionPIDs(t, st.Session), st.LeaderPID)
	if fg, ok := tab["foreground_process"].(map[string]any); ok {
		if pid, ok := fg["pid"].(float64); ok && pid > 0 {
			pids = append(pids, int(pid))
		}
	}
	return pids
}

// runs reports whether one of pids is a live process called name.
func runs(pids []int, name string) bool {
	for _, p := range pids {
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == name && running(p) {
			return true
		}
	}
	return false
}

// killOnCleanup makes sure pids (processes of the test's tabs) do not
// outlive the test even when terminald failed to end them.
func killOnCleanup(t *testing.T, pids []int) {
	t.Cleanup(func() {
		for _, p := range stillRunning(pids) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
}

func stillRunning(pids []int) []int {
	var live []int
	for _, p := range pids {
		if running(p) {
			live = append(live, p)
		}
	}
	return live
}

// listTerminalsFields are the fields list_terminals promises per tab.
var listTerminalsFields = []string{
	"id", "title", "directory", "foreground_process", "idle", "dev_server_ports",
	"group_id", "window_id", "focused", "worktree", "agent_state",
}

// TestLifecycle drives the human's CLI from `up` to `down` against a real
// terminald in an isolated environment.
func TestLifecycle(t *testing.T) {
	env, out := up(t)

	// up starts terminald and says so.
	sock := env.Layout.DaemonSocket("terminald")
	if !strings.Contains(out, "started terminald") || !strings.Contains(out, sock) {
		t.Errorf("phantom up printed:\n%s\nwant it to report starting terminald on %s", out, sock)
	}

	// status --json: serving, with this environment's paths.
	st := getStatus(t, env)
	wantMCP := filepath.Join(env.Getenv("XDG_CACHE_HOME"), "phantom", "dev.phantom.Phantom.dev.sock")
	if !st.Running || st.BundleID != "dev.phantom.Phantom.dev" || st.MCPSocket != wantMCP ||
		st.Runtime != env.Layout.Runtime || st.TabState != env.Layout.TabStateDir() ||
		st.State != env.Layout.State || st.Config != env.Layout.Config {
		t.Errorf("status = %+v\nwant running, mcp socket %s, runtime %s", st, wantMCP, env.Layout.Runtime)
	}
	if !strings.HasPrefix(env.Layout.Runtime, env.Getenv("XDG_RUNTIME_DIR")+"/") {
		t.Errorf("runtime dir %s is not under XDG_RUNTIME_DIR", env.Layout.Runtime)
	}
	if len(st.Daemons) < 2 || st.Daemons[1].Name != "authz" || st.Daemons[1].Health != "serving" {
		t.Fatalf("status lists %+v, want terminald, then authz serving", st.Daemons)
	}
	td := st.Daemons[0]
	if td.Name != "terminald" || td.Health != "serving" || td.PID <= 0 || td.Addr != "unix://"+sock ||
		td.Log != filepath.Join(env.Layout.Logs, "terminald.log") {
		t.Errorf("terminald status = %+v", td)
	}
	daemonPID := td.PID
	if fi, err := os.Stat(env.Layout.Runtime); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("runtime dir: %v, %v; want mode 0700", fi, err)
	}

	// The plain status succeeds too and shows the paths.
	if out := mustPhantom(t, env, "status"); !strings.Contains(out, "serving") || !strings.Contains(out, wantMCP) {
		t.Errorf("phantom status printed:\n%s", out)
	}

	// up opened the first tab, a shell in the home directory.
	ts := tabs(t, env)
	if len(ts) != 1 {
		t.Fatalf("after up: %d tabs, want 1: %v", len(ts), ts)
	}
	first := ts[0]
	for _, f := range listTerminalsFields {
		if _, ok := first[f]; !ok {
			t.Errorf("ls --json tab lacks %q: %v", f, first)
		}
	}
	firstID, _ := first["id"].(string)
	if firstID == "" || first["window_id"] == "" || first["focused"] != true {
		t.Errorf("first tab = %v; want an id, a window and focus", first)
	}
	eventually(t, "the first tab's directory to be HOME", func() (bool, string) {
		tb := tabByID(tabs(t, env), firstID)
		return tb["directory"] == env.Home, fmt.Sprint(tb)
	})

	// new prints the id of a tab running the command.
	newID := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "build", "--",
		"sh", "-c", "echo hello-from-tab; sleep 1000"))
	if newID == "" || strings.ContainsAny(newID, " \n") || newID == firstID {
		t.Fatalf("phantom new printed %q, want a new tab id", newID)
	}
	var buildTab map[string]any
	eventually(t, "the new tab in ls", func() (bool, string) {
		buildTab = tabByID(tabs(t, env), newID)
		return buildTab != nil && buildTab["title"] != "", fmt.Sprint(buildTab)
	})
	if n, _ := buildTab["name"].(string); n != "build" {
		t.Errorf("new tab name = %q, want build", n)
	}

	// read shows its output.
	eventually(t, "hello-from-tab in phantom read", func() (bool, string) {
		out := mustPhantom(t, env, "read", newID, "-n", "5")
		return strings.Contains(out, "hello-from-tab"), out
	})

	// Reading a tab that does not exist fails and names it.
	r := phantom(t, env, "read", "t999")
	if r.code == 0 || !strings.Contains(r.stderr, "t999") || !strings.Contains(r.stderr, "not found") {
		t.Errorf("phantom read t999:\n%v\nwant a failure naming t999 as not found", r)
	}

	// close hangs up the tab's processes and drops it from the list.
	var buildPIDs []int
	eventually(t, "the build tab's sleep to run", func() (bool, string) {
		buildPIDs = tabProcesses(t, env, tabByID(tabs(t, env), newID))
		return runs(buildPIDs, "sleep"), fmt.Sprint("tab processes: ", buildPIDs)
	})
	killOnCleanup(t, buildPIDs)
	mustPhantom(t, env, "close", newID)
	if tb := tabByID(tabs(t, env), newID); tb != nil {
		t.Errorf("closed tab %s still listed: %v", newID, tb)
	}
	eventually(t, "the closed tab's processes to end", func() (bool, string) {
		live := stillRunning(buildPIDs)
		return len(live) == 0, fmt.Sprint("still running: ", live)
	})
	if _, err := os.Stat(filepath.Join(env.Layout.TabStateDir(), newID+".json")); !os.IsNotExist(err) {
		t.Errorf("closed tab's state file: %v, want it removed", err)
	}
	if r := phantom(t, env, "close", newID); r.code == 0 {
		t.Errorf("closing %s twice succeeded:\n%v", newID, r)
	}

	// A second tab, left open, must be hung up by down.
	keepID := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c", "echo kept; sleep 1000"))
	var keepPIDs []int
	eventually(t, "the kept tab's sleep to run", func() (bool, string) {
		keepPIDs = tabProcesses(t, env, tabByID(tabs(t, env), keepID))
		return runs(keepPIDs, "sleep"), fmt.Sprint("tab processes: ", keepPIDs)
	})
	tabPIDs := append(keepPIDs, tabProcesses(t, env, tabByID(tabs(t, env), firstID))...)
	killOnCleanup(t, tabPIDs)

	// up again is a no-op while running: same daemon, no new tab.
	out = mustPhantom(t, env, "up")
	if strings.Contains(out, "started") {
		t.Errorf("second phantom up started something:\n%s", out)
	}
	if st := getStatus(t, env); st.Daemons[0].PID != daemonPID {
		t.Errorf("second phantom up changed terminald's pid from %d to %d", daemonPID, st.Daemons[0].PID)
	}
	if ts := tabs(t, env); len(ts) != 2 {
		t.Errorf("after a second up: %d tabs, want 2 (first and kept)", len(ts))
	}

	// down stops terminald and every tab's processes.
	out = mustPhantom(t, env, "down")
	if !strings.Contains(out, "stopped terminald") {
		t.Errorf("phantom down printed:\n%s", out)
	}
	if running(daemonPID) {
		t.Errorf("terminald (pid %d) still running after down", daemonPID)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("terminald socket %s after down: %v, want it removed", sock, err)
	}
	if _, err := os.Stat(env.Layout.PIDFile("terminald")); !os.IsNotExist(err) {
		t.Errorf("pid file after down: %v, want it removed", err)
	}
	eventually(t, "every tab process to end after down", func() (bool, string) {
		live := stillRunning(tabPIDs)
		return len(live) == 0, fmt.Sprint("still running: ", live)
	})
	if ents, _ := os.ReadDir(env.Layout.TabStateDir()); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("tab-state files left after down: %v", names)
	}

	// Once down, the CLI says so plainly.
	r = phantom(t, env, "ls")
	if r.code == 0 || !strings.Contains(r.stderr, "not running") || !strings.Contains(r.stderr, "phantom up") {
		t.Errorf("phantom ls after down:\n%v\nwant a failure saying it is not running and to run phantom up", r)
	}
	if r := phantom(t, env, "status"); r.code == 0 {
		t.Errorf("phantom status after down exited 0:\n%v", r)
	}
	r = phantom(t, env, "status", "--json")
	var down statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &down); err != nil || down.Running || down.Daemons[0].Health != "down" {
		t.Errorf("phantom status --json after down:\n%v", r)
	}
	// down when already down is fine.
	mustPhantom(t, env, "down")
}

// TestUpSurvivesStaleSocket checks that a socket and pid file left by a
// crashed terminald do not stop the next `phantom up`.
func TestUpSurvivesStaleSocket(t *testing.T) {
	env := testenv.New(t)
	t.Cleanup(func() { phantom(t, env, "down") })
	if err := os.MkdirAll(env.Layout.Runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	// A stale socket: bound, then its process died without unlinking it.
	stale := exec.Command("python3", "-c",
		"import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])", env.Layout.DaemonSocket("terminald"))
	if out, err := stale.CombinedOutput(); err != nil {
		t.Skipf("cannot make a stale socket with python3: %v %s", err, out)
	}
	// A pid file naming a process that is not terminald (ourselves).
	if err := os.WriteFile(env.Layout.PIDFile("terminald"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustPhantom(t, env, "up")
	if !strings.Contains(out, "started terminald") {
		t.Errorf("phantom up printed:\n%s", out)
	}
	if st := getStatus(t, env); !st.Running || st.Daemons[0].PID == os.Getpid() {
		t.Errorf("status after up over stale files = %+v", st)
	}
}

// TestDownHangsUpStubbornTab checks that `phantom down` ends a tab whose
// program ignores the hangup: terminald must fall back to SIGKILL before it
// exits, as `phantom close` does, rather than leave the processes behind.
func TestDownHangsUpStubbornTab(t *testing.T) {
	env, _ := up(t)
	id := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c", `trap "" HUP; echo stubborn; sleep 1000`))
	var pids []int
	eventually(t, "the stubborn tab's sleep to run", func() (bool, string) {
		pids = tabProcesses(t, env, tabByID(tabs(t, env), id))
		return runs(pids, "sleep"), fmt.Sprint("tab processes: ", pids)
	})
	killOnCleanup(t, pids)
	mustPhantom(t, env, "down")
	eventually(t, "the stubborn tab's processes to end after down", func() (bool, string) {
		live := stillRunning(pids)
		return len(live) == 0, fmt.Sprint("still running: ", live)
	})
}

// TestCommandTabNotIdle checks that a tab running a program that is not a
// shell is never reported idle: idle means "sits at a prompt and can take a
// command" (run_command types into idle tabs), and `sleep` under `sh -c`
// takes none.
func TestCommandTabNotIdle(t *testing.T) {
	env, _ := up(t)
	id := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c", "echo busy; sleep 1000"))
	var pids []int
	eventually(t, "the tab's sleep to run", func() (bool, string) {
		pids = tabProcesses(t, env, tabByID(tabs(t, env), id))
		return runs(pids, "sleep"), fmt.Sprint("tab processes: ", pids)
	})
	if tb := tabByID(tabs(t, env), id); tb["idle"] != false {
		t.Errorf("tab running `sh -c 'sleep 1000'` reported idle: %v", tb)
	}
}
