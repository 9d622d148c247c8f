package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// writeSettings replaces config.json in dir as editors do: a new file
// renamed over the old one.
func writeSettings(t testing.TB, dir, body string) {
	t.Helper()
	tmp := filepath.Join(dir, ".config.json.tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "config.json")); err != nil {
		t.Fatal(err)
	}
}

// TestConfigCheck runs `phantom config check` on good and bad files: the
// cause with its line and column, exit status 1 for an invalid file.
func TestConfigCheck(t *testing.T) {
	env := testenv.New(t)
	if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(env.Layout.Config, "config.json")
	other := filepath.Join(env.Home, "other.json")
	if err := os.WriteFile(other, []byte(`{"keys": {"|": "split-right"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		body string // config.json; "" for no file
		args []string
		code int
		want string // in stdout (status 0) or stderr
	}{
		{"no file", "", nil, 0, path + ": ok (no file"},
		{"good file", `{"prefix": "C-a", "status": {"style": {"bg": "#303030"}}}`, nil, 0, path + ": ok"},
		{"syntax error", "{\n  \"prefix\": \"C-a\",\n}", nil, 1, "line 3, column 1"},
		{"unknown field", "{\n  \"prefx\": \"C-a\"\n}", nil, 1, `unknown field "prefx" at the top level (did you mean "prefix"?)`},
		{"unknown command", `{"keys": {"|": "split-rigth"}}`, nil, 1, `did you mean "split-right"?`},
		{"bad colour", `{"status": {"style": {"fg": "purple"}}}`, nil, 1, `status.style.fg: colour "purple"`},
		{"another file", "", []string{other}, 0, other + ": ok"},
		{"a missing file", "", []string{other + ".missing"}, 1, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(path)
			if tt.body != "" {
				writeSettings(t, env.Layout.Config, tt.body)
			}
			r := phantom(t, env, append([]string{"config", "check"}, tt.args...)...)
			out := r.stdout
			if tt.code != 0 {
				out = r.stderr
			}
			if r.code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("want exit %d with %q:\n%v", tt.code, tt.want, r)
			}
		})
	}
	if got := strings.TrimSpace(mustPhantom(t, env, "config", "path")); got != path {
		t.Errorf("config path = %q, want %q", got, path)
	}
	writeSettings(t, env.Layout.Config, `{"prefix": "C-a"}`)
	show := mustPhantom(t, env, "config", "show")
	for _, want := range []string{`"prefix": "C-a"`, `"scrollback_lines": 100000`, `"right": "#{window}"`, `"sheet": "both"`} {
		if !strings.Contains(show, want) {
			t.Errorf("config show lacks %s:\n%s", want, show)
		}
	}
}

// TestConfigLiveApply edits config.json under a running Phantom and an
// attached client: the new prefix, keys and status line apply at once, an
// invalid edit keeps them and shows why, `phantom reload` applies and
// says what needs a restart, and a new agent is there for create_terminal
// without one.
func TestConfigLiveApply(t *testing.T) {
	in := startPhantom(t)
	dir := in.env.Layout.Config
	c := in.attach(t, 120, 30, nil)
	c.waitStatus("with the first tab", func(s string) bool { return strings.Contains(s, "1:") })

	// A saved edit applies by itself: prefix, keys, status line.
	writeSettings(t, dir, `{"shell": "/bin/bash", "prefix": "C-a", "keys": {"K": "list-keys", "x": "none"},
		"status": {"right": "cfg-#{window_id}", "style": {"bg": "colour24"}}}`)
	c.waitStatus("saying what was applied", func(s string) bool { return strings.Contains(s, "config.json applied: keys, prefix (now C-a), status") })
	c.send("\x01K")
	c.waitText("keys: prefix C-a, then")
	if txt := c.text(); strings.Contains(txt, "close the tab") {
		t.Errorf("key list shows the unbound close-tab:\n%s", txt)
	}
	c.send("q")
	c.waitFor("the key list closed", func(s string) bool { return !strings.Contains(s, "keys: prefix") })
	c.waitStatus("with the configured right-hand text", func(s string) bool { return strings.Contains(s, "cfg-w1") })
	c.mu.Lock()
	bar := c.scr.Row(29)[119].Style.Bg
	c.mu.Unlock()
	if bar != screen.IndexedColor(24) {
		t.Errorf("status line background %v, want colour24", bar)
	}
	c.send("\x01c")
	c.waitStatus("with a second tab", func(s string) bool { return strings.Contains(s, "2:") })

	// An invalid edit keeps the last good settings and says why.
	writeSettings(t, dir, `{"shell": "/bin/bash", "prefix": "C-1"}`)
	c.waitStatus("naming the cause", func(s string) bool {
		return strings.Contains(s, "config.json not applied") && strings.Contains(s, `"C-1"`)
	})
	c.send("\x01?")
	c.waitText("keys: prefix C-a, then")
	c.send("q")
	c.waitFor("the key list closed", func(s string) bool { return !strings.Contains(s, "keys: prefix") })
	if r := phantom(t, in.env, "reload"); r.code != 1 || !strings.Contains(r.stderr, `"C-1"`) {
		t.Errorf("reload of an invalid file: want exit 1 naming the cause:\n%v", r)
	}

	// phantom reload: applied once it returns.
	writeSettings(t, dir, `{"shell": "/bin/bash", "prefix": "C-b"}`)
	if out := mustPhantom(t, in.env, "reload"); !strings.Contains(out, "applied") && !strings.Contains(out, "nothing changed") {
		t.Errorf("reload said %q", out)
	}
	c.send("\x02?")
	c.waitText("keys: prefix C-b, then")
	c.send("q")

	// A new agent, for create_terminal, without a restart.
	if r := phantom(t, in.env, "new", "--agent", "mine"); r.code == 0 {
		t.Fatalf("agent mine accepted before it was configured:\n%v", r)
	}
	agents := `"agents": {"mine": ["sh", "-c", "echo mine-agent-ran; exec sleep 1000"]}`
	writeSettings(t, dir, `{"shell": "/bin/bash", "prefix": "C-b", `+agents+`}`)
	mustPhantom(t, in.env, "reload")
	tab := strings.TrimSpace(mustPhantom(t, in.env, "new", "--agent", "mine"))
	if tab == "" {
		t.Fatal("phantom new --agent mine printed no tab id")
	}

	// A setting gitd reads at its start is named as needing a restart,
	// by reload and on the client.
	writeSettings(t, dir, `{"shell": "/bin/bash", "prefix": "C-b", `+agents+`, "worktree_root": "/tmp/wt"}`)
	if out := mustPhantom(t, in.env, "reload"); !strings.Contains(out, "needs a restart: worktree_root") {
		t.Errorf("reload said %q, want worktree_root named as needing a restart", out)
	}
	c.waitStatus("naming the setting that waits for a restart", func(s string) bool { return strings.Contains(s, "worktree_root") })
}

// TestUpRefusesInvalidConfig checks that up checks config.json before it
// starts anything, and says only what is wrong in it.
func TestUpRefusesInvalidConfig(t *testing.T) {
	env := testenv.New(t)
	if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	writeSettings(t, env.Layout.Config, "{\n  \"prefix\": \"C-1\"\n}")
	r := phantom(t, env, "up")
	if r.code == 0 {
		phantom(t, env, "down")
		t.Fatalf("up started with an invalid config.json:\n%v", r)
	}
	if !strings.Contains(r.stderr, `prefix: key "C-1"`) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Errorf("up: want one line naming the cause:\n%v", r)
	}
}

// TestReloadFromInsideTab checks the guard's choice for ReloadConfig: the
// human's `phantom reload` in a Phantom tab works, since it only re-reads
// the file terminald follows anyway. (A sandboxed tab reaches no daemon
// socket at all.)
func TestReloadFromInsideTab(t *testing.T) {
	env := adversaryUp(t)
	a := newAttacker(t, env, "human")
	if r := a.run(shellCmd(phantomBin, "reload")); r.code != 0 || !strings.Contains(r.out, "config.json: nothing changed") {
		t.Errorf("phantom reload in a tab: %v", r)
	}
}
