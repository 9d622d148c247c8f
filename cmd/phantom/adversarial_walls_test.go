package main

// The walls of sandboxed tabs (issue 22, invariants 3 and 7): terminal
// devices, path sockets, nested sandboxes and a private /tmp, each tried
// from a real sandboxed tab of a real instance — and from a plain tab of
// the same instance, where the same attack must work, so that a refusal
// proves the wall and not a broken probe.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/testenv"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// humanSocket is a Unix socket the test, playing the human, listens on;
// it counts the connections it accepted.
type humanSocket struct {
	name, path string
	accepted   atomic.Int32
}

// listenAsHuman listens on path (creating its directory) until the test
// ends. The socket is world-connectable: its file mode is not the wall.
func listenAsHuman(t *testing.T, name, path string) *humanSocket {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatalf("listen on %s (%s): %v", path, name, err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	h := &humanSocket{name: name, path: path}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return h
}

// connectPy connects to the Unix socket in argv[1] and exits 0 if it
// could.
const connectPy = `import socket,sys
s=socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
print("connected")`

// ownSocketPy listens on argv[1], connects to it and exits 0 when the
// connection was accepted: a socket the tab makes itself.
const ownSocketPy = `import socket,sys,os
p=sys.argv[1]
if os.path.exists(p): os.unlink(p)
l=socket.socket(socket.AF_UNIX); l.bind(p); l.listen(1)
c=socket.socket(socket.AF_UNIX); c.settimeout(5); c.connect(p)
a,_=l.accept(); c.send(b"hi"); assert a.recv(2)==b"hi"
print("own socket works")`

// requireWalls skips unless this machine can build the walls at all; the
// tab's first line and phantom status say so in words there (checked by
// TestSandboxTab and below).
func requireWalls(t *testing.T) {
	t.Helper()
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Skipf("Landlock ABI %d: no sandboxed tabs on this kernel", abi)
	}
	if err := sandbox.ProbeWalls(phantomBin); err != nil {
		t.Skipf("no walls on this machine: %v", err)
	}
}

// TestAdversarialWalls: from a sandboxed tab, no other terminal and no
// socket of the human's is reachable, while its own terminal, new PTYs,
// the MCP socket, its own sockets and a nested bubblewrap work; from a
// plain tab the same attacks succeed.
func TestAdversarialWalls(t *testing.T) {
	t.Parallel()
	requireWalls(t)
	py := worldPython3(t)
	env := adversaryUp(t)

	// The human's sockets exist before the sandboxed tab starts: what the
	// launcher masks is what it finds.
	socks := []*humanSocket{
		listenAsHuman(t, "a session bus in $XDG_RUNTIME_DIR", filepath.Join(envVar(env, "XDG_RUNTIME_DIR"), "bus")),
		listenAsHuman(t, "an editor socket in Phantom's runtime directory", filepath.Join(env.Layout.Runtime, "editor-walls.sock")),
		listenAsHuman(t, "an ssh-agent in /tmp", filepath.Join(mkdirTempIn(t, "/tmp", "ssh-"), "agent.1")),
		listenAsHuman(t, "an ssh ControlMaster in ~/.ssh", filepath.Join(env.Home, ".ssh", "cm-walls.sock")),
		listenAsHuman(t, "a tmux server in /tmp/tmux-UID", filepath.Join(mkdirTempIn(t, "/tmp", "tmux-"), "default")),
		listenAsHuman(t, "docker's socket in ~/.docker/run", filepath.Join(env.Home, ".docker", "run", "docker.sock")),
	}
	if os.Geteuid() == 0 {
		socks = append(socks, listenAsHuman(t, "a system socket in /run", filepath.Join(mkdirTempIn(t, "/run", "walls-"), "docker.sock")))
	}
	daemons := map[string]string{
		"authz.sock":     env.Layout.DaemonSocket("authz"),
		"terminald.sock": env.Layout.DaemonSocket("terminald"),
	}

	// The human's other tab, and the terminal a `phantom attach` runs on.
	victim := newAttacker(t, env, "victim")
	ptmx, humanTTY, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer humanTTY.Close()
	ttys := map[string]string{"the human's other tab": victim.pty, "the human's attach terminal": humanTTY.Name()}
	for name, p := range ttys {
		if !strings.HasPrefix(p, "/dev/pts/") {
			t.Fatalf("%s has no PTY name: %q", name, p)
		}
	}

	sbx := newAttacker(t, env, "sandboxed", "--sandbox")
	plain := newAttacker(t, env, "plain")
	if first := mustPhantom(t, env, "read", sbx.tab); !strings.Contains(first, "phantom: sandbox: Landlock ABI") || !strings.Contains(first, "private mount namespace") {
		t.Errorf("the sandboxed tab does not say at its start what holds:\n%s", first)
	}

	t.Run("devices", func(t *testing.T) {
		for name, p := range ttys {
			for _, tc := range []struct{ tab, cmd string }{
				{"write", "printf 'WALLS-%s' >" + p},
				{"read", "timeout 2 head -c 1 <" + p},
				{"read and write", "exec 3<>" + p},
			} {
				mark := fmt.Sprintf("WALLS-%s-%d", tc.tab, os.Getpid())
				cmd := strings.ReplaceAll(tc.cmd, "WALLS-%s", mark)
				if r := sbx.run(cmd); r.code == 0 {
					t.Errorf("the sandboxed tab opened %s (%s) to %s: %v", name, p, tc.tab, r)
				}
				if name == "the human's other tab" && strings.Contains(mustPhantom(t, env, "read", victim.tab), mark) {
					t.Errorf("what the sandboxed tab wrote to %s reached it", p)
				}
			}
			// The control: a plain tab can.
			mark := fmt.Sprintf("PLAIN-%d", os.Getpid())
			if r := plain.run("printf '" + mark + "' >" + p); r.code != 0 {
				t.Errorf("a plain tab cannot write %s (%s) either, so the probe proves nothing: %v", name, p, r)
			}
		}
		eventually(t, "the plain tab's write to reach the victim", func() (bool, string) {
			out := mustPhantom(t, env, "read", victim.tab)
			return strings.Contains(out, fmt.Sprintf("PLAIN-%d", os.Getpid())), out
		})
		if r := sbx.run("script -qc 'echo new-pty-works' /dev/null"); r.code != 0 || !strings.Contains(r.out, "new-pty-works") {
			t.Errorf("script (a new PTY) fails in the sandboxed tab: %v", r)
		}
		if r := sbx.run("echo to-my-tty >/dev/tty && stty size </dev/tty"); r.code != 0 {
			t.Errorf("the sandboxed tab cannot use its own terminal as /dev/tty: %v", r)
		}
		if r := sbx.run("ls /dev/pts/"); strings.Contains(r.out, strings.TrimPrefix(victim.pty, "/dev/pts/")+"\n") && strings.TrimPrefix(victim.pty, "/dev/pts/") != "0" {
			t.Logf("the sandboxed tab's /dev/pts lists %s (its own devpts may number alike): %s", victim.pty, r.out)
		}
	})

	t.Run("sockets", func(t *testing.T) {
		for _, h := range socks {
			if r := sbx.run(shellCmd(py, "-c", connectPy, h.path)); r.code == 0 {
				t.Errorf("the sandboxed tab connected to %s (%s): %v", h.name, h.path, r)
			}
			if n := h.accepted.Load(); n != 0 {
				t.Errorf("%s (%s) accepted %d connections from the sandboxed tab", h.name, h.path, n)
			}
			if r := plain.run(shellCmd(py, "-c", connectPy, h.path)); r.code != 0 {
				t.Errorf("a plain tab cannot connect to %s (%s) either, so the probe proves nothing: %v", h.name, h.path, r)
			}
			eventually(t, h.name+" to accept the plain tab", func() (bool, string) {
				return h.accepted.Load() == 1, fmt.Sprintf("accepted %d", h.accepted.Load())
			})
		}
		for name, p := range daemons {
			if r := sbx.run(shellCmd(py, "-c", connectPy, p)); r.code == 0 {
				t.Errorf("the sandboxed tab connected to Phantom's %s (%s): %v", name, p, r)
			}
			if r := plain.run(shellCmd(py, "-c", connectPy, p)); r.code != 0 {
				t.Errorf("a plain tab cannot connect to %s (%s) either: %v", name, p, r)
			}
		}
		if r := sbx.run(shellCmd(py, "-c", connectPy, env.Layout.MCPSocket)); r.code != 0 {
			t.Errorf("the sandboxed tab cannot connect to the MCP socket %s: %v", env.Layout.MCPSocket, r)
		}
		if r := sbx.run(shellCmd(py, "-c", ownSocketPy, "/tmp/own-walls.sock")); r.code != 0 {
			t.Errorf("a socket the sandboxed tab makes in its own /tmp does not work: %v", r)
		}
		if r := sbx.run(shellCmd("umount", "/dev/pts")); r.code == 0 {
			t.Errorf("the sandboxed tab unmounted its private devpts: %v", r)
		}
	})

	t.Run("nested bwrap", func(t *testing.T) {
		bwrap := requireBwrap(t)
		if os.Geteuid() == 0 {
			// Mapping uid 0 into a nested namespace takes CAP_SETFCAP,
			// which a root tab does not keep (see terminald/sandbox).
			t.Skip("a root tab cannot start a nested sandbox that maps root; TestAdversarialWallsAsNobody runs this as nobody")
		}
		if r := sbx.run(shellCmd(bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-user", "true")); r.code != 0 {
			t.Errorf("a nested bwrap (what Codex runs) fails in the sandboxed tab: %v", r)
		}
		// Inside the nested sandbox, asking for / writable changes
		// nothing: the tab's read-only mounts are locked.
		target := filepath.Join(env.Layout.Config, "walls-nested")
		if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
			t.Fatal(err)
		}
		write := shellCmd(bwrap, "--bind", "/", "/", "--dev", "/dev", "--unshare-user", "sh", "-c", "echo pwned >"+sq(target))
		if r := sbx.run(write); r.code == 0 {
			t.Errorf("a nested bwrap in the sandboxed tab wrote %s: %v", target, r)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("%s exists after the sandboxed tab's nested bwrap tried to write it", target)
		}
		if r := sbx.run(shellCmd(bwrap, "--bind", "/", "/", "--dev", "/dev", "--unshare-user", "sh", "-c", `echo mine >"$J.nested"`)); r.code != 0 {
			t.Errorf("a nested bwrap cannot write the tab's own directory: %v", r)
		}
		if r := plain.run(write); r.code != 0 {
			t.Errorf("a nested bwrap in a plain tab cannot write %s either, so the probe proves nothing: %v", target, r)
		}
		os.Remove(target)
	})
}

// requireBwrap returns bubblewrap's path, or skips.
func requireBwrap(t *testing.T) string {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed (scripts/setup installs bubblewrap)")
	}
	return bwrap
}

// wallsProbe tries, from a tab, what the walls must stop and what must
// keep working, printing TAG:NAME=ok or TAG:NAME=denied, then TAG:done.
// Arguments: tag, python3, bwrap, a file in Phantom's config directory, the
// human's terminal, the human's socket.
const wallsProbe = `tag=$1 py=$2 bwrap=$3 target=$4 tty=$5 sock=$6
try() { if (eval "$2") >/dev/null 2>&1; then echo "$tag:$1=ok"; else echo "$tag:$1=denied"; fi; }
try nested '"$bwrap" --ro-bind / / --dev /dev --unshare-user true'
try nested-proc '"$bwrap" --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-user true'
try nested-write '"$bwrap" --bind / / --dev /dev --unshare-user sh -c "echo pwned >$target"'
try human-tty 'printf x >"$tty"'
try human-socket '"$py" -c "$CONNECT" "$sock"'
try new-pty 'script -qc true /dev/null'
try tmp 'echo x >/tmp/walls-$$'
echo "$tag:done"
exec sleep 1000`

// TestAdversarialWallsAsNobody runs an instance as an unprivileged user
// (nobody), as the humans the threat model protects run it: their tabs
// get the walls from unprivileged user namespaces, and a nested bubblewrap
// works in a sandboxed tab, still unable to write outside it. A plain tab
// of the same instance reaches the human's terminal and socket.
func TestAdversarialWallsAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run an instance as nobody; TestAdversarialWalls covers an unprivileged user's own instance")
	}
	requireWalls(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	bwrap := requireBwrap(t)
	py := worldPython3(t)
	env, bin, _ := instanceOutsideTemp(t)
	work := filepath.Join(env.Home, "work")
	for _, d := range []string{work, env.Layout.Config} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sock := listenAsHuman(t, "the human's socket in ~/.ssh", filepath.Join(env.Home, ".ssh", "cm.sock"))
	if err := chownTree(filepath.Dir(bin), nobody); err != nil {
		t.Fatal(err)
	}
	ptmx, humanTTY, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer humanTTY.Close()
	if err := os.Chown(humanTTY.Name(), nobody, -1); err != nil {
		t.Fatal(err)
	}
	env.Vars = slices.DeleteFunc(env.Vars, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	env.Vars = append(env.Vars, "PATH=/usr/local/bin:/usr/bin:/bin", "CONNECT="+connectPy)
	run := func(args ...string) string {
		t.Helper()
		c := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
		c.Env, c.Dir = env.Vars, env.Home
		out, err := c.Output()
		if err != nil {
			t.Fatalf("phantom %s as nobody: %v\n%s%s", strings.Join(args, " "), err, out, stderrOf(err))
		}
		return string(out)
	}
	t.Cleanup(func() { run("down") })
	run("up")

	target := filepath.Join(env.Layout.Config, "walls-nested")
	probe := func(tag string, flags ...string) map[string]string {
		args := append([]string{"new", "--dir", work}, flags...)
		args = append(args, "--", "sh", "-c", wallsProbe, "walls", tag, py, bwrap, target, humanTTY.Name(), sock.path)
		id := strings.TrimSpace(run(args...))
		return probeOutcomes(t, tag, func() string { return run("read", id, "-n", "100") })
	}
	got := probe("sbx", "--sandbox")
	for name, want := range map[string]string{"nested": "ok", "nested-proc": "ok", "nested-write": "denied", "human-tty": "denied", "human-socket": "denied", "new-pty": "ok", "tmp": "ok"} {
		if got[name] != want {
			t.Errorf("sandboxed tab of nobody's instance: %s %s, want %s (all: %v)", name, outcomeOrMissing(got[name]), want, got)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("%s exists after the sandboxed tab's nested bwrap tried to write it", target)
	}
	if n := sock.accepted.Load(); n != 0 {
		t.Errorf("the human's socket accepted %d connections from the sandboxed tab", n)
	}
	got = probe("plain")
	for _, name := range []string{"human-tty", "human-socket", "nested-write"} {
		if got[name] != "ok" {
			t.Errorf("plain tab of nobody's instance: %s %s, want ok, so the probe proves nothing (all: %v)", name, outcomeOrMissing(got[name]), got)
		}
	}
}

// TestAdversarialWallsNoRuntimeDir: with XDG_RUNTIME_DIR unset, Phantom's
// runtime directory lives under /tmp, and a sandboxed tab can still create
// its files in /tmp (its own) without seeing Phantom's.
func TestAdversarialWallsNoRuntimeDir(t *testing.T) {
	requireWalls(t) // not parallel: testenvWithout sets TMPDIR
	env := testenvWithout(t, "XDG_RUNTIME_DIR")
	if !strings.HasPrefix(env.Layout.Runtime, "/tmp/") {
		t.Fatalf("runtime directory %s is not under /tmp without XDG_RUNTIME_DIR", env.Layout.Runtime)
	}
	sbx := newAttacker(t, env, "sandboxed", "--sandbox")
	if r := sbx.run(`f=$(mktemp) && echo x >"$f" && echo y >/tmp/walls-$$ && ls -a /tmp`); r.code != 0 {
		t.Errorf("the sandboxed tab cannot create files in /tmp: %v", r)
	} else if strings.Contains(r.out, filepath.Base(env.Layout.Runtime)) {
		t.Errorf("the sandboxed tab's /tmp shows Phantom's runtime directory %s:\n%s", env.Layout.Runtime, r.out)
	}
	if r := sbx.run(shellCmd("ls", env.Layout.DaemonSocket("authz"))); r.code == 0 {
		t.Errorf("the sandboxed tab sees %s: %v", env.Layout.DaemonSocket("authz"), r)
	}
}

// testenvWithout is adversaryUp's instance with the variables keys unset
// (and its layout recomputed); its TMPDIR is a directory of its own under
// /tmp, so that its runtime directory does not collide with another
// instance's.
func testenvWithout(t *testing.T, keys ...string) *testenv.Env {
	t.Helper()
	tmp := mkdirTempIn(t, "/tmp", "phw")
	t.Setenv("TMPDIR", tmp) // where testenv.New makes its root
	env := testenv.New(t)
	env.Vars = slices.DeleteFunc(env.Vars, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(keys, k) || k == "TMPDIR"
	})
	env.Vars = append(env.Vars, "TMPDIR="+tmp)
	l, err := paths.FromEnv(func(k string) string { return envVar(env, k) })
	if err != nil {
		t.Fatal(err)
	}
	env.Layout = l
	t.Cleanup(func() { phantom(t, env, "down") })
	mustPhantom(t, env, "up")
	return env
}

// envVar is the value of key in env's variables, "" if unset.
func envVar(env *testenv.Env, key string) string {
	for _, kv := range env.Vars {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// mkdirTempIn makes a directory in dir, removed when the test ends.
func mkdirTempIn(t *testing.T, dir, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp(dir, prefix+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestWallsJobControl: behind the walls a sandboxed shell still does job
// control through `phantom attach`: Ctrl-C interrupts the foreground job,
// Ctrl-Z stops it and fg resumes it, a window-size change reaches it, an
// exit status is the program's, and closing the tab ends it.
func TestWallsJobControl(t *testing.T) {
	requireWalls(t)
	in := startPhantom(t)
	work := filepath.Join(in.env.Home, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := in.run("new", "--sandbox", "--dir", work)
	if err != nil {
		t.Fatalf("phantom new --sandbox: %v\n%s", err, out)
	}
	id := strings.TrimSpace(string(out))
	c := in.attach(t, 100, 30, nil, id)
	c.waitText("private mount namespace")
	c.send("echo ready-$((2*3))\r")
	c.waitText("ready-6")

	// Each key goes in once the job runs: typed earlier, bash's line
	// editor would take it.
	startJob := func(tag string) {
		c.send("echo " + tag + "-$((1+1)); sleep 100\r")
		c.waitText(tag + "-2")
		time.Sleep(300 * time.Millisecond)
	}
	startJob("first")
	c.send("\x03")
	c.send("echo int=$?\r")
	c.waitText("int=130")

	startJob("second")
	c.send("\x1a")
	c.waitText("Stopped")
	c.send("fg\r")
	time.Sleep(500 * time.Millisecond) // bash resumes the job and waits
	c.send("\x03")
	c.send("echo fg=$?\r")
	c.waitText("fg=130")

	c.resize(120, 40)
	c.send("stty size\r")
	c.waitText("39 120") // the status line takes a row

	c.send("sh -c 'exit 7'; echo sub=$?\r")
	c.waitText("sub=7")

	// The shell and its parent (the launcher, the tab's leader, when
	// sandboxed) end when the tab is closed.
	c.send("echo pids=$$,$PPID,\r")
	var pids []int
	c.waitFor("the shell's pids", func(text string) bool {
		i := strings.LastIndex(text, "pids=") // the output, not the command line
		if i < 0 {
			return false
		}
		rest := text[i+len("pids="):]
		pids = nil
		for _, f := range strings.Split(rest, ",")[:2] {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				pids = append(pids, n)
			}
		}
		return len(pids) == 2
	})
	if out, err := in.run("close", id); err != nil {
		t.Fatalf("phantom close %s: %v\n%s", id, err, out)
	}
	eventually(t, "the tab's shell and leader to end after close", func() (bool, string) {
		return !running(pids[0]) && !running(pids[1]), fmt.Sprintf("pids %v", pids)
	})
}
