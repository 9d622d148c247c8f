package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// runBinIn runs the phantom binary bin in env with extra variables set,
// in directory dir, and waits for it.
func runBinIn(t *testing.T, bin string, env *testenv.Env, dir string, set []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Env, c.Dir = append(append([]string(nil), env.Vars...), set...), dir
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
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return r
}

// copyBinary copies phantomBin to dir/phantom, written to a temporary
// file and renamed into place as a build or package upgrade does.
func copyBinary(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(phantomBin)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "phantom")
	if err := os.WriteFile(dst+".tmp", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".tmp", dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestUpTabFindsPhantomInItsDirectory starts Phantom as the README says
// (up, with phantom not on PATH) from a project directory: the first tab
// opens there, and `phantom` in it is the running binary.
func TestUpTabFindsPhantomInItsDirectory(t *testing.T) {
	env := testenv.New(t)
	project := filepath.Join(env.Home, "src", "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	noPhantom := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	t.Cleanup(func() { phantom(t, env, "down") })
	if r := runBinIn(t, phantomBin, env, project, noPhantom, "up"); r.code != 0 {
		t.Fatalf("phantom up:\n%v\nterminald log:\n%s", r, daemonLog(env))
	}
	ts := tabs(t, env)
	if len(ts) != 1 || ts[0]["directory"] != project {
		t.Fatalf("tabs after up from %s = %v, want one tab there", project, ts)
	}
	mustPhantom(t, env, "read", "t1", "--wait-for", "idle")
	r := phantom(t, env, "run", "t1", "--wait=60", "--", "command -v phantom; pwd")
	if r.code != 0 {
		t.Fatalf("phantom run in the first tab:\n%v", r)
	}
	if got := strings.Fields(r.stdout); len(got) != 2 || got[0] != phantomBin || got[1] != project {
		t.Errorf("`command -v phantom; pwd` in the first tab printed %q, want %s and %s", r.stdout, phantomBin, project)
	}
}

// TestVersion checks that `phantom --version` and `phantom version` say
// the same: the build and the binary's path.
func TestVersion(t *testing.T) {
	env := testenv.New(t)
	flag, cmd := mustPhantom(t, env, "--version"), mustPhantom(t, env, "version")
	if flag != cmd {
		t.Errorf("--version printed\n%s\nbut version printed\n%s", flag, cmd)
	}
	for _, want := range []string{"phantom ", ", rev ", "binary " + phantomBin + " (built "} {
		if !strings.Contains(flag, want) {
			t.Errorf("--version printed\n%s\nwant it to contain %q", flag, want)
		}
	}
}

// TestStatusWarnsReplacedBinary runs Phantom from a copy of the binary,
// then replaces that copy on disk as a rebuild does: status shows each
// daemon's binary and revision, and both status and a second up say the
// daemons run an older phantom and how to replace them.
func TestStatusWarnsReplacedBinary(t *testing.T) {
	env := testenv.New(t)
	bin := copyBinary(t, t.TempDir())
	t.Cleanup(func() { runBinIn(t, bin, env, env.Home, nil, "down") })
	if r := runBinIn(t, bin, env, env.Home, nil, "up"); r.code != 0 {
		t.Fatalf("phantom up:\n%v", r)
	}

	st := runBinIn(t, bin, env, env.Home, nil, "status", "--json")
	if st.code != 0 || st.stderr != "" {
		t.Fatalf("status of a fresh instance:\n%v", st)
	}
	for _, want := range []string{`"binary": "` + bin + `"`, `"revision": "`} {
		if strings.Count(st.stdout, want) != 6 {
			t.Errorf("status --json: want %q once for each of the 6 daemons:\n%s", want, st.stdout)
		}
	}
	if strings.Contains(st.stdout, "binary_replaced") || strings.Contains(st.stdout, "differs") {
		t.Errorf("status --json before any rebuild reports a difference:\n%s", st.stdout)
	}
	again := runBinIn(t, bin, env, env.Home, nil, "up")
	if again.code != 0 || !strings.Contains(again.stdout, "Phantom is already running (since ") || again.stderr != "" {
		t.Errorf("a second up on the same binary:\n%v\nwant it to say Phantom is already running, and no warning", again)
	}

	copyBinary(t, filepath.Dir(bin)) // the rebuild
	st = runBinIn(t, bin, env, env.Home, nil, "status")
	want := "terminald, authz, gateway, gitd, lspd, editord run an older phantom (rev "
	if st.code != 0 || !strings.Contains(st.stderr, want) || !strings.Contains(st.stderr, "binary "+bin+" replaced since start") ||
		!strings.Contains(st.stderr, "`phantom down && phantom up`") || !strings.Contains(st.stdout, bin+" (replaced since start)") {
		t.Errorf("status after the binary was replaced:\n%v\nwant each daemon's binary marked replaced and one warning %q…", st, want)
	}
	again = runBinIn(t, bin, env, env.Home, nil, "up")
	if again.code != 0 || !strings.Contains(again.stdout, "already running") || !strings.Contains(again.stderr, want) {
		t.Errorf("up after the binary was replaced:\n%v\nwant it to say Phantom is already running, and warn %q…", again, want)
	}

	// After `phantom upgrade`, only terminald runs the new binary.
	if r := runBinIn(t, bin, env, env.Home, nil, "upgrade"); r.code != 0 {
		t.Fatalf("phantom upgrade:\n%v", r)
	}
	st = runBinIn(t, bin, env, env.Home, nil, "status")
	if !strings.Contains(st.stderr, "authz, gateway, gitd, lspd, editord run an older phantom") || strings.Contains(st.stderr, "terminald") {
		t.Errorf("status after phantom upgrade:\n%v\nwant every daemon but terminald named as running an older phantom", st)
	}
}

// TestUpInvalidConfigStartsNothing checks that up with an invalid
// config.json says what is wrong in one line and starts no daemon: no
// socket, no pid file, no log. (TestUpRefusesInvalidConfig checks the
// wording of the cause.)
func TestUpInvalidConfigStartsNothing(t *testing.T) {
	env := testenv.New(t)
	if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.Layout.Config, "config.json"), []byte(`{"scrollback_lines": "many"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := phantom(t, env, "up")
	if r.code == 0 {
		phantom(t, env, "down")
		t.Fatalf("up started with an invalid config.json:\n%v", r)
	}
	if !strings.Contains(r.stderr, "config.json") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || r.stdout != "" {
		t.Errorf("up with an invalid config.json: want one line naming the file:\n%v", r)
	}
	for _, dir := range []string{env.Layout.Runtime, env.Layout.Logs} {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			t.Errorf("up with an invalid config.json left %d entries in %s", len(entries), dir)
		}
	}
}

// TestUpFailureQuotesThisRun makes terminald fail to start (a foreign
// process listens on its socket): up says why with what terminald logged
// in this run only, not an earlier run's lines, and stops the holder it
// started beside it.
func TestUpFailureQuotesThisRun(t *testing.T) {
	env := testenv.New(t)
	t.Cleanup(func() { phantom(t, env, "down") })
	for _, dir := range []string{env.Layout.Runtime, env.Layout.Logs} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := "a line an earlier terminald logged"
	if err := os.WriteFile(filepath.Join(env.Layout.Logs, "terminald.log"), []byte(old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	squatter := exec.Command("python3", "-c",
		"import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); print('ready', flush=True); sys.stdin.read()",
		env.Layout.DaemonSocket("terminald"))
	stdin, err := squatter.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	ready, err := squatter.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := squatter.Start(); err != nil {
		t.Skipf("no python3 to listen on terminald's socket: %v", err)
	}
	t.Cleanup(func() { stdin.Close(); squatter.Wait() })
	if _, err := ready.Read(make([]byte, 5)); err != nil {
		t.Fatalf("the listener on terminald's socket did not start: %v", err)
	}

	r := phantom(t, env, "up")
	if r.code == 0 {
		t.Fatalf("up succeeded with terminald's socket taken:\n%v", r)
	}
	if !strings.Contains(r.stderr, "terminald exited during start-up") || !strings.Contains(r.stderr, "in use") || strings.Contains(r.stderr, old) {
		t.Errorf("up with terminald's socket taken:\n%v\nwant terminald's own words from this run, without %q", r, old)
	}
	if !strings.Contains(r.stdout, "stopped holder") {
		t.Errorf("up did not stop the holder it started:\n%v", r)
	}
	if st := getStatus(t, env); st.Running {
		t.Errorf("status after a failed up says Phantom runs: %+v", st)
	}
}
