package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabstate"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// restartScene is what the restart tests set up before terminald goes
// away: a shell with a marker on its screen, a running "build", a program
// that will exit while terminald is down, an agent in the middle of its
// MCP session, a group and names.
type restartScene struct {
	in                   *instance
	shell, build, short  string
	agent                string
	group                string
	leaders              map[string]procfs.Stat
	flag, agentGo        string
	agentRead            func() []agentLine
	sheet                string
	buildBefore          int
	terminaldPID         int
	terminaldStartBefore uint64
}

func setUpRestartScene(t *testing.T) *restartScene {
	t.Helper()
	in := startPhantom(t)
	ctx := tctx(t)
	s := &restartScene{in: in, leaders: map[string]procfs.Stat{}}
	dir := t.TempDir()
	s.flag, s.agentGo = filepath.Join(dir, "exit-now"), filepath.Join(dir, "agent-go")

	s.shell = in.list(t)[0].GetId()
	waitIdle(t, in, s.shell)
	if _, err := in.tc.RunCommand(ctx, &terminalv1.RunCommandRequest{TerminalId: s.shell, Command: "echo before-$((40+2))"}); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, in, s.shell, "before-42")

	s.build = newTab(t, in, "--name", "build", "--", "bash", "-c", `i=0; while :; do i=$((i+1)); echo build-$i; sleep 0.05; done`)
	s.short = newTab(t, in, "--name", "short", "--", "bash", "-c", `while [ ! -e "$0" ]; do sleep 0.02; done; exit 7`, s.flag)
	g, err := in.tc.CreateGroup(ctx, &terminalv1.CreateGroupRequest{Name: "builds"})
	if err != nil {
		t.Fatal(err)
	}
	s.group = g.GetGroup().GetId()
	if _, err := in.tc.MoveToGroup(ctx, &terminalv1.MoveToGroupRequest{TerminalId: s.build, GroupId: s.group}); err != nil {
		t.Fatal(err)
	}
	// An agent whose MCP session spans the restart: one call before; one
	// in flight across it (run_command into the shell, waiting for the
	// human's answer on its sheet while terminald goes away); then, once
	// terminald is back, another.
	s.agent, s.agentRead = runAgent(t, in.env, []map[string]any{
		{"op": "call", "tool": "list_terminals", "args": map[string]any{}},
		{"op": "call", "tool": "run_command", "args": map[string]any{"terminal_id": s.shell, "command": "echo from-agent-$((3*3))"}},
		{"op": "wait", "file": s.agentGo},
		{"op": "call", "tool": "list_terminals", "args": map[string]any{}},
	})
	resultOf(t, waitStep(t, s.agentRead, 0))
	s.sheet = waitSheet(t, in.env, "run_command")
	s.buildBefore = lastBuild(t, in, s.build)
	for _, id := range []string{s.shell, s.build, s.short, s.agent} {
		ts, err := tabstate.Read(tabstate.Path(in.env.Layout.TabStateDir(), id))
		if err != nil {
			t.Fatal(err)
		}
		st, err := procfs.Default.Stat(ts.LeaderPID)
		if err != nil || st.StartTime != ts.LeaderStart {
			t.Fatalf("tab %s's leader %d: %v", id, ts.LeaderPID, err)
		}
		s.leaders[id] = st
	}
	rec, err := daemon.ReadPIDFile(in.env.Layout.PIDFile("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	s.terminaldPID = rec.PID
	return s
}

// checkAfterRestart checks that everything came back: same tabs with the
// same ids, names and group, their programs never restarted, the screens
// rebuilt, new output flowing, run_command and read_output working, the
// exit that happened while terminald was down reported, the agent's next
// call answered.
func (s *restartScene) checkAfterRestart(t *testing.T) {
	t.Helper()
	in := s.in
	ctx := tctx(t)
	rec, err := daemon.ReadPIDFile(in.env.Layout.PIDFile("terminald"))
	if err != nil || rec.PID == s.terminaldPID {
		t.Fatalf("terminald's pid file: %+v, %v; want a new terminald", rec, err)
	}
	byID := map[string]*terminalv1.Terminal{}
	for _, tm := range in.list(t) {
		byID[tm.GetId()] = tm
	}
	for _, id := range []string{s.shell, s.build, s.short, s.agent} {
		if byID[id] == nil {
			t.Fatalf("tab %s is gone after the restart; tabs: %v", id, byID)
		}
	}
	if b := byID[s.build]; b.GetName() != "build" || b.GetGroupId() != s.group {
		t.Errorf("build tab after the restart: name %q group %q; want build, %s", b.GetName(), b.GetGroupId(), s.group)
	}
	groups, err := in.tc.ListGroups(ctx, &terminalv1.ListGroupsRequest{})
	if err != nil || len(groups.GetGroups()) != 1 || groups.GetGroups()[0].GetName() != "builds" {
		t.Errorf("groups after the restart: %v, %v", groups.GetGroups(), err)
	}
	for _, id := range []string{s.shell, s.build, s.agent} {
		st, err := procfs.Default.Stat(s.leaders[id].PID)
		if err != nil || st.StartTime != s.leaders[id].StartTime {
			t.Errorf("tab %s's program (pid %d) did not survive: %v", id, s.leaders[id].PID, err)
		}
		// Identity from the kernel still names the tab.
		loc, err := in.tc.LocateProcess(ctx, &terminalv1.LocateProcessRequest{Pid: int32(st.PID), StartTime: st.StartTime})
		if err != nil || !loc.GetInside() || loc.GetTabId() != id {
			t.Errorf("LocateProcess(tab %s's program) = %v, %v; want inside, in %s", id, loc, err, id)
		}
	}
	// The exit that happened while no terminald ran.
	eventually(t, "the short tab to show its exit", func() (bool, string) {
		tm := tabOf(t, in, s.short)
		return tm.GetExited() && tm.GetExitCode() == 7, fmt.Sprint(tm)
	})
	// The screens, rebuilt from the rings.
	waitOutput(t, in, s.shell, "before-42")
	waitOutput(t, in, s.build, "build-1\n")
	// New output flows.
	eventually(t, "the build to print on", func() (bool, string) {
		n := lastBuild(t, in, s.build)
		return n > s.buildBefore+5, fmt.Sprintf("last build line %d, was %d", n, s.buildBefore)
	})
	// The agent's call that was waiting for the human when terminald went
	// away: answered now, it runs in the new terminald.
	mustPhantom(t, in.env, "sheet", "answer", s.sheet, "--once")
	if r := resultOf(t, waitStep(t, s.agentRead, 1)); r.IsError {
		t.Errorf("the agent's run_command across the restart failed: %s", r.text())
	}
	waitOutput(t, in, s.shell, "from-agent-9")
	// run_command and read_output.
	waitIdle(t, in, s.shell)
	if _, err := in.tc.RunCommand(ctx, &terminalv1.RunCommandRequest{TerminalId: s.shell, Command: "echo after-$((50+5))"}); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, in, s.shell, "after-55")
	// The agent's session goes on.
	os.WriteFile(s.agentGo, nil, 0o600)
	r := resultOf(t, waitStep(t, s.agentRead, 3))
	if r.IsError || !strings.Contains(r.text(), s.build) {
		t.Errorf("the agent's list_terminals after the restart: %+v", r)
	}
}

// tabOf is the tab id as ListTerminals shows it, or nil.
func tabOf(t *testing.T, in *instance, id string) *terminalv1.Terminal {
	t.Helper()
	for _, tm := range in.list(t) {
		if tm.GetId() == id {
			return tm
		}
	}
	return nil
}

// TestTabsSurviveTerminaldKill kills terminald with SIGKILL and starts
// it again with `phantom up`: every tab is taken back.
func TestTabsSurviveTerminaldKill(t *testing.T) {
	s := setUpRestartScene(t)
	if err := syscall.Kill(s.terminaldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "terminald to die", func() (bool, string) {
		st, err := procfs.Default.Stat(s.terminaldPID)
		return err != nil || st.State == 'Z', ""
	})
	// While terminald is down: every program still runs, and one exits.
	for id, st := range s.leaders {
		if _, err := procfs.Default.Stat(st.PID); err != nil {
			t.Fatalf("tab %s's program (pid %d) died with terminald: %v", id, st.PID, err)
		}
	}
	os.WriteFile(s.flag, nil, 0o600)
	eventually(t, "the short tab's program to exit and be reaped", func() (bool, string) {
		_, err := procfs.Default.Stat(s.leaders[s.short].PID)
		return err != nil, ""
	})
	if out, err := s.in.run("up"); err != nil {
		t.Fatalf("phantom up after the kill: %v\n%s", err, out)
	}
	s.checkAfterRestart(t)
	// What the ring could not hold is said in the tab only when something
	// was lost: here nothing was.
	if strings.Contains(readAll(t, s.in, s.build), "is gone") {
		t.Errorf("the build tab says output was lost, but its ring held everything:\n%s", readAll(t, s.in, s.build))
	}
}

// TestUpgradeKeepsTabs hands the tabs over with `phantom upgrade`.
func TestUpgradeKeepsTabs(t *testing.T) {
	s := setUpRestartScene(t)
	os.WriteFile(s.flag, nil, 0o600) // exits around the hand-over
	if out, err := s.in.run("upgrade"); err != nil {
		t.Fatalf("phantom upgrade: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "not replaced") {
		t.Errorf("upgrade does not say the holder was not replaced:\n%s", out)
	}
	s.checkAfterRestart(t)
}

// TestUpgradeToRebuiltBinary: `phantom upgrade` run from a rebuilt
// binary elsewhere on disk moves terminald onto that binary, and every tab
// keeps running as with a plain upgrade.
func TestUpgradeToRebuiltBinary(t *testing.T) {
	s := setUpRestartScene(t)
	rebuilt := filepath.Join(t.TempDir(), "phantom")
	if out, err := exec.Command("go", "build", "-ldflags=-buildid=rebuilt-for-upgrade", "-o", rebuilt, ".").CombinedOutput(); err != nil {
		t.Fatalf("rebuild phantom: %v\n%s", err, out)
	}
	os.WriteFile(s.flag, nil, 0o600) // exits around the hand-over
	cmd := exec.Command(rebuilt, "upgrade")
	cmd.Env, cmd.Dir = s.in.env.Vars, s.in.env.Home
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("phantom upgrade from the rebuilt binary: %v\n%s", err, out)
	}
	s.checkAfterRestart(t)
	rec, err := daemon.ReadPIDFile(s.in.env.Layout.PIDFile("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(rec.PID) + "/exe"); err != nil || exe != rebuilt {
		t.Errorf("after the upgrade terminald runs %q (%v), want the rebuilt %s", exe, err, rebuilt)
	}
}

// TestRestoreSaysWhatTheRingLost fills a tab's ring past its size and
// checks the restored tab says how much is gone.
func TestRestoreSaysWhatTheRingLost(t *testing.T) {
	in := startPhantom(t)
	id := newTab(t, in, "--name", "flood", "--", "bash", "-c", `head -c 3000000 /dev/zero | tr '\0' x | fold -w 100; echo flood-done; sleep 600`)
	waitOutput(t, in, id, "flood-done")
	rec, err := daemon.ReadPIDFile(in.env.Layout.PIDFile("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(rec.PID, syscall.SIGKILL)
	eventually(t, "terminald to die", func() (bool, string) {
		st, err := procfs.Default.Stat(rec.PID)
		return err != nil || st.State == 'Z', ""
	})
	if out, err := in.run("up"); err != nil {
		t.Fatalf("phantom up after the kill: %v\n%s", err, out)
	}
	eventually(t, "the flood tab to say what its ring lost", func() (bool, string) {
		text := readAll(t, in, id)
		return strings.Contains(text, "before that is gone") && strings.Contains(text, "flood-done"), tail(text, 400)
	})
}

// TestAttachReconnects kills terminald under an attached client: the
// client says it reconnects, and once terminald is back it shows the tab
// again and typing reaches it.
func TestAttachReconnects(t *testing.T) {
	in := startPhantom(t)
	shell := in.list(t)[0].GetId()
	waitIdle(t, in, shell)
	c := in.attach(t, 100, 30, nil)
	c.send("echo attached-$((6*7))\r")
	c.waitText("attached-42")
	rec, err := daemon.ReadPIDFile(in.env.Layout.PIDFile("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(rec.PID, syscall.SIGKILL)
	c.waitText("reconnecting")
	if out, err := in.run("up"); err != nil {
		t.Fatalf("phantom up after the kill: %v\n%s", err, out)
	}
	c.waitFor("the tab again", func(text string) bool {
		return strings.Contains(text, "attached-42") && !strings.Contains(text, "reconnecting")
	})
	c.send("echo back-$((6*9))\r")
	c.waitText("back-54")
	// The upgrade path: terminald says it is shutting down, then returns.
	if out, err := in.run("upgrade"); err != nil {
		t.Fatalf("phantom upgrade: %v\n%s", err, out)
	}
	defer func() {
		if t.Failed() {
			c.mu.Lock()
			raw := c.raw.String()
			c.mu.Unlock()
			t.Logf("the client wrote, last 3000 bytes: %q", raw[max(0, len(raw)-3000):])
		}
	}()
	c.send("echo upgraded-$((7*7))\r")
	c.waitText("upgraded-49")
}

func newTab(t *testing.T, in *instance, args ...string) string {
	t.Helper()
	out, err := in.run(append([]string{"new"}, args...)...)
	if err != nil {
		t.Fatalf("phantom new %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// readAll reads a tab's whole scrollback and screen, page by page.
func readAll(t *testing.T, in *instance, id string) string {
	t.Helper()
	var pages []string
	cursor := ""
	for range 100 {
		r, err := in.tc.ReadOutput(tctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Lines: proto.Int32(100000),
			MaxBytes: proto.Int32(1 << 20), Cursor: cursor}, grpc.WaitForReady(true))
		if err != nil {
			t.Fatalf("read_output %s: %v", id, err)
		}
		pages = append([]string{strings.Join(r.GetLines(), "\n") + "\n"}, pages...)
		if cursor = r.GetOlderCursor(); cursor == "" {
			break
		}
	}
	return strings.Join(pages, "")
}

func waitOutput(t *testing.T, in *instance, id, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%q in tab %s", want, id), func() (bool, string) {
		text := readAll(t, in, id)
		return strings.Contains(text, want), tail(text, 400)
	})
}

func waitIdle(t *testing.T, in *instance, id string) {
	t.Helper()
	eventually(t, "tab "+id+" to be idle", func() (bool, string) {
		tm := tabOf(t, in, id)
		return tm.GetIdle(), fmt.Sprint(tm)
	})
}

// lastBuild is the highest build-N line the build tab shows.
func lastBuild(t *testing.T, in *instance, id string) int {
	t.Helper()
	best := 0
	for _, l := range strings.Split(readAll(t, in, id), "\n") {
		if n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(l), "build-")); err == nil && strings.HasPrefix(strings.TrimSpace(l), "build-") {
			best = max(best, n)
		}
	}
	return best
}

// holderPID is the pid of env's instance's holder (outside Phantom), or 0.
func holderPID(env *testenv.Env) int {
	pids := instanceProcesses(env.Layout, lineage.HolderByCommandLine(env.Layout.DaemonAddr("terminald")))
	if len(pids) == 0 {
		return 0
	}
	return pids[0]
}

// TestHolderRefusesFakes: a process inside Phantom can neither run a
// holder of the instance nor talk to the real one (to get every tab's
// terminal), whatever it says.
func TestHolderRefusesFakes(t *testing.T) {
	in := startPhantom(t)
	addr := in.env.Layout.DaemonAddr("terminald")
	dir := t.TempDir()
	id := newTab(t, in, "--name", "fake-holder", "--", "sh", "-c",
		`"$0" +holder --terminald "$1" --socket "$2/h.sock" --lock "$2/h.lock"; echo fake-holder-rc=$?; sleep 600`,
		phantomBin, addr, dir)
	waitOutput(t, in, id, "fake-holder-rc=1")
	if text := readAll(t, in, id); !strings.Contains(text, "inside Phantom") {
		t.Errorf("a holder started in a tab did not say why it refused:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "h.sock")); err == nil {
		t.Error("a holder started in a tab listens")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to talk to the holder from a tab")
	}
	sock := filepath.Join(in.env.Layout.Runtime, "holder.sock")
	script := `import socket,sys
s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET)
s.settimeout(10)
s.connect(sys.argv[1])
try:
    s.send(b'{"op":"hello","seq":1,"version":1}')
    s.send(b'{"op":"restore","seq":2}')
except OSError as e:
    print("send failed:", e)
for i in range(3):
    try:
        m = s.recv(65536)
    except OSError as e:
        print("recv failed:", e)
        break
    print("holder-said:", m.decode() or "EOF")
    if not m:
        break
`
	id2 := newTab(t, in, "--name", "holder-client", "--", "sh", "-c", `python3 -c "$0" "$1"; echo py-done; sleep 600`, script, sock)
	waitOutput(t, in, id2, "py-done")
	text := readAll(t, in, id2)
	// The holder writes its refusal and hangs up; when the client's own
	// messages are still unread at that moment, the kernel resets the
	// connection and the refusal itself may not arrive. Either way the
	// client must get nothing of the tabs.
	hungUp := strings.Contains(text, "refused") || strings.Contains(text, "Connection reset") || strings.Contains(text, "holder-said: EOF")
	if !hungUp || strings.Contains(text, `"op":"tab"`) {
		t.Errorf("a process in a tab was not refused by the holder:\n%s", text)
	}
}

// TestDownAfterKillStopsHolder: with terminald killed and never started
// again, `phantom down` still stops the holder, and with it every tab's
// processes — nothing of the tabs runs on outside Phantom.
func TestDownAfterKillStopsHolder(t *testing.T) {
	env, _ := up(t)
	id := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c", "sleep 100000 & sleep 100000"))
	ts, err := tabstate.Read(tabstate.Path(env.Layout.TabStateDir(), id))
	if err != nil {
		t.Fatal(err)
	}
	h := holderPID(env)
	if h == 0 {
		t.Fatal("no holder runs")
	}
	rec, err := daemon.ReadPIDFile(env.Layout.PIDFile("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(rec.PID, syscall.SIGKILL)
	mustPhantom(t, env, "down")
	for _, pid := range []int{h, ts.LeaderPID} {
		eventually(t, fmt.Sprintf("process %d to end", pid), func() (bool, string) {
			st, err := procfs.Default.Stat(pid)
			return err != nil || st.State == 'Z', fmt.Sprint(st)
		})
	}
	// The tab's background job was the holder's too: killed, not left.
	out, _ := exec.Command("pgrep", "-s", strconv.Itoa(ts.LeaderPID)).Output()
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("processes of the tab's session survive down: %s", out)
	}
}

// TestUpRightAfterDown: `up` right after `down`, while the old holder had
// an orphan to wait out: the new tabs go to a new holder, never to the one
// that is ending everything (down waits for the holder to exit, and a
// stopping holder no longer accepts).
func TestUpRightAfterDown(t *testing.T) {
	env, _ := up(t)
	old := holderPID(env)
	// An orphan in its own session that ignores SIGHUP: the old holder
	// waits out its grace for it before killing it.
	mustPhantom(t, env, "new", "--", "sh", "-c", `setsid -f sh -c "trap '' HUP; exec sleep 100000"; sleep 100000`)
	mustPhantom(t, env, "down")
	mustPhantom(t, env, "up")
	first, _ := tabs(t, env)[0]["id"].(string)
	ts, err := tabstate.Read(tabstate.Path(env.Layout.TabStateDir(), first))
	if err != nil {
		t.Fatal(err)
	}
	if h := holderPID(env); h == 0 || h == old {
		t.Fatalf("holder after down and up: pid %d (before: %d); want a new one", h, old)
	}
	// Give the old holder time to finish killing what it held: the new
	// tab's shell must not be among it.
	eventually(t, "the old holder to exit", func() (bool, string) {
		st, err := procfs.Default.Stat(old)
		return err != nil || st.State == 'Z', ""
	})
	if st, err := procfs.Default.Stat(ts.LeaderPID); err != nil || st.StartTime != ts.LeaderStart {
		t.Fatalf("the first tab's shell (pid %d) after down and up died: %v", ts.LeaderPID, err)
	}
}
