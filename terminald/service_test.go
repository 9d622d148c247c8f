package terminald

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/tabstate"
	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// instance is a terminald served over a real Unix socket, in-process so
// that tests can count its goroutines and descriptors.
type instance struct {
	c   terminalv1.TerminalServiceClient
	ws  *workspace.Workspace
	env *testenv.Env
	// addr is the daemon's listen address.
	addr string
}

func start(t *testing.T, shell string) *instance {
	t.Helper()
	env := testenv.New(t)
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shell = shell
	cfg.Agents["fake"] = []string{"sh", "-c", "echo fake agent running; exec sleep 1000"}
	ws, err := workspace.New(workspace.Options{Config: cfg, Layout: env.Layout, Env: env.Vars, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv, stopGuard, err := NewServer(ws, env.Layout, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	addr := env.Layout.DaemonAddr("terminald")
	lis, err := daemon.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	cc, err := daemon.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc.Close()
		ws.Shutdown()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		stopGuard()
	})
	return &instance{c: terminalv1.NewTerminalServiceClient(cc), ws: ws, env: env, addr: addr}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// eventually is testenv.Eventually.
var eventually = testenv.Eventually

func (in *instance) create(t *testing.T, r *terminalv1.CreateTerminalRequest) *terminalv1.Terminal {
	t.Helper()
	if r.Directory == "" {
		r.Directory = in.env.Home
	}
	resp, err := in.c.CreateTerminal(ctx(t), r)
	if err != nil {
		t.Fatalf("CreateTerminal(%v): %v", r, err)
	}
	return resp.GetTerminal()
}

func (in *instance) get(t *testing.T, id string) *terminalv1.Terminal {
	t.Helper()
	resp, err := in.c.ListTerminals(ctx(t), &terminalv1.ListTerminalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range resp.GetTerminals() {
		if tm.GetId() == id {
			return tm
		}
	}
	t.Fatalf("tab %s not in ListTerminals", id)
	return nil
}

func (in *instance) waitIdle(t *testing.T, id string) {
	t.Helper()
	eventually(t, "tab "+id+" idle", func() (bool, string) {
		tm := in.get(t, id)
		return tm.GetIdle(), fmt.Sprintf("%v", tm)
	})
}

func (in *instance) read(t *testing.T, id string, n int32) []string {
	t.Helper()
	resp, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Lines: &n})
	if err != nil {
		t.Fatalf("ReadOutput(%s): %v", id, err)
	}
	return resp.GetLines()
}

func (in *instance) waitOutput(t *testing.T, id, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%q in tab %s", want, id), func() (bool, string) {
		lines := in.read(t, id, 200)
		return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, want) }), strings.Join(lines, "\n")
	})
}

func wantCode(t *testing.T, err error, code codes.Code, inMsg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), inMsg) {
		t.Errorf("got %v (%q), want %v mentioning %q", st.Code(), st.Message(), code, inMsg)
	}
}

func TestShellTabRunCommandAndRead(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			path, err := exec.LookPath(sh)
			if err != nil {
				t.Skipf("%s not installed (scripts/setup installs it)", sh)
			}
			in := start(t, path)
			tab := in.create(t, &terminalv1.CreateTerminalRequest{Name: "work"})
			if tab.GetId() == "" || tab.GetWindowId() != "w1" || !tab.GetFocused() || tab.GetTitle() != "work" {
				t.Fatalf("created tab = %v", tab)
			}
			in.waitIdle(t, tab.GetId())
			if _, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: "echo \"id=$PHANTOM_TAB_ID\"; cd /tmp"}); err != nil {
				t.Fatal(err)
			}
			in.waitOutput(t, tab.GetId(), "id="+tab.GetId())
			in.waitIdle(t, tab.GetId())
			eventually(t, "directory /tmp", func() (bool, string) {
				tm := in.get(t, tab.GetId())
				return tm.GetDirectory() == "/tmp", tm.GetDirectory()
			})
			tm := in.get(t, tab.GetId())
			if tm.GetForegroundProcess().GetName() != sh || tm.GetForegroundProcess().GetPid() == 0 {
				t.Errorf("foreground_process = %v, want %s", tm.GetForegroundProcess(), sh)
			}

			// A busy tab refuses a command and names what runs there.
			if _, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: "sleep 30"}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "tab busy with sleep", func() (bool, string) {
				tm := in.get(t, tab.GetId())
				return !tm.GetIdle() && tm.GetForegroundProcess().GetName() == "sleep", fmt.Sprint(tm)
			})
			_, err = in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: "echo no"})
			wantCode(t, err, codes.FailedPrecondition, `"sleep"`)
		})
	}
}

func TestRunCommandRefusesMoreThanOneLine(t *testing.T) {
	in := start(t, "/bin/bash")
	tab := in.create(t, &terminalv1.CreateTerminalRequest{})
	in.waitIdle(t, tab.GetId())
	for _, cmd := range []string{"echo a\necho b", "echo a\r", "echo \x03", "echo \x1b[31m", "echo \u009b"} {
		_, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: cmd})
		wantCode(t, err, codes.InvalidArgument, "command")
	}
	// Nothing was typed: the tab is still idle.
	if !in.get(t, tab.GetId()).GetIdle() {
		t.Error("tab not idle after refused commands")
	}
}

func TestBadRequestsNameTheField(t *testing.T) {
	in := start(t, "/bin/bash")
	zero := int32(0)
	c := ctx(t)
	_, err := in.c.ReadOutput(c, &terminalv1.ReadOutputRequest{})
	wantCode(t, err, codes.InvalidArgument, "terminal_id")
	_, err = in.c.ReadOutput(c, &terminalv1.ReadOutputRequest{TerminalId: "t1", Lines: &zero})
	wantCode(t, err, codes.InvalidArgument, "lines")
	_, err = in.c.ReadOutput(c, &terminalv1.ReadOutputRequest{TerminalId: "t99"})
	wantCode(t, err, codes.NotFound, "t99")
	_, err = in.c.CreateTerminal(c, &terminalv1.CreateTerminalRequest{Directory: "relative/dir"})
	wantCode(t, err, codes.InvalidArgument, "directory")
	_, err = in.c.CreateTerminal(c, &terminalv1.CreateTerminalRequest{Directory: "/nonexistent/dir"})
	wantCode(t, err, codes.InvalidArgument, "directory")
	_, err = in.c.CreateTerminal(c, &terminalv1.CreateTerminalRequest{Directory: "/", Agent: "nosuchagent"})
	wantCode(t, err, codes.InvalidArgument, "agent")
	_, err = in.c.CreateTerminal(c, &terminalv1.CreateTerminalRequest{Directory: "/", GroupId: "g9"})
	wantCode(t, err, codes.NotFound, "g9")
	_, err = in.c.CreateTerminal(c, &terminalv1.CreateTerminalRequest{Directory: "/", Command: []string{"/no/such/program"}})
	wantCode(t, err, codes.FailedPrecondition, "/no/such/program")
	_, err = in.c.CreateTerminal(c, &terminalv1.CreateTerminalRequest{Directory: "/", Cols: 5000})
	wantCode(t, err, codes.InvalidArgument, "cols")
	_, err = in.c.FocusTerminal(c, &terminalv1.FocusTerminalRequest{TerminalId: "nope"})
	wantCode(t, err, codes.NotFound, "nope")
	_, err = in.c.UpdateTerminal(c, &terminalv1.UpdateTerminalRequest{TerminalId: "t1", Color: proto.String("red")})
	wantCode(t, err, codes.NotFound, "t1")
	_, err = in.c.CreateGroup(c, &terminalv1.CreateGroupRequest{Name: ""})
	wantCode(t, err, codes.InvalidArgument, "name")
	_, err = in.c.CreateGroup(c, &terminalv1.CreateGroupRequest{Name: "x", Color: "ultraviolet"})
	wantCode(t, err, codes.InvalidArgument, "color")
	_, err = in.c.ResizeTerminal(c, &terminalv1.ResizeTerminalRequest{TerminalId: "t1", Cols: 1, Rows: 1})
	wantCode(t, err, codes.InvalidArgument, "cols")
	_, err = in.c.MoveToGroup(c, &terminalv1.MoveToGroupRequest{TerminalId: "t1", GroupId: "g1"})
	wantCode(t, err, codes.NotFound, "t1")
}

func TestGroupsWindowsAndLooks(t *testing.T) {
	in := start(t, "/bin/bash")
	c := ctx(t)
	colors, err := in.c.ListThemeColors(c, &terminalv1.ListThemeColorsRequest{})
	if err != nil || len(colors.GetColors()) < 8 {
		t.Fatalf("ListThemeColors = %v, %v", colors, err)
	}
	g, err := in.c.CreateGroup(c, &terminalv1.CreateGroupRequest{Name: "backend", Color: "green"})
	if err != nil {
		t.Fatal(err)
	}
	tab := in.create(t, &terminalv1.CreateTerminalRequest{GroupId: g.GetGroup().GetId()})
	other := in.create(t, &terminalv1.CreateTerminalRequest{})
	if tab.GetGroupId() != g.GetGroup().GetId() {
		t.Errorf("tab group = %q, want %q", tab.GetGroupId(), g.GetGroup().GetId())
	}
	if _, err := in.c.MoveToGroup(c, &terminalv1.MoveToGroupRequest{TerminalId: other.GetId(), GroupId: g.GetGroup().GetId()}); err != nil {
		t.Fatal(err)
	}
	ug, err := in.c.UpdateGroup(c, &terminalv1.UpdateGroupRequest{GroupId: g.GetGroup().GetId(), Name: proto.String("api"), Color: proto.String("purple")})
	if err != nil {
		t.Fatal(err)
	}
	if got := ug.GetGroup(); got.GetName() != "api" || got.GetColor() != "purple" || !slices.Equal(got.GetTerminalIds(), []string{tab.GetId(), other.GetId()}) {
		t.Errorf("updated group = %v", got)
	}
	if _, err := in.c.MoveToGroup(c, &terminalv1.MoveToGroupRequest{TerminalId: other.GetId()}); err != nil {
		t.Fatal(err)
	}
	groups, _ := in.c.ListGroups(c, &terminalv1.ListGroupsRequest{})
	if len(groups.GetGroups()) != 1 || !slices.Equal(groups.GetGroups()[0].GetTerminalIds(), []string{tab.GetId()}) {
		t.Errorf("ListGroups = %v", groups)
	}
	up, err := in.c.UpdateTerminal(c, &terminalv1.UpdateTerminalRequest{TerminalId: tab.GetId(), Name: proto.String("db"), Icon: proto.String("🐘"), Color: proto.String("blue")})
	if err != nil {
		t.Fatal(err)
	}
	if tm := up.GetTerminal(); tm.GetName() != "db" || tm.GetTitle() != "db" || tm.GetIcon() != "🐘" || tm.GetColor() != "blue" {
		t.Errorf("updated tab = %v", tm)
	}
	if _, err := in.c.FocusTerminal(c, &terminalv1.FocusTerminalRequest{TerminalId: other.GetId()}); err != nil {
		t.Fatal(err)
	}
	if in.get(t, tab.GetId()).GetFocused() || !in.get(t, other.GetId()).GetFocused() {
		t.Error("focus did not move")
	}
	w2, err := in.c.CreateWindow(c, &terminalv1.CreateWindowRequest{Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	inW2 := in.create(t, &terminalv1.CreateTerminalRequest{WindowId: w2.GetWindow().GetId()})
	_, err = in.c.MoveToGroup(c, &terminalv1.MoveToGroupRequest{TerminalId: inW2.GetId(), GroupId: g.GetGroup().GetId()})
	wantCode(t, err, codes.InvalidArgument, "window")
	wins, _ := in.c.ListWindows(c, &terminalv1.ListWindowsRequest{})
	if len(wins.GetWindows()) != 2 || wins.GetWindows()[1].GetFocusedTerminalId() != inW2.GetId() {
		t.Errorf("ListWindows = %v", wins)
	}
}

func TestExitedTabKeepsScreenAndStatus(t *testing.T) {
	in := start(t, "/bin/bash")
	tab := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"sh", "-c", "printf 'bye\\033[1;31m red\\033[0m\\n'; exit 3"}})
	eventually(t, "exit", func() (bool, string) {
		tm := in.get(t, tab.GetId())
		return tm.GetExited(), fmt.Sprint(tm)
	})
	tm := in.get(t, tab.GetId())
	if tm.GetExitCode() != 3 || tm.GetIdle() || tm.GetDirectory() == "" {
		t.Errorf("exited tab = %v, want exit_code 3, not idle, a directory", tm)
	}
	if lines := in.read(t, tab.GetId(), 10); !slices.Contains(lines, "bye red") {
		t.Errorf("exited tab's screen = %q, want a line \"bye red\"", lines)
	}
	_, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: "ls"})
	wantCode(t, err, codes.FailedPrecondition, "exited")
	if _, err := in.c.CloseTerminal(ctx(t), &terminalv1.CloseTerminalRequest{TerminalId: tab.GetId()}); err != nil {
		t.Fatal(err)
	}
	_, err = in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: tab.GetId()})
	wantCode(t, err, codes.NotFound, tab.GetId())
}

func TestTabStateFileAndEnvironment(t *testing.T) {
	in := start(t, "/bin/bash")
	tab := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"sh", "-c", "echo \"$PHANTOM_TAB_ID|$PHANTOM_TAB_STATE|$PHANTOM_MCP_SOCKET|$TERM\"; tty; exec sleep 1000"}})
	want := strings.Join([]string{tab.GetId(), tabstate.Path(in.env.Layout.TabStateDir(), tab.GetId()), in.env.Layout.MCPSocket, "xterm-256color"}, "|")
	in.waitOutput(t, tab.GetId(), want)
	path := tabstate.Path(in.env.Layout.TabStateDir(), tab.GetId())
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("tab-state file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("tab-state dir mode %v, want 0700", di.Mode().Perm())
	}
	st, err := tabstate.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	in.waitOutput(t, tab.GetId(), st.PTY)
	lines := in.read(t, tab.GetId(), 10)
	if st.TabID != tab.GetId() || st.Session != st.LeaderPID || st.LeaderStart == 0 || st.TTYNr == 0 || !slices.Contains(lines, st.PTY) {
		t.Errorf("tab state %+v; tab printed %q", st, lines)
	}
	if _, err := in.c.CloseTerminal(ctx(t), &terminalv1.CloseTerminalRequest{TerminalId: tab.GetId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("tab-state file still there after close: %v", err)
	}
}

// TestAgentTab checks agent tabs are sandboxed or not opened at all: this
// in-process terminald has no sandbox launcher (the phantom binary), so
// it refuses them rather than run an agent unsandboxed. cmd/phantom's
// TestSandboxTab runs agent tabs through the real launcher.
func TestAgentTab(t *testing.T) {
	in := start(t, "/bin/bash")
	_, err := in.c.CreateTerminal(ctx(t), &terminalv1.CreateTerminalRequest{Agent: "fake"})
	wantCode(t, err, codes.FailedPrecondition, "launcher")
	_, err = in.c.CreateTerminal(ctx(t), &terminalv1.CreateTerminalRequest{Directory: "/", Agent: "fake", Command: []string{"ls"}})
	wantCode(t, err, codes.InvalidArgument, "agent")
}

func TestResize(t *testing.T) {
	in := start(t, "/bin/bash")
	tab := in.create(t, &terminalv1.CreateTerminalRequest{Cols: 100, Rows: 30})
	in.waitIdle(t, tab.GetId())
	if _, err := in.c.ResizeTerminal(ctx(t), &terminalv1.ResizeTerminalRequest{TerminalId: tab.GetId(), Cols: 120, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: "echo size=$(stty size)"}); err != nil {
		t.Fatal(err)
	}
	in.waitOutput(t, tab.GetId(), "size=40 120")
	if tm := in.get(t, tab.GetId()); tm.GetCols() != 120 || tm.GetRows() != 40 {
		t.Errorf("size = %dx%d, want 120x40", tm.GetCols(), tm.GetRows())
	}
}

func TestDevServerPorts(t *testing.T) {
	in := start(t, "/bin/bash")
	script := `import socket,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print("port", s.getsockname()[1], flush=True); time.sleep(1000)`
	tab := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"python3", "-c", script}})
	var port string
	eventually(t, "port printed", func() (bool, string) {
		for _, l := range in.read(t, tab.GetId(), 5) {
			if p, ok := strings.CutPrefix(l, "port "); ok {
				port = p
				return true, l
			}
		}
		return false, ""
	})
	quiet := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"sleep", "1000"}})
	eventually(t, "dev_server_ports", func() (bool, string) {
		tm := in.get(t, tab.GetId())
		ps := tm.GetDevServerPorts()
		return len(ps) == 1 && fmt.Sprint(ps[0]) == port, fmt.Sprint(ps)
	})
	if ps := in.get(t, quiet.GetId()).GetDevServerPorts(); len(ps) != 0 {
		t.Errorf("quiet tab has ports %v", ps)
	}
}

func TestWatchStreamsChanges(t *testing.T) {
	in := start(t, "/bin/bash")
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := in.c.WatchTerminals(c, &terminalv1.WatchTerminalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The stream is established once the first event arrives; create until
	// then is not observed, so wait for the subscription via a probe.
	time.Sleep(100 * time.Millisecond)
	tab := in.create(t, &terminalv1.CreateTerminalRequest{})
	in.waitIdle(t, tab.GetId())
	if _, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: "sleep 0.3"}); err != nil {
		t.Fatal(err)
	}
	in.waitIdle(t, tab.GetId())
	if _, err := in.c.CloseTerminal(ctx(t), &terminalv1.CloseTerminalRequest{TerminalId: tab.GetId()}); err != nil {
		t.Fatal(err)
	}
	seen := map[terminalv1.WatchTerminalsResponse_Kind]int{}
	idleSeq := []bool{}
	for seen[terminalv1.WatchTerminalsResponse_KIND_CLOSED] == 0 {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv: %v (seen %v)", err, seen)
		}
		if ev.GetTerminal().GetId() != tab.GetId() {
			continue
		}
		seen[ev.GetKind()]++
		if ev.GetKind() == terminalv1.WatchTerminalsResponse_KIND_CREATED && ev.GetTerminal().GetIdle() {
			// The first prompt came before the tab was registered.
			idleSeq = append(idleSeq, true)
		}
		if ev.GetKind() == terminalv1.WatchTerminalsResponse_KIND_IDLE_CHANGED {
			idleSeq = append(idleSeq, ev.GetTerminal().GetIdle())
		}
	}
	if seen[terminalv1.WatchTerminalsResponse_KIND_CREATED] != 1 {
		t.Errorf("created events = %d, want 1", seen[terminalv1.WatchTerminalsResponse_KIND_CREATED])
	}
	// idle (first prompt), busy (sleep), idle again.
	if !slices.Equal(idleSeq, []bool{true, false, true}) && !slices.Equal(idleSeq, []bool{true, false, true, false}) {
		t.Errorf("idle changes = %v, want [true false true]", idleSeq)
	}
}

func TestRealProgramsInATab(t *testing.T) {
	in := start(t, "/bin/bash")
	file := filepath.Join(in.env.Home, "notes.txt")
	var content strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&content, "line number %d of the notes\n", i)
	}
	if err := os.WriteFile(file, []byte(content.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{"vim", "less"} {
		t.Run(prog, func(t *testing.T) {
			if _, err := exec.LookPath(prog); err != nil {
				t.Skipf("%s not installed (scripts/setup installs it)", prog)
			}
			tab := in.create(t, &terminalv1.CreateTerminalRequest{})
			in.waitIdle(t, tab.GetId())
			args := prog + " " + file
			if prog == "vim" {
				args = "vim -u NONE -N " + file
			}
			if _, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: tab.GetId(), Command: args}); err != nil {
				t.Fatal(err)
			}
			eventually(t, prog+" showing the file", func() (bool, string) {
				lines := in.read(t, tab.GetId(), 24)
				return len(lines) > 5 && lines[0] == "line number 1 of the notes" && slices.Contains(lines, "line number 20 of the notes"), strings.Join(lines, "\n")
			})
			if tm := in.get(t, tab.GetId()); tm.GetIdle() || tm.GetForegroundProcess().GetName() != prog {
				t.Errorf("while %s runs: idle=%v fg=%v", prog, tm.GetIdle(), tm.GetForegroundProcess())
			}
			quit := ":q\r"
			if prog == "less" {
				quit = "q"
			}
			if err := in.ws.Input(tab.GetId(), []byte(quit)); err != nil {
				t.Fatal(err)
			}
			in.waitIdle(t, tab.GetId())
			// Back on the main screen: the command line is visible again.
			lines := in.read(t, tab.GetId(), 24)
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, args) }) {
				t.Errorf("after quitting %s the shell screen = %q", prog, lines)
			}
		})
	}
}
