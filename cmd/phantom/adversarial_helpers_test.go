package main

// Helpers of the adversarial suite (adversarial_test.go): an attacker that
// is a real tab running the shell commands the test hands it, the
// disguises it runs them under, a raw MCP flood client, a fake authz, and
// the human's view of what must not change.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	grpchealth "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/testenv"
	authzv1 "github.com/phantom-dev/phantom/proto/phantom/authz/v1"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	mcpv1 "github.com/phantom-dev/phantom/proto/phantom/mcp/v1"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// adversaryUp starts an isolated instance with extra variables (KEY=VALUE)
// that the daemons inherit, and git isolated from the machine's
// configuration as upWithGit does; `phantom down` runs when the test ends.
func adversaryUp(t *testing.T, vars ...string) *testenv.Env {
	t.Helper()
	env := testenv.New(t)
	gitconfig := filepath.Join(env.Home, ".gitconfig-test")
	if err := os.WriteFile(gitconfig, []byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Vars = slices.DeleteFunc(env.Vars, func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	env.Vars = append(env.Vars, "GIT_CONFIG_GLOBAL="+gitconfig, "GIT_CONFIG_NOSYSTEM=1")
	env.Vars = append(env.Vars, vars...)
	t.Cleanup(func() {
		if r := phantom(t, env, "down"); r.code != 0 {
			t.Errorf("cleanup: phantom down:\n%v", r)
		}
	})
	mustPhantom(t, env, "up")
	return env
}

// sq quotes s for a POSIX shell.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shellCmd is argv as one shell command line.
func shellCmd(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = sq(a)
	}
	return strings.Join(q, " ")
}

// attackerLoop is an attacker tab's program. It runs every job file the
// test drops into its directory ($1/jobN.sh, in order) in the background,
// as a child of the tab's program, and records the job's output and exit
// status beside it. $J names the job's files, for scratch space.
const attackerLoop = `dir=$1
tty >"$dir/tty.tmp" 2>/dev/null; mv "$dir/tty.tmp" "$dir/tty"
i=0
while :; do
	J=$dir/job$i
	while [ ! -e "$J.sh" ]; do sleep 0.05; done
	( export J; sh "$J.sh" >"$J.out" 2>&1 </dev/null; echo $? >"$J.rc.tmp"; mv "$J.rc.tmp" "$J.rc" ) &
	i=$((i+1))
done`

// attacker is a real tab of the instance under attack: the test, which
// plays the human outside Phantom, hands it shell commands (jobs) and
// reads back what they printed and how they exited.
type attacker struct {
	t   *testing.T
	env *testenv.Env
	// tab is the attacker's tab.
	tab string
	// dir holds the jobs' files.
	dir string
	// pty is the tab's terminal device.
	pty  string
	jobs int
}

// newAttacker opens an attacker tab; flags go to `phantom new` (e.g.
// --group). The tab is closed when the test ends.
func newAttacker(t *testing.T, env *testenv.Env, name string, flags ...string) *attacker {
	t.Helper()
	// A sandboxed tab has a /tmp of its own: its job files go where it
	// sees them, /var/tmp (a temporary directory it may write).
	sandboxed := slices.Contains(flags, "--sandbox")
	base := ""
	if sandboxed && (os.TempDir() == "/tmp" || strings.HasPrefix(os.TempDir(), "/tmp/")) {
		base = "/var/tmp"
	}
	dir, err := os.MkdirTemp(base, "attacker")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	args := append([]string{"new", "--name", name}, flags...)
	if sandboxed && !slices.Contains(flags, "--dir") {
		// Its own directory, too: the tab may create files there.
		args = append(args, "--dir", dir)
	}
	args = append(args, "--", "sh", "-c", attackerLoop, "attacker", dir)
	a := &attacker{t: t, env: env, dir: dir}
	a.tab = strings.TrimSpace(mustPhantom(t, env, args...))
	t.Cleanup(func() { phantom(t, env, "close", a.tab) })
	eventually(t, "attacker tab "+a.tab+" to start", func() (bool, string) {
		b, err := os.ReadFile(filepath.Join(dir, "tty"))
		a.pty = strings.TrimSpace(string(b))
		return err == nil, mustPhantom(t, env, "read", a.tab)
	})
	return a
}

// job is one command an attacker runs.
type job struct {
	a    *attacker
	path string // $J: the job's files without their extension
	cmd  string
}

// jobResult is what a job printed (stdout and stderr) and its exit status.
type jobResult struct {
	out  string
	code int
}

func (r jobResult) String() string { return fmt.Sprintf("exit %d, output:\n%s", r.code, r.out) }

// start hands the attacker a shell command and returns at once.
func (a *attacker) start(cmd string) *job {
	a.t.Helper()
	j := &job{a: a, path: filepath.Join(a.dir, "job"+strconv.Itoa(a.jobs)), cmd: cmd}
	a.jobs++
	if err := os.WriteFile(j.path+".tmp", []byte(cmd+"\n"), 0o600); err != nil {
		a.t.Fatal(err)
	}
	if err := os.Rename(j.path+".tmp", j.path+".sh"); err != nil {
		a.t.Fatal(err)
	}
	return j
}

// run runs a shell command in the attacker's tab and waits for it.
func (a *attacker) run(cmd string) jobResult {
	a.t.Helper()
	return a.start(cmd).wait()
}

// done reports the job's result once it has ended.
func (j *job) done() (jobResult, bool) {
	b, err := os.ReadFile(j.path + ".rc")
	if err != nil {
		return jobResult{}, false
	}
	code, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	out, _ := os.ReadFile(j.path + ".out")
	return jobResult{out: string(out), code: code}, true
}

// output is what the job printed so far.
func (j *job) output() string {
	b, _ := os.ReadFile(j.path + ".out")
	return string(b)
}

// wait waits for the job to end.
func (j *job) wait() jobResult {
	j.a.t.Helper()
	var r jobResult
	eventually(j.a.t, "the attacker's job to end: "+j.cmd, func() (bool, string) {
		var ok bool
		r, ok = j.done()
		return ok, j.output()
	})
	return r
}

// timeoutExit is timeout(1)'s exit status when it had to stop a command:
// the command hung (it was let in and waited for more) instead of being
// refused.
const timeoutExit = 124

// refused reports whether a job was refused: it failed promptly, saying
// why in words that name the boundary.
func refused(r jobResult) bool {
	if r.code == 0 || r.code == timeoutExit {
		return false
	}
	out := strings.ToLower(r.out)
	for _, w := range []string{"inside phantom", "permissiondenied", "permission denied", "permission_denied", "refus"} {
		if strings.Contains(out, w) {
			return true
		}
	}
	return false
}

// refusedOrWalledOff is refused, or the refusal a walled sandbox gives
// without asking anyone: Phantom's daemons are out of its sight (their
// runtime directory is a private, empty one), so the CLI finds no Phantom.
func refusedOrWalledOff(r jobResult) bool {
	return refused(r) || r.code == 3 && strings.Contains(r.out, "does not answer")
}

// disguise is a way an attacker launches a command to hide where it runs.
type disguise struct {
	name string
	wrap func(cmd string) string
	// orphan is true when the command runs as an orphan that terminald, a
	// child subreaper, adopts.
	orphan bool
}

// orphanWait waits (up to 20 s) for the orphaned command to record its
// exit status, and exits with it.
const orphanWait = `; n=0; while [ ! -s "$J.orphan-rc" ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n+1)); done; exit "$(cat "$J.orphan-rc")"`

// orphanBody is what an orphan runs: it waits until its parent has exited,
// says who adopted it, runs cmd and records cmd's exit status.
func orphanBody(cmd string) string {
	return `sleep 0.3; echo "orphan-ppid=$(awk '{print $4}' /proc/$$/stat)"; ` + cmd + `; echo $? >"$J.orphan-rc"`
}

// The disguises: every way the issue names to hide where a command runs.
var (
	plainly     = disguise{name: "plainly", wrap: func(c string) string { return c }}
	afterSetsid = disguise{name: "after setsid", wrap: func(c string) string { return "setsid -w sh -c " + sq(c) }}
	// setsidOrphan is `setsid -f sh -c '…'`, whose parent exits at once.
	setsidOrphan = disguise{name: "after setsid -f (an orphan in its own session)", orphan: true, wrap: func(c string) string {
		return "setsid -f sh -c " + sq(orphanBody(c)) + orphanWait
	}}
	doubleFork = disguise{name: "as a double-forked orphan", orphan: true, wrap: func(c string) string {
		return "( sh -c " + sq(orphanBody(c)) + " & )" + orphanWait
	}}
	envCleared = disguise{name: "with PHANTOM_TAB_ID, PHANTOM_TAB_STATE and PHANTOM_MCP_SOCKET unset", wrap: func(c string) string {
		return "env -u PHANTOM_TAB_ID -u PHANTOM_TAB_STATE -u PHANTOM_MCP_SOCKET sh -c " + sq(c)
	}}
	movedTabState = disguise{name: "after mv $PHANTOM_TAB_STATE elsewhere", wrap: func(c string) string {
		return `mv "$PHANTOM_TAB_STATE" "$J.state" || exit 99; sh -c ` + sq(c) +
			`; rc=$?; mv "$J.state" "$PHANTOM_TAB_STATE"; exit $rc`
	}}
	rewrittenTabState = disguise{name: "after rewriting its tab-state file with a dead leader pid", wrap: func(c string) string {
		return `cp "$PHANTOM_TAB_STATE" "$J.state" || exit 99; ` +
			`sed -E 's/"leader_pid":[0-9]+/"leader_pid":4194000/; s/"session":[0-9]+/"session":4194000/' "$J.state" >"$PHANTOM_TAB_STATE" || exit 99; ` +
			`grep -q '"leader_pid":4194000' "$PHANTOM_TAB_STATE" || { cat "$J.state" >"$PHANTOM_TAB_STATE"; echo "tab-state format changed: nothing rewritten"; exit 99; }; ` +
			`sh -c ` + sq(c) + `; rc=$?; cat "$J.state" >"$PHANTOM_TAB_STATE"; exit $rc`
	}}
)

// then is d with inner inside it: `setsid -f env -u PHANTOM_TAB_ID …`.
func (d disguise) then(inner disguise) disguise {
	return disguise{name: d.name + ", " + inner.name, orphan: d.orphan || inner.orphan,
		wrap: func(c string) string { return d.wrap(inner.wrap(c)) }}
}

// posingAs is the disguise of a command run with another tab's
// PHANTOM_TAB_ID and PHANTOM_TAB_STATE.
func posingAs(tab, state string) disguise {
	return disguise{name: "posing as the human's tab (its PHANTOM_TAB_ID and PHANTOM_TAB_STATE)", wrap: func(c string) string {
		return "PHANTOM_TAB_ID=" + sq(tab) + " PHANTOM_TAB_STATE=" + sq(state) + " sh -c " + sq(c)
	}}
}

// checkOrphan checks that a disguised job really ran as an orphan adopted
// by the instance's holder (terminald/holder), the child subreaper that
// parents the tabs — or by terminald where no holder runs — so that the
// attack tried what it claims.
func checkOrphan(t *testing.T, env *testenv.Env, d disguise, r jobResult) {
	t.Helper()
	if !d.orphan {
		return
	}
	_, after, ok := strings.Cut(r.out, "orphan-ppid=")
	ppid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	anchor, what := holderPID(env), "the holder"
	if anchor == 0 {
		anchor, what = getStatus(t, env).Daemons[0].PID, "terminald"
	}
	if !ok || ppid != anchor {
		t.Errorf("the orphan (%s) was adopted by pid %d, want %s (pid %d), a child subreaper:\n%s", d.name, ppid, what, anchor, r.out)
	}
}

// humanTab opens a tab the human uses, showing marker; flags go to
// `phantom new`.
func humanTab(t *testing.T, env *testenv.Env, name, marker string, flags ...string) string {
	t.Helper()
	args := append([]string{"new", "--name", name}, flags...)
	id := strings.TrimSpace(mustPhantom(t, env, append(args, "--", "sh", "-c", "echo "+marker+"; sleep 1000")...))
	eventually(t, marker+" in tab "+id, func() (bool, string) {
		out := mustPhantom(t, env, "read", id)
		return strings.Contains(out, marker), out
	})
	return id
}

// settledShell waits until the instance's first tab (the human's shell)
// sits idle at its prompt and returns it with its output.
func settledShell(t *testing.T, env *testenv.Env) (tab, output string) {
	t.Helper()
	tab, _ = tabs(t, env)[0]["id"].(string)
	var last string
	eventually(t, "the human's shell "+tab+" to settle at its prompt", func() (bool, string) {
		out := mustPhantom(t, env, "read", tab)
		// A shell counts as idle a moment before it prints its prompt:
		// wait for the prompt too.
		ok := strings.TrimSpace(out) != "" && out == last && tabByID(tabs(t, env), tab)["idle"] == true
		last = out
		return ok, out
	})
	return tab, last
}

// unchangedOutput fails unless tab's output stays want for a while: keys
// typed into it would show within milliseconds.
func unchangedOutput(t *testing.T, env *testenv.Env, tab, want, attack string) {
	t.Helper()
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if out := mustPhantom(t, env, "read", tab); out != want {
			t.Errorf("after %s, the human's tab %s changed:\n%s\nwas:\n%s", attack, tab, out, want)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sheetOf returns the waiting sheet raised from tab for tool, or nil.
func sheetOf(t *testing.T, env *testenv.Env, tab, tool string) map[string]any {
	t.Helper()
	for _, s := range sheetsJSON(t, env) {
		if s["tab_id"] == tab && s["tool"] == tool {
			return s
		}
	}
	return nil
}

// sheetIDs are the ids of the waiting sheets.
func sheetIDs(t *testing.T, env *testenv.Env) []string {
	t.Helper()
	var ids []string
	for _, s := range sheetsJSON(t, env) {
		ids = append(ids, fmt.Sprint(s["id"]))
	}
	return ids
}

// grantIDs are the ids of every grant, standing and once.
func grantIDs(t *testing.T, env *testenv.Env) []string {
	t.Helper()
	var ids []string
	for _, g := range grantsJSON(t, env) {
		ids = append(ids, fmt.Sprint(g["id"]))
	}
	return ids
}

// asksHuman waits until the job's call either raises a sheet from tab for
// tool — which it returns — or ends without one, which fails the test:
// the call was decided without the human.
func asksHuman(t *testing.T, env *testenv.Env, j *job, tab, tool, attack string) map[string]any {
	t.Helper()
	var s map[string]any
	eventually(t, "a sheet for "+tool+" from tab "+tab+" ("+attack+")", func() (bool, string) {
		if s = sheetOf(t, env, tab, tool); s != nil {
			return true, ""
		}
		if r, ok := j.done(); ok {
			if s = sheetOf(t, env, tab, tool); s != nil {
				return true, ""
			}
			t.Fatalf("%s: the %s call ended without asking the human: %v", attack, tool, r)
		}
		return false, fmt.Sprint(sheetsJSON(t, env))
	})
	return s
}

// agentRun is one run of the test agent (the official MCP Go SDK client)
// as a job of an attacker: a new MCP connection from the attacker's tab.
type agentRun struct {
	// read returns the outcomes the run wrote so far.
	read func() []agentLine
}

// agent runs the test agent in the attacker's tab as client with script,
// which ends with an exit step so that the run ends by itself.
func (a *attacker) agent(client string, script ...map[string]any) agentRun {
	a.t.Helper()
	return a.agentWith(a.own(testAgent(a.t), "testagent"), a.own(phantomBin, "phantom"), client, script...)
}

// agentWith is agent with the test agent and the bridge binaries given:
// two tabs running the same copies are the same program to Phantom.
func (a *attacker) agentWith(agentBin, bridgeBin, client string, script ...map[string]any) agentRun {
	a.t.Helper()
	path := filepath.Join(a.dir, "agent"+strconv.Itoa(a.jobs))
	b, _ := json.Marshal(append(script, map[string]any{"op": "exit"}))
	if err := os.WriteFile(path+".json", b, 0o600); err != nil {
		a.t.Fatal(err)
	}
	read := func() []agentLine { return readAgentLines(path + ".jsonl") }
	a.t.Cleanup(func() { killAgent(read()) })
	a.start("TESTAGENT_CLIENT=" + sq(client) + " " + shellCmd(agentBin, bridgeBin, path+".json", path+".jsonl"))
	return agentRun{read: read}
}

// own returns a copy of the binary src, named name, in the attacker's own
// directory, where its tab can run it: a sandboxed tab has a /tmp of its
// own, where the binaries built for the tests are not.
func (a *attacker) own(src, name string) string {
	a.t.Helper()
	bin := filepath.Join(a.dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := copyFile(src, bin, 0o755); err != nil {
		a.t.Fatal(err)
	}
	return bin
}

// agentAsksHuman is asksHuman for step i of an agent run whose outcomes
// read returns.
func agentAsksHuman(t *testing.T, env *testenv.Env, read func() []agentLine, i int, tab, tool, attack string) map[string]any {
	t.Helper()
	var s map[string]any
	eventually(t, fmt.Sprintf("a sheet for step %d, %s, from tab %s (%s)", i, tool, tab, attack), func() (bool, string) {
		if s = sheetOf(t, env, tab, tool); s != nil {
			return true, ""
		}
		lines := read()
		for _, l := range lines {
			if l.Op == "fatal" {
				t.Fatalf("%s: the agent failed: %s", attack, l.Error)
			}
			if l.Step == i {
				if s = sheetOf(t, env, tab, tool); s != nil {
					return true, ""
				}
				t.Fatalf("%s: %s ended without asking the human: %s %s", attack, tool, l.Result, l.Error)
			}
		}
		return false, fmt.Sprint(lines)
	})
	return s
}

// deny answers a sheet --deny, as the human.
func deny(t *testing.T, env *testenv.Env, s map[string]any) {
	t.Helper()
	mustPhantom(t, env, "sheet", "answer", fmt.Sprint(s["id"]), "--deny")
}

// humanClients dials terminald and authz from the test, which runs outside
// Phantom: the human's own programs.
func humanClients(t *testing.T, env *testenv.Env) (terminalv1.TerminalServiceClient, authzv1.AuthzServiceClient) {
	t.Helper()
	var out [2]*grpc.ClientConn
	for i, name := range []string{"terminald", "authz"} {
		cc, err := daemon.Dial(env.Layout.DaemonAddr(name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		out[i] = cc
	}
	return terminalv1.NewTerminalServiceClient(out[0]), authzv1.NewAuthzServiceClient(out[1])
}

// humanGroup creates a group as the human and returns its id.
func humanGroup(t *testing.T, tc terminalv1.TerminalServiceClient, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := tc.CreateGroup(ctx, &terminalv1.CreateGroupRequest{Name: name})
	if err != nil {
		t.Fatalf("CreateGroup %s as the human: %v", name, err)
	}
	return resp.GetGroup().GetId()
}

// outsideAsk asks authz, from outside Phantom as a daemon would, whether a
// client may call tool; the answer arrives on the channel once the human
// decided (or the sheet timed out).
func outsideAsk(t *testing.T, ac authzv1.AuthzServiceClient, client, conn, tool, args string) <-chan *authzv1.AuthorizeResponse {
	ch := make(chan *authzv1.AuthorizeResponse, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		resp, err := ac.Authorize(ctx, &authzv1.AuthorizeRequest{
			Caller: &authzv1.Caller{Client: client, ConnectionId: conn, Pid: int32(os.Getpid()), Program: "/outside/" + client}, Tool: tool, ArgumentsJson: args})
		if err != nil {
			resp = &authzv1.AuthorizeResponse{Reason: "rpc error: " + err.Error()}
		}
		ch <- resp
	}()
	return ch
}

// standingGrant makes an always grant for client, as the human, and
// returns its id.
func standingGrant(t *testing.T, env *testenv.Env, ac authzv1.AuthzServiceClient, client, tab string) string {
	t.Helper()
	ch := outsideAsk(t, ac, client, "standing-"+client, "read_output", `{"terminal_id":"`+tab+`"}`)
	var id string
	eventually(t, "the sheet of "+client, func() (bool, string) {
		for _, s := range sheetsJSON(t, env) {
			if s["client"] == client {
				id, _ = s["id"].(string)
			}
		}
		return id != "", fmt.Sprint(sheetsJSON(t, env))
	})
	mustPhantom(t, env, "sheet", "answer", id, "--always", "--scope", "all")
	select {
	case r := <-ch:
		if !r.GetAllowed() || r.GetGrantId() == "" {
			t.Fatalf("the human's always answer did not allow: %v", r)
		}
		return r.GetGrantId()
	case <-time.After(testenv.WaitTimeout):
		t.Fatal("Authorize did not return after the human answered")
		return ""
	}
}

// pendingSheet raises a sheet from outside Phantom that stays pending
// until the test ends (when the human denies it) and returns its id.
func pendingSheet(t *testing.T, env *testenv.Env, ac authzv1.AuthzServiceClient, client, conn, tab string) string {
	t.Helper()
	outsideAsk(t, ac, client, conn, "read_output", `{"terminal_id":"`+tab+`"}`)
	var id string
	eventually(t, "the sheet of "+client, func() (bool, string) {
		for _, s := range sheetsJSON(t, env) {
			if s["client"] == client {
				id, _ = s["id"].(string)
			}
		}
		return id != "", fmt.Sprint(sheetsJSON(t, env))
	})
	t.Cleanup(func() { phantom(t, env, "sheet", "answer", id, "--deny") })
	return id
}

// python3 finds python3 for the flood client.
func python3(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the MCP flood client needs it")
	}
	return p
}

// mcpFlood is a raw MCP client that opens many connections to the
// gateway's socket from one process:
//
//	mcpflood.py SOCKET N OUT [hello=1] [call=JSON] [wait=SECONDS] [hold=FILE]
//
// With hello=1 each connection sends a genuine hello (its own pid, no tab
// state) and, with call, then initializes and calls the tool call names
// ({"name":…,"arguments":…}). OUT.sent is written once every connection
// was made; OUT, a JSON summary, after wait seconds of collecting the
// calls' responses. With hold it keeps its connections open until FILE
// exists (at most two minutes).
const mcpFlood = `import json, os, resource, select, socket, sys, time

sock_path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
opts = dict(a.split("=", 1) for a in sys.argv[4:])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = n + 64 if hard == resource.RLIM_INFINITY else min(hard, n + 64)
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

summary = {"connected": 0, "connect_errors": {}, "hello_ok": 0, "refusals": {}, "responses": []}
conns, calling = [], []

def bump(d, k):
    d[k] = d.get(k, 0) + 1

def send(s, obj):
    s.sendall((json.dumps(obj) + "\n").encode())

for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(sock_path)
    except OSError as e:
        bump(summary["connect_errors"], e.strerror or str(e))
        s.close()
        continue
    summary["connected"] += 1
    conns.append(s)
    if opts.get("hello") != "1":
        continue
    try:
        send(s, {"hello": "phantom", "version": 1, "pid": os.getpid(), "client": "flood", "tab_state": ""})
        f = s.makefile("rb")
        line = json.loads(f.readline() or b"{}")
        if line.get("hello") != "ok":
            bump(summary["refusals"], (line.get("error") or {}).get("code", "closed"))
            continue
        summary["hello_ok"] += 1
        if "call" not in opts:
            continue
        send(s, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}})
        f.readline()
        send(s, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(s, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": json.loads(opts["call"])})
        calling.append((s, f))
    except (OSError, ValueError) as e:
        bump(summary["refusals"], "error: " + str(e))

open(out + ".sent", "w").write(json.dumps(summary))

deadline = time.time() + float(opts.get("wait", "0"))
waiting = {s.fileno(): f for s, f in calling}
for s, _ in calling:
    s.setblocking(True)
    s.settimeout(None)
while waiting and time.time() < deadline:
    ready, _, _ = select.select(list(waiting), [], [], max(0, deadline - time.time()))
    for fd in ready:
        line = waiting.pop(fd).readline()
        summary["responses"].append(line.decode(errors="replace"))
tmp = out + ".tmp"
open(tmp, "w").write(json.dumps(summary))
os.rename(tmp, out)

hold = opts.get("hold")
end = time.time() + 120
while hold and not os.path.exists(hold) and time.time() < end:
    time.sleep(0.05)
`

// floodSummary is what mcpflood.py reports.
type floodSummary struct {
	Connected     int            `json:"connected"`
	ConnectErrors map[string]int `json:"connect_errors"`
	HelloOK       int            `json:"hello_ok"`
	Refusals      map[string]int `json:"refusals"`
	Responses     []string       `json:"responses"`
}

// floodCmd is the shell command that runs mcpflood.py with n connections,
// writing its summary to out.
func (a *attacker) floodCmd(n int, out string, opts ...string) string {
	a.t.Helper()
	script := filepath.Join(a.dir, "mcpflood.py")
	if err := os.WriteFile(script, []byte(mcpFlood), 0o600); err != nil {
		a.t.Fatal(err)
	}
	return shellCmd(append([]string{python3(a.t), script, a.env.Layout.MCPSocket, strconv.Itoa(n), out}, opts...)...)
}

// readFlood reads a flood summary file.
func readFlood(path string) (floodSummary, bool) {
	var s floodSummary
	b, err := os.ReadFile(path)
	return s, err == nil && json.Unmarshal(b, &s) == nil
}

// fakeAuthzEnv, set to a socket path, turns the test binary into a fake
// authz serving there (see init): what an agent that moved authz.sock
// aside would run in its place. It says yes to everything.
const fakeAuthzEnv = "PHANTOM_ADVERSARIAL_FAKE_AUTHZ"

func init() {
	if sock := os.Getenv(fakeAuthzEnv); sock != "" {
		if err := serveFakeAuthz(sock); err != nil {
			fmt.Fprintln(os.Stderr, "fake authz:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// serveFakeAuthz serves a yes-man authz on sock: every tool free, every
// call allowed, no sheets, no grants, healthy.
func serveFakeAuthz(sock string) error {
	lis, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	hs := grpchealth.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	authzv1.RegisterAuthzServiceServer(srv, yesAuthz{})
	fmt.Println("fake authz serving on", sock)
	return srv.Serve(lis)
}

// yesAuthz allows everything.
type yesAuthz struct {
	authzv1.UnimplementedAuthzServiceServer
}

func (yesAuthz) Authorize(context.Context, *authzv1.AuthorizeRequest) (*authzv1.AuthorizeResponse, error) {
	return &authzv1.AuthorizeResponse{Allowed: true, GrantId: "fake"}, nil
}

func (yesAuthz) ListPolicy(context.Context, *authzv1.ListPolicyRequest) (*authzv1.ListPolicyResponse, error) {
	resp := &authzv1.ListPolicyResponse{}
	for _, fd := range []protoreflect.FileDescriptor{terminalv1.File_phantom_terminal_v1_terminal_proto, gitv1.File_phantom_git_v1_git_proto} {
		for i := range fd.Services().Len() {
			ms := fd.Services().Get(i).Methods()
			for j := range ms.Len() {
				if tool, ok := proto.GetExtension(ms.Get(j).Options(), mcpv1.E_Tool).(*mcpv1.Tool); ok && tool.GetName() != "" {
					resp.Tools = append(resp.Tools, &authzv1.ToolPolicy{Tool: tool.GetName()})
				}
			}
		}
	}
	return resp, nil
}

func (yesAuthz) ListSheets(context.Context, *authzv1.ListSheetsRequest) (*authzv1.ListSheetsResponse, error) {
	return &authzv1.ListSheetsResponse{}, nil
}

func (yesAuthz) ListGrants(context.Context, *authzv1.ListGrantsRequest) (*authzv1.ListGrantsResponse, error) {
	return &authzv1.ListGrantsResponse{}, nil
}

func (yesAuthz) EndConnection(context.Context, *authzv1.EndConnectionRequest) (*authzv1.EndConnectionResponse, error) {
	return &authzv1.EndConnectionResponse{}, nil
}

// newHelp is `phantom new --help`, to find out which flags exist yet.
func newHelp(t *testing.T, env *testenv.Env) string {
	t.Helper()
	return phantom(t, env, "new", "--help").stdout
}
