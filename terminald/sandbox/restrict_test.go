package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// helperEnv carries the rules to TestExecHelper, which runs in a child
// test binary and never returns there.
const helperEnv = "PHANTOM_SANDBOX_TEST_RULES"

// TestExecHelper is not a test: run with helperEnv set, it becomes
// `sh -c $PHANTOM_SANDBOX_TEST_SCRIPT` under the rules.
func TestExecHelper(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("helper for TestExec")
	}
	var r Rules
	if err := json.Unmarshal([]byte(spec), &r); err != nil {
		t.Fatal(err)
	}
	err := Exec(r, []string{"sh", "-c", os.Getenv("PHANTOM_SANDBOX_TEST_SCRIPT")}, os.Environ())
	t.Fatalf("Exec returned: %v", err)
}

// TestExec runs a shell under real Landlock rules and checks what it can
// do: write in its directory but nowhere else, read anywhere, signal its
// own children but not this test process, and it has no_new_privs.
func TestExec(t *testing.T) {
	if abi := ABI(); abi < MinABI {
		t.Skipf("kernel Landlock ABI %d < %d", abi, MinABI)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, outside := filepath.Join(root, "work"), filepath.Join(root, "outside")
	for _, d := range []string{work, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "readme"), []byte("readable\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rules, _ := json.Marshal(Rules{WriteDirs: []string{work}, Devices: []string{"/dev/null"}})
	script := `
		try() { if eval "$2" 2>/dev/null; then echo "$1=ok"; else echo "$1=denied"; fi; }
		try write-in 'echo x > "$WORK/f" && mv "$WORK/f" "$WORK/g"'
		try write-out 'echo x > "$OUTSIDE/f"'
		try remove-out 'rm "$OUTSIDE/readme"'
		try read-out 'cat "$OUTSIDE/readme" >/dev/null'
		try devnull 'echo x > /dev/null'
		try signal-own 'sleep 10 & kill $!'
		try signal-parent 'kill -0 $PARENT'
		try nnp 'grep -q "NoNewPrivs:[[:space:]]*1" /proc/self/status'
	`
	c := exec.Command(os.Args[0], "-test.run=^TestExecHelper$")
	c.Env = append(os.Environ(), helperEnv+"="+string(rules), "PHANTOM_SANDBOX_TEST_SCRIPT="+script,
		"WORK="+work, "OUTSIDE="+outside, "PARENT="+strconv.Itoa(os.Getpid()))
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed shell: %v\n%s", err, out)
	}
	want := map[string]string{
		"write-in": "ok", "write-out": "denied", "remove-out": "denied", "read-out": "ok",
		"devnull": "ok", "signal-own": "ok", "signal-parent": "denied", "nnp": "ok",
	}
	got := map[string]string{}
	for _, l := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (output:\n%s)", k, got[k], v, out)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "readme")); err != nil {
		t.Errorf("the file outside is gone: %v", err)
	}
}

// TestExecRefusesBadProgram checks that a missing program is an error
// before anything is restricted.
func TestExecRefusesBadProgram(t *testing.T) {
	if abi := ABI(); abi < MinABI {
		t.Skipf("kernel Landlock ABI %d < %d", abi, MinABI)
	}
	err := Exec(Rules{}, []string{"/nonexistent/program"}, nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/program") {
		t.Errorf("Exec of a missing program = %v, want an error naming it", err)
	}
}

// TestLandlockConfig checks the configuration for every ABI from MinABI:
// no network rights, both scopes, path-socket connects from ConnectABI.
func TestLandlockConfig(t *testing.T) {
	for abi := MinABI; abi <= 14; abi++ {
		cfg := landlockConfig(abi)
		if cfg.HandledAccessNet != 0 {
			t.Errorf("ABI %d: network rights handled: %v", abi, cfg)
		}
		if cfg.Scoped != landlock.ScopedSet(ll.ScopeSignal|ll.ScopeAbstractUnixSocket) {
			t.Errorf("ABI %d: scopes %v, want signals and abstract sockets", abi, cfg.Scoped)
		}
		if got := cfg.HandledAccessFS&ll.AccessFSResolveUnix != 0; got != (abi >= ConnectABI) {
			t.Errorf("ABI %d: path-socket connects handled = %v", abi, got)
		}
		if cfg.HandledAccessFS&ll.AccessFSRefer == 0 || cfg.HandledAccessFS&ll.AccessFSIoctlDev == 0 {
			t.Errorf("ABI %d: FS rights %v lack refer or ioctl", abi, cfg.HandledAccessFS)
		}
	}
}

// TestDescribe checks the isolation report for each kind of kernel and
// machine: every wall that does not hold is named.
func TestDescribe(t *testing.T) {
	noNS := errors.New("user namespaces are off")
	for _, tt := range []struct {
		abi     int
		walls   error
		ok      bool
		warning bool
		wantIn  []string
	}{
		{0, nil, false, true, []string{"no Landlock", "NOT sandboxed"}},
		{3, nil, false, true, []string{"ABI 3 cannot scope"}},
		{5, noNS, false, true, []string{"NOT sandboxed"}},
		{6, noNS, true, true, []string{"ABI 6", "NOT for terminal devices or path sockets", "nested sandboxes (bwrap) fail", "user namespaces are off"}},
		{7, nil, true, false, []string{"Landlock ABI 7, a private mount namespace and a connect gate", "terminal devices", "path sockets: only the MCP socket, the tab's own"}},
		{9, nil, true, false, []string{"ABI 9", "abstract sockets"}},
	} {
		got, ok := Describe(tt.abi, tt.walls)
		for _, w := range tt.wantIn {
			if !strings.Contains(got, w) {
				t.Errorf("Describe(%d, %v) = %q, want it to contain %q", tt.abi, tt.walls, got, w)
			}
		}
		if ok != tt.ok || strings.Contains(got, "\n") || strings.HasPrefix(got, "warning: ") != tt.warning {
			t.Errorf("Describe(%d, %v) = %q, %v; want sandboxed %v, a warning %v, one line", tt.abi, tt.walls, got, ok, tt.ok, tt.warning)
		}
	}
}
