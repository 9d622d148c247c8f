package main

// Sandboxed tabs end to end: real tabs of a real instance run a probe
// script that tries to write Phantom's files and the shell startup files,
// to signal, read and ptrace the daemons, and to reach an abstract socket
// made outside; a sandboxed tab, an agent tab and a plain tab run the same
// probe, so the test proves the sandbox, not a broken tab.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// instanceOutsideTemp makes an isolated environment whose directories,
// and a copy of the phantom binary to start it with, live outside every
// temporary directory. A sandboxed tab may write the temporary directories
// (minus what Phantom protects in them), so an instance inside one — as
// testenv's and the test binary normally are, in /tmp — would make its
// home writable and keep new files out of /tmp itself (a writable root
// holding a protected path is replaced by its entries). The base is /run
// for root, $XDG_RUNTIME_DIR otherwise; where neither can be used it falls
// back to /var/tmp and says so with inTemp. The base is traversable by
// every user (TestDumpable runs the instance as nobody).
func instanceOutsideTemp(t *testing.T) (env *testenv.Env, bin string, inTemp bool) {
	t.Helper()
	var candidates []string
	if os.Geteuid() == 0 {
		candidates = append(candidates, "/run")
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		candidates = append(candidates, x)
	}
	var base string
	for _, c := range append(candidates, "/var/tmp") {
		if b, err := os.MkdirTemp(c, "phsb"); err == nil {
			base, inTemp = b, c == "/var/tmp"
			break
		}
	}
	if base == "" {
		t.Skip("no directory outside /tmp to run an instance in")
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(base, "phantom")
	if err := copyFile(phantomBin, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tmpdir, hadTmpdir := os.LookupEnv("TMPDIR")
	t.Setenv("TMPDIR", base) // where testenv.New makes its root
	env = testenv.New(t)
	// The instance itself keeps the test's temporary directory.
	env.Vars = slices.DeleteFunc(env.Vars, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	if hadTmpdir {
		env.Vars = append(env.Vars, "TMPDIR="+tmpdir)
	}
	return env, bin, inTemp
}

// copyFile copies src to a new file dst with mode perm.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sandboxProbe tries each attack and prints TAG:NAME=ok or TAG:NAME=denied,
// then TAG:done. Arguments: tag, config dir, state dir, runtime dir, MCP
// socket dir, terminald pid, gateway pid, abstract socket name, python3.
const sandboxProbe = `tag=$1 cfg=$2 state=$3 run=$4 mcp=$5 tpid=$6 gpid=$7 abs=$8 py=$9
try() { if (eval "$2") >/dev/null 2>&1; then echo "$tag:$1=ok"; else echo "$tag:$1=denied"; fi; }
try cfg 'echo x > "$cfg/probe-$tag"'
try state 'echo x > "$state/probe-$tag"'
try runtime 'echo x > "$run/probe-$tag"'
try mcpdir 'echo x > "$mcp/probe-$tag"'
try bashrc 'echo "# $tag" >> "$HOME/.bashrc"'
try zshrc 'echo x > "$HOME/.zshrc-$tag" && mv "$HOME/.zshrc-$tag" "$HOME/.zshrc"'
try own 'echo x > "probe-$tag" && mv "probe-$tag" "probe2-$tag" && rm "probe2-$tag"'
try tmp 'echo x > "/tmp/probe-$tag-$$" && rm "/tmp/probe-$tag-$$"'
try agentdir 'echo x > "$HOME/.probe/f-$tag"'
try kill-terminald 'kill -0 $tpid'
try kill-gateway 'kill -0 $gpid'
try environ-terminald 'cat /proc/$tpid/environ'
try ptrace-gateway '"$py" -c "$PTRACE" $gpid'
try abstract '"$py" -c "import socket,sys; socket.socket(socket.AF_UNIX).connect(chr(0)+sys.argv[1])" "$abs"'
echo "$tag:done"
exec sleep 1000`

// ptraceSeizePy attaches to the pid in argv[1] with PTRACE_SEIZE (which does
// not stop it; the attachment ends when python exits) and exits 0 on
// success.
const ptraceSeizePy = `import ctypes,sys
libc=ctypes.CDLL(None,use_errno=True)
libc.ptrace.argtypes=[ctypes.c_long,ctypes.c_long,ctypes.c_void_p,ctypes.c_void_p]
sys.exit(0 if libc.ptrace(0x4206,int(sys.argv[1]),None,None)==0 else 1)`

// probeOutcome matches one outcome of sandboxProbe.
var probeOutcome = regexp.MustCompile(`(\w+):([\w-]+)=(ok|denied)`)

// probeTab waits until the tab running sandboxProbe as tag is done and
// returns its outcomes.
func probeTab(t *testing.T, env *testenv.Env, id, tag string) map[string]string {
	t.Helper()
	return probeOutcomes(t, tag, func() string { return mustPhantom(t, env, "read", id, "-n", "200") })
}

// probeOutcomes polls read, the text of a tab running a probe as tag,
// until the probe is done, and returns its outcomes by name.
func probeOutcomes(t *testing.T, tag string, read func() string) map[string]string {
	t.Helper()
	var out string
	eventually(t, tag+" probe to finish", func() (bool, string) {
		out = read()
		return strings.Contains(out, tag+":done"), out
	})
	got := map[string]string{}
	for _, m := range probeOutcome.FindAllStringSubmatch(out, -1) {
		if m[1] == tag {
			got[m[2]] = m[3]
		}
	}
	return got
}

// worldPython3 returns a python3 every user can run (not a pyenv shim
// under /root), or skips.
func worldPython3(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 != 0 {
			return p
		}
	}
	t.Skip("no world-executable python3 (scripts/setup installs it)")
	return ""
}

// TestSandboxTab runs the probe in a tab opened with --sandbox, in an
// agent's tab and in a plain tab of one instance, and checks what each
// could do, what changed on disk, how each is listed, and that a
// sandboxed shell keeps its shell integration through the launcher.
func TestSandboxTab(t *testing.T) {
	py := worldPython3(t)
	env, bin, homeInTemp := instanceOutsideTemp(t)
	work := filepath.Join(env.Home, "work")
	for _, d := range []string{work, env.Layout.Config, filepath.Join(env.Home, ".probe")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	bashrc := filepath.Join(env.Home, ".bashrc")
	const original = "# the human's bashrc\n"
	if err := os.WriteFile(bashrc, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	// An agent whose program is the probe, reading its arguments from a
	// file written once the daemons' pids are known; env keeps its base
	// name from matching the sh of the --sandbox tab.
	argsFile := filepath.Join(env.Home, "probe-args")
	cfg, _ := json.Marshal(map[string]any{
		"shell":   "/bin/bash",
		"agents":  map[string][]string{"probe": {"env", "sh", "-c", `set -- $(cat "$0"); ` + sandboxProbe, argsFile}},
		"sandbox": map[string]any{"agent_paths": map[string][]string{"probe": {"~/.probe/"}}},
	})
	if err := os.WriteFile(filepath.Join(env.Layout.Config, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	env.Vars = append(env.Vars, "PTRACE="+ptraceSeizePy)

	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	// Started from the copy, so that the launcher (terminald's own
	// binary) lives outside /tmp as well.
	up := exec.Command(bin, "up")
	up.Env, up.Dir = env.Vars, env.Home
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("phantom up: %v\n%s", err, out)
	}

	st := getStatus(t, env)
	pids := map[string]int{}
	for _, d := range st.Daemons {
		pids[d.Name] = d.PID
	}
	if pids["terminald"] <= 0 || pids["gateway"] <= 0 {
		t.Fatalf("status gives no terminald or gateway pid: %+v", st.Daemons)
	}
	var iso struct {
		Isolation string `json:"isolation"`
	}
	json.Unmarshal([]byte(mustPhantom(t, env, "status", "--json")), &iso)
	abi := sandbox.ABI()
	if want, _ := sandbox.Describe(abi, sandbox.ProbeWalls(bin)); iso.Isolation != want {
		t.Errorf("status isolation = %q, want %q", iso.Isolation, want)
	}
	if !strings.Contains(mustPhantom(t, env, "status"), "isolation   "+iso.Isolation) {
		t.Errorf("phantom status does not show the isolation line %q", iso.Isolation)
	}

	// An abstract socket made outside every tab.
	name := fmt.Sprintf("phantom-sandbox-test-%d", os.Getpid())
	ln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })

	args := func(tag string) []string {
		return []string{tag, env.Layout.Config, env.Layout.State, env.Layout.Runtime, filepath.Dir(env.Layout.MCPSocket),
			strconv.Itoa(pids["terminald"]), strconv.Itoa(pids["gateway"]), name, py}
	}
	// The probe as a command line after phantom new's flags; sh -c takes
	// the word after the script as $0.
	command := func(tag string) []string {
		return append([]string{"--", "sh", "-c", sandboxProbe, "sh"}, args(tag)...)
	}
	if err := os.WriteFile(argsFile, []byte(strings.Join(args("probe"), " ")), 0o600); err != nil {
		t.Fatal(err)
	}
	newTab := func(flags ...string) string {
		id := strings.TrimSpace(mustPhantom(t, env, append([]string{"new", "--dir", work}, flags...)...))
		t.Cleanup(func() { phantom(t, env, "close", id) })
		return id
	}

	if abi < sandbox.MinABI {
		// An older kernel: the tab runs, says it is not sandboxed, and is
		// listed so.
		id := newTab(append([]string{"--sandbox"}, command("old")...)...)
		probeTab(t, env, id, "old")
		out := mustPhantom(t, env, "read", id, "-n", "200")
		if !strings.Contains(out, "phantom: warning: ") || !strings.Contains(out, "NOT sandboxed") {
			t.Errorf("tab on Landlock ABI %d shows:\n%s\nwant the warning", abi, out)
		}
		if tb := tabByID(tabs(t, env), id); tb["sandboxed"] != false {
			t.Errorf("tab on Landlock ABI %d listed as sandboxed: %v", abi, tb)
		}
		t.Skipf("kernel Landlock ABI %d < %d: checked the warning only", abi, sandbox.MinABI)
	}

	// What every sandboxed tab must be refused, and allowed.
	denied := map[string]string{
		"cfg": "denied", "state": "denied", "runtime": "denied", "mcpdir": "denied", "bashrc": "denied", "zshrc": "denied",
		"own": "ok", "tmp": "ok", "agentdir": "denied",
		"kill-terminald": "denied", "kill-gateway": "denied", "environ-terminald": "denied", "ptrace-gateway": "denied",
		"abstract": "denied",
	}
	if homeInTemp {
		// The home is inside /var/tmp, a writable temporary directory.
		delete(denied, "agentdir")
	}
	if os.Geteuid() == 0 {
		// Landlock keeps a sandboxed process from attaching to, and (for
		// a non-root user) from reading /proc/<pid>/environ of, processes
		// outside its domain; root still reads environ on this kernel.
		// TestDumpable checks the non-root case.
		delete(denied, "environ-terminald")
	}
	check := func(tag string, got, want map[string]string) {
		t.Helper()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s tab: %s %s, want %s (all: %v)", tag, k, outcomeOrMissing(got[k]), v, got)
			}
		}
	}
	unchanged := func(tag string) {
		t.Helper()
		for _, dir := range []string{env.Layout.Config, env.Layout.State, env.Layout.Runtime, filepath.Dir(env.Layout.MCPSocket)} {
			if _, err := os.Lstat(filepath.Join(dir, "probe-"+tag)); !os.IsNotExist(err) {
				t.Errorf("%s tab created %s/probe-%s (%v)", tag, dir, tag, err)
			}
		}
		if b, _ := os.ReadFile(bashrc); string(b) != original {
			t.Errorf("after the %s tab, ~/.bashrc holds %q, want %q", tag, b, original)
		}
		if _, err := os.Lstat(filepath.Join(env.Home, ".zshrc")); !os.IsNotExist(err) {
			t.Errorf("after the %s tab, ~/.zshrc exists (%v)", tag, err)
		}
	}

	// --sandbox.
	sbx := newTab(append([]string{"--sandbox"}, command("sbx")...)...)
	check("sandboxed", probeTab(t, env, sbx, "sbx"), denied)
	unchanged("sbx")

	// --agent: sandboxed, and its own directory is writable.
	agent := newTab("--agent", "probe")
	agentWant := map[string]string{}
	for k, v := range denied {
		agentWant[k] = v
	}
	agentWant["agentdir"] = "ok"
	if homeInTemp {
		delete(agentWant, "agentdir")
	}
	check("agent", probeTab(t, env, agent, "probe"), agentWant)
	unchanged("probe")

	// A plain tab: the same probe succeeds everywhere.
	plain := newTab(command("plain")...)
	allOK := map[string]string{}
	for k := range denied {
		allOK[k] = "ok"
	}
	if os.Geteuid() != 0 {
		// Without CAP_SYS_PTRACE the daemons' non-dumpable flag stops
		// these from any tab (TestDumpable proves it as another user).
		allOK["environ-terminald"], allOK["ptrace-gateway"] = "denied", "denied"
	}
	check("plain", probeTab(t, env, plain, "plain"), allOK)
	if b, _ := os.ReadFile(bashrc); string(b) != original+"# plain\n" {
		t.Errorf("the plain tab could not append to ~/.bashrc: %q", b)
	}

	ts := tabs(t, env)
	for id, want := range map[string]bool{sbx: true, agent: true, plain: false} {
		if tb := tabByID(ts, id); tb["sandboxed"] != want {
			t.Errorf("tab %s listed with sandboxed=%v, want %v: %v", id, tb["sandboxed"], want, tb)
		}
	}

	// A sandboxed shell keeps its integration: bash started through the
	// launcher reports its prompt (OSC 133) long before the fallback to
	// foreground detection would make the tab idle.
	start := time.Now()
	shellTab := newTab("--sandbox")
	eventually(t, "the sandboxed shell to sit at a prompt", func() (bool, string) {
		tb := tabByID(tabs(t, env), shellTab)
		return tb["idle"] == true, fmt.Sprint(tb)
	})
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the sandboxed shell took %s to report a prompt; its integration did not come through", took)
	}
	if tb := tabByID(tabs(t, env), shellTab); tb["sandboxed"] != true {
		t.Errorf("sandboxed shell tab listed as %v", tb)
	}
}

// TestSandboxRefusesProtectedDir checks that a sandboxed tab cannot be
// opened in a directory it would not be allowed to write, with a message
// that says why.
func TestSandboxRefusesProtectedDir(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Skipf("kernel Landlock ABI %d < %d", abi, sandbox.MinABI)
	}
	env, _ := up(t)
	r := phantom(t, env, "new", "--sandbox", "--dir", env.Layout.Runtime)
	if r.code == 0 || !strings.Contains(r.stderr, "must not write") {
		t.Errorf("phantom new --sandbox --dir %s:\n%v\nwant a refusal saying the tab must not write there", env.Layout.Runtime, r)
	}
}

func outcomeOrMissing(s string) string {
	if s == "" {
		return "missing"
	}
	return s
}
