package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/testenv"
	lspv1 "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// lspServers is list_language_servers' structuredContent.
type lspServers struct {
	Servers []lspServer `json:"servers"`
}

// lspServer is one server of list_language_servers.
type lspServer struct {
	ID         string   `json:"id"`
	Command    []string `json:"command"`
	PID        int      `json:"pid"`
	Sandbox    string   `json:"sandbox"`
	Configured string   `json:"configured"`
}

// find returns the server id, or fails the test.
func (l lspServers) find(t *testing.T, id string) (cmd string, pid int, sandbox, configured string) {
	t.Helper()
	for _, s := range l.Servers {
		if s.ID == id {
			return strings.Join(s.Command, " "), s.PID, s.Sandbox, s.Configured
		}
	}
	t.Fatalf("no language server %s in %+v", id, l)
	return "", 0, "", ""
}

// scratch makes newAttacker's next job directory a hidden one in dir
// (the tab's own), through TMPDIR.
func scratch(t *testing.T, dir string) {
	t.Helper()
	d := filepath.Join(dir, ".scratch")
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", d)
}

// humanServers is list_language_servers as the human sees it, over gRPC
// from outside Phantom: every server.
func humanServers(t *testing.T, env *testenv.Env) lspServers {
	t.Helper()
	cc, err := daemon.Dial(env.Layout.DaemonAddr("lspd"))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	r, err := lspv1.NewLanguageServerServiceClient(cc).ListLanguageServers(context.Background(), &lspv1.ListLanguageServersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var l lspServers
	for _, sv := range r.GetServers() {
		l.Servers = append(l.Servers, lspServer{ID: sv.GetId(), Command: sv.GetCommand(), PID: int(sv.GetPid()), Sandbox: sv.GetSandbox(), Configured: sv.GetConfigured()})
	}
	return l
}

// TestAdversarialLanguageServerConfigure (issue 22, invariants 1, 2 and
// 4 for language servers): a sandboxed agent configures its workspace's
// Python server to be a script of its own that writes outside its
// sandbox and lists the sheets. The human answers the sheet once. The
// script runs, but in the tab's sandbox: nothing is written in the
// human's home or Phantom's state, `phantom sheet list` is refused, and
// nothing is saved. The configuration does not spread: the same tab's
// second workspace, and another tab's, get the default pylsp, confined
// too (no_new_privs, which only the sandbox launcher sets).
func TestAdversarialLanguageServerConfigure(t *testing.T) {
	if _, err := exec.LookPath("pylsp"); err != nil {
		t.Skipf("pylsp is not installed (scripts/setup installs it): %v", err)
	}
	env, bin, inTemp := instanceOutsideTemp(t)
	if inTemp {
		t.Skip("the instance would live in a temporary directory, which a sandbox may write: the test would prove nothing")
	}
	work, work2 := filepath.Join(env.Home, "work"), filepath.Join(env.Home, "work2")
	for _, w := range []string{work, work2} {
		lspWrite(t, w, "pyproject.toml", "[project]\nname = \"m\"\n")
		lspWrite(t, w, "main.py", "def main():\n    return undefined_thing\n")
	}
	if err := os.MkdirAll(env.Layout.State, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(env.Layout.Logs, "lspd.log"))
			t.Logf("lspd log:\n%s", b)
		}
	})
	up := exec.Command(bin, "up")
	up.Env, up.Dir = env.Vars, env.Home
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("phantom up: %v\n%s", err, out)
	}

	// The attacker's scratch files (its jobs, what the configured server
	// reports) are in its own workspace: behind the walls its tab, and
	// its language servers, have a private /tmp and write nothing else.
	scratch(t, work)
	a := newAttacker(t, env, "lsp-attacker", "--sandbox", "--dir", work)
	if tb := tabByID(tabs(t, env), a.tab); tb["sandboxed"] != true {
		t.Skipf("the tab opened with --sandbox is not sandboxed on this kernel: %v", tb)
	}
	ran := filepath.Join(a.dir, "evil-ran")
	sheetOut := filepath.Join(a.dir, "evil-sheet-list")
	outside := map[string]string{
		"the human's home":    filepath.Join(env.Home, "pwned-by-language-server"),
		"Phantom's state dir": filepath.Join(env.Layout.State, "pwned-by-language-server"),
	}
	evil := filepath.Join(work, "evil.sh")
	script := "#!/bin/sh\n" +
		"echo ran >>" + sq(ran) + "\n" +
		"echo pwned >" + sq(outside["the human's home"]) + " 2>/dev/null\n" +
		"echo pwned >" + sq(outside["Phantom's state dir"]) + " 2>/dev/null\n" +
		sq(bin) + " sheet list --json >" + sq(sheetOut) + " 2>&1; echo \"rc=$?\" >>" + sq(sheetOut) + "\n" +
		"exec pylsp \"$@\"\n"
	// The agent writes its script in its own workspace, from its tab.
	if r := a.run("cat >" + sq(evil) + " <<'EOF'\n" + script + "EOF\nchmod +x " + sq(evil)); r.code != 0 {
		t.Fatalf("the sandboxed tab could not write its script in its own workspace: %v", r)
	}

	run := a.agent("evil-agent",
		map[string]any{"op": "call", "tool": "configure_language_server", "args": map[string]any{"language": "python", "command": evil}},            // 0
		map[string]any{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": "main.py", "wait_ms": 60000}},                       // 1
		map[string]any{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": filepath.Join(work2, "main.py"), "wait_ms": 60000}}, // 2
		map[string]any{"op": "call", "tool": "list_language_servers"},                                                                               // 3
	)
	s := agentAsksHuman(t, env, run.read, 0, a.tab, "configure_language_server", "configure a script as the python server")
	subject := fmt.Sprint(s["subject"])
	for _, w := range []string{evil, "workspace " + work + " only", "not the language's other workspaces", "until Phantom stops (not saved)", "in the sandbox of the caller's tab " + a.tab} {
		if !strings.Contains(subject, w) {
			t.Errorf("the sheet says %q\nwant it to say %q", subject, w)
		}
	}
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--once")
	var c0 struct {
		AppliesTo string `json:"applies_to"`
	}
	decodeStep(t, run.read, 0, &c0)
	if !strings.Contains(c0.AppliesTo, work+" only") {
		t.Errorf("configure_language_server applies to %q, want workspace %s only", c0.AppliesTo, work)
	}
	decodeStep(t, run.read, 1, &diagResp{})
	decodeStep(t, run.read, 2, &diagResp{})

	// The script ran, confined.
	if b, err := os.ReadFile(ran); err != nil || !strings.Contains(string(b), "ran") {
		t.Fatalf("the configured script did not run (%v): the test proves nothing", err)
	}
	for where, p := range outside {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the configured language server wrote in %s (%s): %v", where, p, err)
		}
	}
	if b, _ := os.ReadFile(sheetOut); strings.Contains(string(b), "rc=0") || !refusedOrWalledOff(jobResult{out: string(b), code: rcOf(string(b))}) {
		t.Errorf("`phantom sheet list` from the configured language server was not refused:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(env.Layout.State, "lspd.json")); !os.IsNotExist(err) {
		t.Errorf("the agent's configuration was saved for every workspace: %v", err)
	}
	starts, _ := os.ReadFile(ran)

	// It did not spread: the same tab's other workspace and another tab
	// of the same workspace run the default pylsp.
	scratch(t, work2)
	b := newAttacker(t, env, "lsp-second", "--sandbox", "--dir", work2)
	other := b.agent("second-agent",
		map[string]any{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": "main.py", "wait_ms": 60000}},                      // 0
		map[string]any{"op": "call", "tool": "list_diagnostics", "args": map[string]any{"path": filepath.Join(work, "main.py"), "wait_ms": 60000}}, // 1
		map[string]any{"op": "call", "tool": "list_language_servers"},                                                                              // 2
	)
	decodeStep(t, other.read, 0, &diagResp{})
	decodeStep(t, other.read, 1, &diagResp{})
	var mine lspServers
	decodeStep(t, other.read, 2, &mine)
	for _, sv := range mine.Servers {
		if !strings.HasSuffix(sv.ID, "@"+b.tab) {
			t.Errorf("tab %s's agent sees server %s, not of its own confinement: %+v", b.tab, sv.ID, mine)
		}
	}
	l := humanServers(t, env)
	if cmd, _, sb, conf := l.find(t, "python:"+work+"@"+a.tab); cmd != evil || !strings.Contains(sb, "sandbox of tab "+a.tab) || conf == "" {
		t.Errorf("the configured server runs %q %q (%q), want %s in tab %s's sandbox, marked as an agent's", cmd, sb, conf, evil, a.tab)
	}
	for _, id := range []string{"python:" + work2 + "@" + a.tab, "python:" + work2 + "@" + b.tab, "python:" + work + "@" + b.tab} {
		cmd, pid, sb, conf := l.find(t, id)
		if cmd != "pylsp" || conf != "" || !strings.Contains(sb, "in the sandbox of tab") {
			t.Errorf("server %s runs %q %q (%q): the configuration spread, or it is not sandboxed", id, cmd, sb, conf)
		}
		if !sandboxLaunched(pid) {
			t.Errorf("server %s (pid %d) was not started through the sandbox launcher (neither the launcher's monitor nor no_new_privs)", id, pid)
		}
	}
	if again, _ := os.ReadFile(ran); string(again) != string(starts) {
		t.Errorf("the configured script ran again for another workspace or tab:\n%s", again)
	}
}

// sandboxLaunched reports whether process pid runs confined: it is the
// sandbox launcher's monitor (`phantom +sandbox --isolate …`, whose child
// runs the program) or has no_new_privs, which the launcher sets.
func sandboxLaunched(pid int) bool {
	if argv, err := procfs.Default.Cmdline(pid); err == nil && len(argv) > 1 && argv[1] == sandbox.Command {
		return true
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return err == nil && strings.Contains(string(st), "NoNewPrivs:\t1")
}

// rcOf reads the "rc=N" line a probe script wrote, 1 when there is none.
func rcOf(out string) int {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rc="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return 1
}
