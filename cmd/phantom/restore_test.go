package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/phantom-dev/phantom/internal/daemon"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/sandbox"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// must runs the CLI and fails the test on an error.
func (in *instance) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := in.run(args...)
	if err != nil {
		t.Fatalf("phantom %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// downUp stops the instance and starts it again, as a reboot would (the
// holder ends with down: nothing is kept alive), and returns what up
// printed.
func (in *instance) downUp(t *testing.T) string {
	t.Helper()
	in.must(t, "down")
	return in.must(t, "up")
}

// sessionFile is the instance's saved session.
func (in *instance) sessionFile() string { return workspace.SessionPath(in.env.Layout) }

// TestRestoreSession: windows with their names, tabs with names and
// directories (--dir, rename, a cd at the prompt), a group, a split made
// in attach, and one marked command; after down and up all of it is back
// — checked with ls, window ls, the tab list and a new attach in a real
// outer terminal — and only the marked command ran again.
func TestRestoreSession(t *testing.T) {
	in := startPhantom(t)
	home := in.env.Home
	proj, sub, logsDir := filepath.Join(home, "proj"), filepath.Join(home, "proj", "sub"), filepath.Join(home, "logs")
	for _, d := range []string{sub, logsDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	first := in.list(t)[0].GetId()
	in.must(t, "rename", first, "home")
	build := in.must(t, "new", "--dir", proj, "--name", "build")
	in.must(t, "group", "new", "backend")
	in.must(t, "group", "move", build, "backend")
	in.must(t, "window", "new", "ci")
	logs := in.must(t, "new", "--window", "ci", "--dir", logsDir, "--name", "logs")
	in.must(t, "read", first, "--wait-for", "idle")
	in.must(t, "run", first, "--wait=20", "--", "cd", sub)

	// A split of window main, made as a human does: prefix % in attach.
	o := in.attachOuter(t, 81, 24, nil, "main")
	o.waitFor("the status line", func(string) bool { return strings.Contains(o.status(), "home") })
	o.prefix("%")
	o.waitFor("two panes side by side", func(s string) bool { return strings.Contains(s, "│") })
	var split string
	eventually(t, "the split's new tab", func() (bool, string) {
		for _, tm := range in.list(t) {
			if !slices.Contains([]string{first, build, logs}, tm.GetId()) {
				split = tm.GetId()
			}
		}
		return split != "", ""
	})
	o.prefix("d")
	eventually(t, "attach to end on detach", func() (bool, string) { done, _ := o.exited(); return done, o.screen() })

	// One marked command, one unmarked command that ran.
	kept := "echo kept-$((6*7)) >> " + filepath.Join(proj, "marker")
	if out := in.must(t, "keep-command", "build", "on", kept); !strings.Contains(out, "runs again when restored: "+kept+" (in "+proj+")") {
		t.Errorf("keep-command printed %q", out)
	}
	// The mark lives with the tab: an upgrade (the holder keeps the tabs)
	// keeps it too.
	in.must(t, "upgrade")
	if out := in.must(t, "keep-command", "build"); !strings.Contains(out, kept) {
		t.Errorf("after phantom upgrade, keep-command build printed %q", out)
	}
	in.must(t, "read", logs, "--wait-for", "idle")
	in.must(t, "run", logs, "--wait=20", "--", "echo unmarked >> ran")
	if out := in.must(t, "ls"); !strings.Contains(out, "KEEP") || !strings.Contains(lineOf(out, "build"), "cmd") || strings.Contains(lineOf(out, "logs"), "cmd") {
		t.Errorf("ls does not show the mark on build only:\n%s", out)
	}
	// The cd is saved once the shell is back at its prompt.
	eventually(t, "the cd in the saved session", func() (bool, string) {
		b, _ := os.ReadFile(in.sessionFile())
		return strings.Contains(string(b), `"kernel_dir": "`+sub+`"`), string(b)
	})
	before := in.list(t)
	windowsBefore := in.must(t, "window", "ls")

	out := in.downUp(t)
	if !strings.Contains(out, "restored 4 tabs in 2 windows from "+in.sessionFile()) ||
		!strings.Contains(out, "running again, as you marked it: "+build+" (build): "+kept) {
		t.Errorf("up printed:\n%s\nwant it to say what it restored and which command runs again", out)
	}
	after := in.list(t)
	if len(after) != len(before) {
		t.Fatalf("after down and up: %d tabs, want %d", len(after), len(before))
	}
	for i, b := range before {
		a := after[i]
		if a.GetId() != b.GetId() || a.GetName() != b.GetName() || a.GetWindowId() != b.GetWindowId() || a.GetGroupId() != b.GetGroupId() ||
			a.GetFocused() != b.GetFocused() || a.GetKeepsCommand() != (a.GetId() == build) {
			t.Errorf("tab %d after down and up:\n%v\nbefore:\n%v", i, a, b)
		}
	}
	if got := in.must(t, "window", "ls"); got != windowsBefore {
		t.Errorf("window ls after down and up:\n%s\nbefore:\n%s", got, windowsBefore)
	}
	eventually(t, "each shell in its directory", func() (bool, string) {
		dirs := map[string]string{}
		for _, tm := range in.list(t) {
			dirs[tm.GetId()] = tm.GetDirectory()
		}
		return dirs[first] == sub && dirs[build] == proj && dirs[logs] == logsDir, in.must(t, "ls")
	})
	waitFileHas(t, filepath.Join(proj, "marker"), "kept-42")
	in.must(t, "read", logs, "--wait-for", "idle")
	if b, _ := os.ReadFile(filepath.Join(logsDir, "ran")); string(b) != "unmarked\n" {
		t.Errorf("the unmarked command's file holds %q: it ran again", b)
	}

	// The split is back, in a new attach of the outer terminal.
	o2 := in.attachOuter(t, 81, 24, nil, "main")
	o2.waitFor("the split after down and up", func(s string) bool {
		// Entry 1 is the split (shown by its focused pane, the new tab).
		return strings.Contains(s, "│") && strings.Contains(o2.status(), "1:bash[2]*") && strings.Contains(o2.status(), "2:build")
	})
	if ids := tabIDs(in.list(t)); !slices.Contains(ids, split) {
		t.Errorf("the split's tab %s is gone: %v", split, ids)
	}
	o2.prefix("d")
}

// lineOf is the first line of out that holds word.
func lineOf(out, word string) string {
	for l := range strings.SplitSeq(out, "\n") {
		if strings.Contains(l, word) {
			return l
		}
	}
	return ""
}

func tabIDs(ts []*terminalv1.Terminal) []string {
	var ids []string
	for _, tm := range ts {
		ids = append(ids, tm.GetId())
	}
	return ids
}

func waitFileHas(t *testing.T, path, want string) {
	t.Helper()
	eventually(t, want+" in "+path, func() (bool, string) {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), want), string(b)
	})
}

// TestRestoreCorruptSession: up with a damaged session file says so in one
// line naming the file and what is wrong, keeps it aside and starts fresh.
func TestRestoreCorruptSession(t *testing.T) {
	in := startPhantom(t)
	in.must(t, "down")
	if err := os.WriteFile(in.sessionFile(), []byte(`{"version":1,"windows":[{"id":"w1","tabs":["t1"]}],"tabs":[{"id":"t1","window_id":"w1","keep":{"line":"rm -rf ~\ntrue","dir":"/"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := in.must(t, "up")
	var warning string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "phantom: warning: the saved session") {
			warning = l
		}
	}
	if !strings.Contains(warning, in.sessionFile()+" cannot be used: tab 1 (t1) keep: ") || !strings.Contains(warning, "line break") ||
		!strings.Contains(warning, "kept it as "+in.sessionFile()+".bad-") || !strings.Contains(warning, "started fresh") {
		t.Fatalf("up printed:\n%s\nwant one warning naming the file, what is wrong and where it was kept", out)
	}
	bad, _ := filepath.Glob(in.sessionFile() + ".bad-*")
	if len(bad) != 1 {
		t.Fatalf("files kept aside: %v, want one", bad)
	}
	if ts := in.list(t); len(ts) != 1 || ts[0].GetKeepsCommand() {
		t.Errorf("after a bad session: tabs %v, want one fresh tab", ts)
	}
}

// TestAdversarialRestore: agents in a plain and in a sandboxed tab try to
// get a command of their choosing run as the human at the next up — by
// marking one (on the human's tab and on their own, with keep-command,
// new --keep and run --keep) and by writing the saved session — and open
// a tab of their own. Every mark is refused; the sandboxed tab cannot
// write the file; what the plain one wrote is replaced when Phantom
// stops; after down and up none of it ran, the agent's tab did not come
// back, and the sandboxed tab came back sandboxed.
func TestAdversarialRestore(t *testing.T) {
	// Outside every temporary directory, as a real home is: a sandboxed
	// tab may write those, and has a /tmp of its own.
	env, bin, inTemp := instanceOutsideTemp(t)
	if err := os.MkdirAll(env.Layout.State, 0o700); err != nil {
		t.Fatal(err)
	}
	up := func() string {
		t.Helper()
		r := runBinIn(t, bin, env, env.Home, nil, "up")
		if r.code != 0 {
			t.Fatalf("phantom up:\n%v", r)
		}
		return r.stdout + r.stderr
	}
	t.Cleanup(func() { phantom(t, env, "down") })
	up()
	cc, err := daemon.Dial(env.Layout.DaemonAddr("terminald"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	in := &instance{env: env, tc: terminalv1.NewTerminalServiceClient(cc)}
	human := in.list(t)[0].GetId()
	in.must(t, "read", human, "--wait-for", "idle")
	humanMarker := filepath.Join(env.Home, "human-marker")
	in.must(t, "keep-command", human, "on", "echo human-ok > "+humanMarker)

	plain := newAttacker(t, env, "plain")
	boxed := newAttacker(t, env, "boxed", "--sandbox")
	wasBoxed := false
	for _, tm := range in.list(t) {
		wasBoxed = wasBoxed || tm.GetId() == boxed.tab && tm.GetSandboxed()
	}
	var markers []string
	var spawned []string
	for _, a := range []*attacker{plain, boxed} {
		marker := filepath.Join(env.Home, "pwned-"+a.tab)
		markers = append(markers, marker)
		touch := "touch " + marker
		for _, attack := range []string{
			shellCmd("phantom", "keep-command", human, "on", touch),
			shellCmd("phantom", "keep-command", a.tab, "on", touch),
			shellCmd("phantom", "keep-command", human, "off"),
			shellCmd("phantom", "new", "--keep", "--", "sh", "-c", touch),
			shellCmd("phantom", "run", "--keep", a.tab, "--", touch),
		} {
			if r := a.run(attack); !refusedOrWalledOff(r) {
				t.Errorf("from %s: %s: want a refusal, got %v", a.tab, attack, r)
			}
		}
		// A tab of the agent's own (create_terminal): never restored. (A
		// walled sandbox reaches no daemon through the CLI.)
		r := a.run("phantom new --name kid")
		if id := strings.TrimSpace(r.out); r.code == 0 && strings.HasPrefix(id, "t") {
			spawned = append(spawned, id)
		} else if a == plain {
			t.Errorf("from %s: phantom new: %v", a.tab, r)
		}

		// The saved session, rewritten to run the agent's command.
		evil := evilSession(t, human, env.Home, touch)
		src := filepath.Join(a.dir, "evil.json")
		if err := os.WriteFile(src, evil, 0o644); err != nil {
			t.Fatal(err)
		}
		w := a.run("cp " + sq(src) + " " + sq(in.sessionFile()) + "; echo cp=$?; cp " + sq(src) + " " + sq(in.sessionFile()+".new") +
			" && mv " + sq(in.sessionFile()+".new") + " " + sq(in.sessionFile()) + "; echo mv=$?")
		wrote := !strings.Contains(w.out, "cp=1") || !strings.Contains(w.out, "mv=1")
		t.Logf("tab %s (sandboxed: %v) writing the saved session: %s", a.tab, a == boxed && wasBoxed, strings.ReplaceAll(w.out, "\n", " "))
		if a == boxed && wrote && !inTemp {
			t.Errorf("the sandboxed tab %s wrote the saved session: %v", a.tab, w)
		}
		if a == plain && !wrote {
			t.Logf("the plain tab could not write the saved session (%v); a same-user process usually can", w)
		}
	}
	if kept := in.must(t, "keep-command"); !strings.Contains(kept, human) || strings.Count(kept, "\n") != 1 {
		t.Errorf("kept commands after the attacks:\n%s\nwant only the human's", kept)
	}

	rulesBefore := sandboxRules(t, in, boxed.tab)
	in.must(t, "down")
	if b, _ := os.ReadFile(in.sessionFile()); strings.Contains(string(b), "pwned") {
		t.Errorf("after down the saved session still holds the attacker's command:\n%s", b)
	}
	out := up()
	if strings.Contains(out, "pwned") {
		t.Errorf("up printed the attacker's command:\n%s", out)
	}
	waitFileHas(t, humanMarker, "human-ok")
	for _, tm := range in.list(t) {
		in.must(t, "read", tm.GetId(), "--wait-for", "idle")
	}
	for _, m := range markers {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("the attacker's command ran at restore: %s exists", m)
		}
	}
	for _, tm := range in.list(t) {
		if slices.Contains(spawned, tm.GetId()) {
			t.Errorf("the agent's own tab %s came back: %v", tm.GetId(), tm)
		}
		if tm.GetId() == boxed.tab && tm.GetSandboxed() != wasBoxed {
			t.Errorf("the sandboxed tab %s came back unsandboxed: %v", tm.GetId(), tm)
		}
	}
	// No wider than it was: every path it may write now, it could before.
	after := sandboxRules(t, in, boxed.tab)
	for _, p := range append(slices.Clone(after.WriteDirs), after.WriteFiles...) {
		if !slices.ContainsFunc(append(slices.Clone(rulesBefore.WriteDirs), rulesBefore.WriteFiles...), func(d string) bool {
			return p == d || strings.HasPrefix(p, d+"/")
		}) {
			t.Errorf("the restored sandboxed tab may write %s, which it could not before:\nbefore %+v\nafter %+v", p, rulesBefore, after)
		}
	}
}

// sandboxRules is how tab is confined, as terminald tells the daemons.
func sandboxRules(t *testing.T, in *instance, tab string) sandbox.Rules {
	t.Helper()
	resp, err := in.tc.DescribeSandbox(tctx(t), &terminalv1.DescribeSandboxRequest{TabId: tab}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatalf("DescribeSandbox %s: %v", tab, err)
	}
	r, err := sandbox.ParseFlags(resp.GetFlags())
	if err != nil {
		t.Fatalf("sandbox flags of %s %q: %v", tab, resp.GetFlags(), err)
	}
	return r
}

// evilSession is a valid saved session whose one tab runs cmd as the
// human at restore.
func evilSession(t *testing.T, tab, dir, cmd string) []byte {
	t.Helper()
	st := map[string]any{
		"version": 1,
		"windows": []map[string]any{{"id": "w1", "name": "main", "tabs": []string{tab}}},
		"tabs":    []map[string]any{{"id": tab, "window_id": "w1", "kernel_dir": dir, "keep": map[string]string{"line": cmd, "dir": dir}}},
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKeepArgs: keep-command's arguments, as the human types them.
func TestKeepArgs(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		args    []string
		tab     string
		line    *string
		isUsage bool
	}{
		{args: nil},
		{args: []string{"build"}, tab: "build"},
		{args: []string{"build", "on", "make", "watch"}, tab: "build", line: str("make watch")},
		{args: []string{"2", "on", "--", "npm", "run", "dev", "--", "--port", "3000"}, tab: "2", line: str("npm run dev -- --port 3000")},
		{args: []string{"build", "on", "echo a > b; make"}, tab: "build", line: str("echo a > b; make")},
		{args: []string{"build", "off"}, tab: "build", line: str("")},
		{args: []string{"build", "on"}, isUsage: true},
		{args: []string{"build", "on", "--"}, isUsage: true},
		{args: []string{"build", "off", "now"}, isUsage: true},
		{args: []string{"build", "maybe"}, isUsage: true},
	}
	for _, tc := range tests {
		tab, line, err := keepArgs(tc.args)
		if tc.isUsage {
			if _, code := explain(err, nil, false); err == nil || code != exitUsage {
				t.Errorf("keepArgs(%q) = %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil || tab != tc.tab || (line == nil) != (tc.line == nil) || line != nil && *line != *tc.line {
			t.Errorf("keepArgs(%q) = %q, %v, %v; want %q, %v", tc.args, tab, deref(line), err, tc.tab, deref(tc.line))
		}
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
