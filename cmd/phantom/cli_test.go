package main

// End-to-end tests of the CLI at tmux level (issue 16, item 4): targets
// by id, name and position, send, groups and windows, directories, and
// one error format with documented exit statuses.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// leaks are words of libraries and gRPC that must never reach the human.
var leaks = []string{"rpc error", "code =", "desc =", "strconv", "validation error", "(notfound)", "(invalidargument)",
	"transport:", "dial unix", "arg(s)"}

// checkFailure fails unless r failed with status code, one line on stderr
// in the shared format, free of library wording.
func checkFailure(t *testing.T, args []string, r result, code int, says string) {
	t.Helper()
	line := strings.TrimSuffix(r.stderr, "\n")
	switch {
	case r.code != code:
		t.Errorf("phantom %s: exit %d, want %d\n%v", strings.Join(args, " "), r.code, code, r)
	case strings.Contains(line, "\n") || !strings.HasPrefix(line, "phantom: ") || !strings.Contains(line, " — "):
		t.Errorf("phantom %s: stderr is not one line `phantom: what failed: why — what to do`:\n%s", strings.Join(args, " "), r.stderr)
	case !strings.Contains(line, says):
		t.Errorf("phantom %s: stderr does not say %q:\n%s", strings.Join(args, " "), says, r.stderr)
	}
	for _, l := range leaks {
		if strings.Contains(line, l) {
			t.Errorf("phantom %s: stderr leaks %q:\n%s", strings.Join(args, " "), l, r.stderr)
		}
	}
}

// TestCLIErrorsExitCodes runs every kind of failure through the real
// binary and checks its message and exit status.
func TestCLIErrorsExitCodes(t *testing.T) {
	env := testenv.New(t)
	// Not running: status 3, however the command was called.
	for _, args := range [][]string{{"ls"}, {"read", "t1"}, {"send", "1", "x"}, {"window", "ls"}} {
		checkFailure(t, args, phantom(t, env, args...), exitNotRunning, "Phantom is not running")
	}
	mustPhantom(t, env, "up")
	t.Cleanup(func() { phantom(t, env, "down") })
	mustPhantom(t, env, "new", "--name", "twin", "--", "sleep", "1000")
	mustPhantom(t, env, "new", "--name", "twin", "--", "sleep", "1000")
	tests := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"bogus"}, exitUsage, `unknown command "bogus"`},
		{[]string{"focs", "t1"}, exitUsage, `did you mean focus?`},
		{[]string{"group", "bogus"}, exitUsage, `unknown command "bogus" for "phantom group"`},
		{[]string{"read"}, exitUsage, "takes 1 argument, got 0"},
		{[]string{"read", "t1", "--bogus"}, exitUsage, "unknown flag: --bogus"},
		{[]string{"read", "t1", "-n", "abc"}, exitUsage, `-n/--lines takes a whole number, not "abc"`},
		{[]string{"read", "t1", "-n", "0"}, exitUsage, "lines must be greater than or equal to 1"},
		{[]string{"run", "t1", "ls"}, exitUsage, "after --"},
		{[]string{"read", "twin"}, exitUsage, `"twin" names 2 tabs: t2 (main:2), t3 (main:3)`},
		{[]string{"read", "t99"}, exitNotFound, `tab "t99" not found`},
		{[]string{"read", "nothing-called-so"}, exitNotFound, `no tab or window is called "nothing-called-so"`},
		{[]string{"close", "main:9"}, exitNotFound, "window main shows 3 entries on its status line, so no 9"},
		{[]string{"send", "w7:1", "x"}, exitNotFound, `window "w7" not found`},
		{[]string{"window", "rename", "nowin", "x"}, exitNotFound, `window "nowin" not found`},
		{[]string{"window", "close"}, exitUsage, "takes 1 argument, got 0"},
		{[]string{"window", "close", "nowin"}, exitNotFound, `window "nowin" not found`},
		{[]string{"window", "close", "main"}, exitFailure, "is the only window"},
		{[]string{"window", "move", "t1"}, exitUsage, "takes 2 arguments, got 1"},
		{[]string{"window", "move", "t99", "main"}, exitNotFound, `tab "t99" not found`},
		{[]string{"window", "move", "1", "nowin"}, exitNotFound, `window "nowin" not found`},
		{[]string{"group", "rename", "nogroup", "x"}, exitNotFound, `group "nogroup" not found`},
		{[]string{"new", "--dir", "no/such/dir"}, exitUsage, "no/such/dir"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			checkFailure(t, tc.args, phantom(t, env, tc.args...), tc.code, tc.says)
		})
	}
	if help := mustPhantom(t, env, "--help"); !strings.Contains(help, "Exit status:") || !strings.Contains(help, "5  refused") {
		t.Errorf("phantom --help does not list the exit statuses:\n%s", help)
	}
}

// TestCLITargets names tabs and windows every way the status line and ls
// show them, across read, rename, focus, close and new --window.
func TestCLITargets(t *testing.T) {
	env, _ := up(t)
	shell, _ := settledShell(t, env)
	mustPhantom(t, env, "window", "new", "build")
	if out := mustPhantom(t, env, "window", "ls"); !strings.Contains(out, "build") || !strings.Contains(out, "main") {
		t.Fatalf("window ls:\n%s", out)
	}
	mustPhantom(t, env, "window", "rename", "build", "builds")
	b1 := strings.TrimSpace(mustPhantom(t, env, "new", "--window", "builds", "--name", "web", "--", "sh", "-c", "echo marker-web; sleep 1000"))
	b2 := strings.TrimSpace(mustPhantom(t, env, "new", "--window", "builds", "--", "sh", "-c", "echo marker-second; sleep 1000"))
	if ls := mustPhantom(t, env, "ls"); !strings.Contains(ls, "builds:1") || !strings.Contains(ls, "builds:2") || !strings.Contains(ls, "main:1") {
		t.Errorf("phantom ls does not show the tabs' places (builds:1):\n%s", ls)
	}
	reads := []struct{ arg, want string }{
		{b1, "marker-web"},         // an id
		{"web", "marker-web"},      // a name
		{"builds:1", "marker-web"}, // window name and position
		{"builds:2", "marker-second"},
		{"builds:web", "marker-web"}, // a tab name within a window
		{"w2:2", "marker-second"},    // window id and position
	}
	for _, r := range reads {
		eventually(t, "phantom read "+r.arg+" to show "+r.want, func() (bool, string) {
			out := mustPhantom(t, env, "read", r.arg)
			return strings.Contains(out, r.want), out
		})
	}
	// A bare position counts in the window of the tab the command runs
	// in: PHANTOM_TAB_ID says which (for naming only; it grants nothing).
	inBuilds := *env
	inBuilds.Vars = append(append([]string(nil), env.Vars...), "PHANTOM_TAB_ID="+b2)
	if out := mustPhantom(t, &inBuilds, "read", "1"); !strings.Contains(out, "marker-web") {
		t.Errorf("phantom read 1 from a tab of window builds:\n%s", out)
	}
	mustPhantom(t, env, "rename", "builds:2", "second")
	if got := tabByID(tabs(t, env), b2)["name"]; got != "second" {
		t.Errorf("after phantom rename builds:2 second, the tab's name is %v", got)
	}
	mustPhantom(t, env, "focus", "second")
	if got := tabByID(tabs(t, env), b2)["focused"]; got != true {
		t.Errorf("after phantom focus second, %s is not focused", b2)
	}
	mustPhantom(t, env, "close", "builds:web")
	mustPhantom(t, env, "close", "second")
	if tabByID(tabs(t, env), b1) != nil || tabByID(tabs(t, env), b2) != nil {
		t.Errorf("close by name and position left a tab:\n%s", mustPhantom(t, env, "ls"))
	}
	mustPhantom(t, env, "window", "ls")
	if out := mustPhantom(t, env, "read", "main:1"); out != mustPhantom(t, env, "read", shell) {
		t.Errorf("read main:1 is not read %s", shell)
	}
}

// TestCLIGroupsAndDirs covers phantom group and new's relative and ~
// directories.
func TestCLIGroupsAndDirs(t *testing.T) {
	env, _ := up(t)
	g := strings.TrimSpace(mustPhantom(t, env, "group", "new", "api"))
	mustPhantom(t, env, "group", "rename", "api", "backend")
	var groups struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal([]byte(mustPhantom(t, env, "group", "ls", "--json")), &groups); err != nil || len(groups.Groups) != 1 ||
		groups.Groups[0]["name"] != "backend" || groups.Groups[0]["id"] != g {
		t.Fatalf("group ls --json after new api and rename: %v %v", groups, err)
	}
	sub := filepath.Join(filepath.Dir(env.Home), "sibling")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	dirs := []struct{ flag, want string }{
		{".", env.Home},
		{"~", env.Home},
		{"~/", env.Home},
		{"../sibling", sub},
	}
	for _, d := range dirs {
		id := strings.TrimSpace(mustPhantom(t, env, "new", "--dir", d.flag, "--group", "backend", "--", "sleep", "1000"))
		tab := tabByID(tabs(t, env), id)
		if tab["directory"] != d.want || tab["group_id"] != g {
			t.Errorf("new --dir %s --group backend: directory %v, group %v; want %s, %s", d.flag, tab["directory"], tab["group_id"], d.want, g)
		}
		mustPhantom(t, env, "group", "move", id)
		if got := tabByID(tabs(t, env), id)["group_id"]; got != "" {
			t.Errorf("group move %s (no group) left it in %v", id, got)
		}
		mustPhantom(t, env, "group", "move", id, g)
		if got := tabByID(tabs(t, env), id)["group_id"]; got != g {
			t.Errorf("group move %s %s: group %v", id, g, got)
		}
	}
}

// TestCLISend types text and named keys into tabs from the human's
// terminal: a line with Enter runs, C-c stops a busy program.
func TestCLISend(t *testing.T) {
	env, _ := up(t)
	shell, _ := settledShell(t, env)
	mustPhantom(t, env, "send", "1", "echo sent-$((6*7))", "Enter")
	eventually(t, "the shell to run what send typed", func() (bool, string) {
		out := mustPhantom(t, env, "read", shell)
		return strings.Contains(out, "sent-42"), out
	})
	mustPhantom(t, env, "send", shell, "sleep 1000", "Enter")
	eventually(t, "sleep to run in "+shell, func() (bool, string) {
		return tabByID(tabs(t, env), shell)["idle"] == false, mustPhantom(t, env, "ls")
	})
	mustPhantom(t, env, "send", shell, "C-c")
	eventually(t, "C-c to stop sleep and give the prompt back", func() (bool, string) {
		return tabByID(tabs(t, env), shell)["idle"] == true, mustPhantom(t, env, "ls")
	})
	// -l types key names as words.
	mustPhantom(t, env, "send", "-l", shell, "echo", " ", "Enter")
	mustPhantom(t, env, "send", shell, "Enter")
	eventually(t, "send -l to type the word Enter", func() (bool, string) {
		out := mustPhantom(t, env, "read", shell)
		return strings.Contains(out, "\nEnter\n"), out
	})
}

// TestAttachByWindowName: `phantom attach build` shows window build.
func TestAttachByWindowName(t *testing.T) {
	in := startPhantom(t)
	if out, err := in.run("window", "new", "build"); err != nil {
		t.Fatalf("window new: %v\n%s", err, out)
	}
	if out, err := in.run("new", "--window", "build", "--", "sh", "-c", "echo in-build-window; sleep 1000"); err != nil {
		t.Fatalf("new --window build: %v\n%s", err, out)
	}
	c := in.attach(t, 80, 24, nil, "build")
	c.waitText("in-build-window")
	c.waitStatus("the window's name", func(s string) bool { return strings.Contains(s, "build") })
	c.send(prefix + "d")
	if code, out := c.wait(); code != 0 {
		t.Errorf("attach build then detach: exit %d\n%s", code, out)
	}
}

// TestAdversarialSendAsksHuman: `phantom send` from a real tab into the
// human's shell goes through send_keys's permission path. The sheet
// shows the keys exactly (Enter included); denied, nothing is typed and
// send exits 5 after telling the human it waits for them. Other methods
// of the human's stay refused outright.
func TestAdversarialSendAsksHuman(t *testing.T) {
	env := adversaryUp(t)
	a := newAttacker(t, env, "attacker")
	human, before := settledShell(t, env)
	j := a.start(shellCmd(phantomBin, "send", human, "echo pwned", "Enter"))
	s := asksHuman(t, env, j, a.tab, "send_keys", "phantom send from a tab")
	if subject, _ := s["subject"].(string); !strings.Contains(subject, "echo pwned␍") {
		t.Errorf("the sheet does not show the keys, Enter (␍) included, as they would be typed:\n%v", s)
	}
	eventually(t, "send to tell the human it waits for them", func() (bool, string) {
		return strings.Contains(j.output(), "phantom: waiting for you to allow typing into tab "+human), j.output()
	})
	deny(t, env, s)
	r := j.wait()
	if r.code != exitRefused || !refused(r) {
		t.Errorf("phantom send, denied: want exit %d and a refusal, got %v", exitRefused, r)
	}
	unchangedOutput(t, env, human, before, "a denied phantom send")

	// read waits on its sheet the same way, and says so with the tab's
	// place on the status line. Inside a tab, windows go by id: their
	// names are the human's, as for agents. (Another tab: the denial
	// turns the first away for a minute without a sheet.)
	reader := newAttacker(t, env, "reader")
	j = reader.start(shellCmd(phantomBin, "read", "w1:1"))
	s = asksHuman(t, env, j, reader.tab, "read_output", "phantom read from a tab")
	eventually(t, "read to tell the human it waits for them", func() (bool, string) {
		return strings.Contains(j.output(), "phantom: waiting for you to allow reading tab "+human+" (w1:1)"), j.output()
	})
	deny(t, env, s)
	if r := j.wait(); r.code != exitRefused || strings.Contains(r.out, "$ ") {
		t.Errorf("phantom read, denied: want exit %d and nothing of the tab, got %v", exitRefused, r)
	}

	// Renaming windows is no tool: refused without a sheet. (Closing a
	// tab is close_terminal, which asks: TestAdversarialSendKeysAround.)
	for _, args := range [][]string{{"window", "rename", "w1", "evil"}} {
		r = a.run(shellCmd(append([]string{phantomBin}, args...)...))
		if r.code != exitRefused || !refused(r) {
			t.Errorf("phantom %s from a tab: want exit %d and a refusal, got %v", strings.Join(args, " "), exitRefused, r)
		}
	}
	if out := mustPhantom(t, env, "window", "ls"); strings.Contains(out, "evil") || tabByID(tabs(t, env), human) == nil {
		t.Errorf("after the refused calls, the windows are:\n%s", out)
	}
}
