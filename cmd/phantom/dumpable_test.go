package main

// The daemons and the human's clients are not dumpable: proved from a tab
// of an instance run as an unprivileged user, because root (CAP_SYS_PTRACE)
// reads and traces any process whatever its dumpable flag.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// TestDumpableSubcommands checks which command lines protectProcess
// makes non-dumpable.
func TestDumpableSubcommands(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{[]string{"daemon", "terminald"}, true},
		{[]string{"daemon", "gateway", "--listen", "unix:///x"}, true},
		{[]string{"attach"}, true},
		{[]string{"attach", "t3"}, true},
		{[]string{"sheet"}, true},
		{[]string{"sheet", "answer", "s1", "--deny"}, true},
		{[]string{"grants", "revoke", "g1"}, true},
		{[]string{"--help", "attach"}, true},
		{[]string{"up"}, false},
		{[]string{"ls"}, false},
		{[]string{"+mcp-server", "--client=x"}, false},
		{[]string{"+sandbox", "--", "attach"}, false},
		{nil, false},
	} {
		if got := undumpable[subcommand(tt.args)]; got != tt.want {
			t.Errorf("%q: undumpable %v, want %v", tt.args, got, tt.want)
		}
	}
}

// nobody is the unprivileged user the instance of TestDumpable runs as.
const nobody = 65534

// TestDumpable runs an instance as nobody and, from a plain (unsandboxed)
// tab of it, tries to read the environment of and ptrace every daemon and
// a running `phantom sheet`, all of the same uid; a sleep of that uid is
// the control that shows the attempts can succeed.
func TestDumpable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run an instance as nobody (uid 65534): a same-uid check is what matters, and root bypasses it with CAP_SYS_PTRACE")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	py := worldPython3(t)
	env, bin, _ := instanceOutsideTemp(t)
	if err := chownTree(filepath.Dir(bin), nobody); err != nil {
		t.Fatal(err)
	}
	env.Vars = slices.DeleteFunc(env.Vars, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	env.Vars = append(env.Vars, "PATH=/usr/local/bin:/usr/bin:/bin", "PTRACE="+ptraceSeizePy)
	asNobody := func(args ...string) *exec.Cmd {
		c := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
		c.Env, c.Dir = env.Vars, env.Home
		return c
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := asNobody(args...).Output()
		if err != nil {
			t.Fatalf("phantom %s as nobody: %v\n%s%s", strings.Join(args, " "), err, out, stderrOf(err))
		}
		return string(out)
	}
	t.Cleanup(func() {
		if out, err := asNobody("down").CombinedOutput(); err != nil {
			t.Errorf("cleanup: phantom down as nobody: %v\n%s", err, out)
		}
	})
	run("up")

	var st statusJSON
	if err := json.Unmarshal([]byte(run("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	targets := map[string]int{}
	for _, d := range st.Daemons {
		targets[d.Name] = d.PID
	}

	// A human client, waiting for sheets on a stdin that stays open.
	sheet := asNobody("sheet")
	stdin, err := sheet.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sheet.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { sheet.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			sheet.Process.Kill()
			<-done
		}
	})
	targets["sheet"] = sheet.Process.Pid

	for name, pid := range targets {
		if pid <= 0 {
			t.Fatalf("no pid for %s: %v", name, targets)
		}
		// The kernel shows a non-dumpable process's /proc files as
		// root's, whoever runs it. The sheet client was just started: it
		// turns itself non-dumpable as its first act, so allow it that
		// moment.
		eventually(t, fmt.Sprintf("%s (pid %d) to be non-dumpable", name, pid), func() (bool, string) {
			fi, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/environ")
			if err != nil {
				return false, err.Error()
			}
			uid := fi.Sys().(*syscall.Stat_t).Uid
			return uid == 0, fmt.Sprintf("/proc/%d/environ is owned by uid %d, want root", pid, uid)
		})
	}

	// The probe: environ and ptrace of each NAME=PID after the tag and
	// python3, and of control, a sleep it starts itself (so always in
	// its own tab and Landlock domain).
	script := `tag=$1 py=$2; shift 2
sleep 1000 & ctl=$!
for target in control=$ctl "$@"; do
	name=${target%%=*} pid=${target#*=}
	if cat /proc/$pid/environ >/dev/null 2>&1; then echo "$tag:$name-environ=ok"; else echo "$tag:$name-environ=denied"; fi
	if "$py" -c "$PTRACE" $pid 2>/dev/null; then echo "$tag:$name-ptrace=ok"; else echo "$tag:$name-ptrace=denied"; fi
done
echo "$tag:done"
exec sleep 1000`
	probe := func(tag string, flags []string, targets map[string]int) map[string]string {
		argv := append(append([]string{"new", "--dir", env.Home}, flags...), "--", "sh", "-c", script, "sh", tag, py)
		for name, pid := range targets {
			argv = append(argv, name+"="+strconv.Itoa(pid))
		}
		id := strings.TrimSpace(run(argv...))
		return probeOutcomes(t, tag, func() string { return run("read", id, "-n", "100") })
	}
	expect := func(what string, got map[string]string, names []string, want string) {
		t.Helper()
		for _, name := range names {
			for _, op := range []string{"environ", "ptrace"} {
				if k := name + "-" + op; got[k] != want {
					t.Errorf("%s: %s of %s: %s, want %s (all: %v)", what, op, name, outcomeOrMissing(got[k]), want, got)
				}
			}
		}
	}
	var daemons []string
	for name := range targets {
		daemons = append(daemons, name)
	}

	// From a plain tab: the daemons and the sheet client are out of
	// reach only because they are not dumpable; the control is not.
	plain := probe("dump", nil, targets)
	expect("plain tab of the same user", plain, []string{"control"}, "ok")
	expect("plain tab of the same user", plain, daemons, "denied")

	// From a sandboxed tab, Landlock adds that nothing outside its domain
	// can be read or traced, dumpable or not: here the plain tab's
	// program, a dumpable process of the same user.
	if abi := sandbox.ABI(); abi < sandbox.MinABI {
		t.Skipf("kernel Landlock ABI %d < %d: no sandboxed tab to check", abi, sandbox.MinABI)
	}
	leader := 0
	eventually(t, "the plain probe tab's leader", func() (bool, string) {
		ts := tabsJSON(t, run("ls", "--json"))
		for _, tb := range ts {
			if fg, ok := tb["foreground_process"].(map[string]any); ok && fg["name"] == "sleep" {
				leader = int(fg["pid"].(float64))
			}
		}
		return leader > 0, fmt.Sprint(ts)
	})
	sbx := probe("sbx", []string{"--sandbox"}, map[string]int{"plain": leader, "terminald": targets["terminald"]})
	expect("sandboxed tab", sbx, []string{"control"}, "ok")
	expect("sandboxed tab", sbx, []string{"plain", "terminald"}, "denied")
}

// tabsJSON parses the terminals of `phantom ls --json` output.
func tabsJSON(t *testing.T, out string) []map[string]any {
	t.Helper()
	var l struct {
		Terminals []map[string]any `json:"terminals"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("ls --json is not JSON: %v\n%s", err, out)
	}
	return l.Terminals
}

// chownTree gives dir and everything in it to uid (and its group).
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}

// stderrOf is the captured standard error of a failed exec.Cmd.Output.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
