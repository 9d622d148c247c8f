package terminald

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
	"github.com/phantom-dev/phantom/internal/toolreg"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// newReloader makes a workspace over a fresh config directory and its
// reloader.
func newReloader(t *testing.T) (*configReloader, *workspace.Workspace, string) {
	t.Helper()
	env := testenv.New(t)
	cfg, err := config.Load(env.Layout.Config)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(workspace.Options{Config: cfg, Layout: env.Layout, Env: env.Vars})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Shutdown)
	if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	return newConfigReloader(env.Layout.Config, ws, slog.New(slog.DiscardHandler)), ws, env.Layout.Config
}

// writeConfigFile replaces dir/config.json as editors do: a new file renamed
// over the old one.
func writeConfigFile(t *testing.T, dir, body string) {
	t.Helper()
	tmp := filepath.Join(dir, ".config.json.swp")
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, config.Path(dir)); err != nil {
		t.Fatal(err)
	}
}

// TestConfigReload walks config.json through edits: what each reload
// applies, what it names as waiting for a restart, and that an invalid
// file keeps the last good settings and tells attached clients why.
func TestConfigReload(t *testing.T) {
	r, ws, dir := newReloader(t)
	steps := []struct {
		name, body       string
		applied, restart []string
		errIn            string // a substring of the reload's error
		notice           string // a substring of the clients' notice; "-" for no change told
		prefix           string // ws.Config().Prefix afterwards
	}{
		{"prefix", `{"prefix": "C-a"}`, []string{"prefix"}, nil, "", "config.json applied: prefix (now C-a)", "C-a"},
		{"invalid keeps the last good", `{"prefix": "C-1"}`, nil, nil, `"C-1"`, "config.json not applied", "C-a"},
		{"same error again is not told again", `{"prefix": "C-1" }`, nil, nil, `"C-1"`, "-", "C-a"},
		{"agents and keys", `{"prefix": "C-a", "agents": {"mine": ["sh"]}, "keys": {"|": "split-right"}}`,
			[]string{"agents", "keys"}, nil, "", "config.json applied: agents, keys", "C-a"},
		{"restart-only setting", `{"prefix": "C-a", "agents": {"mine": ["sh"]}, "keys": {"|": "split-right"}, "worktree_root": "/tmp/wt"}`,
			nil, []string{"worktree_root"}, "", "worktree_root change only after phantom down && phantom up", "C-a"},
		{"unchanged save", `{"prefix": "C-a", "agents": {"mine": ["sh"]}, "keys": {"|": "split-right"}, "worktree_root": "/tmp/wt"}`,
			nil, []string{"worktree_root"}, "", "-", "C-a"},
	}
	for _, st := range steps {
		writeConfigFile(t, dir, st.body)
		changed := r.live.Changed()
		res := r.reload()
		if !slices.Equal(res.applied, st.applied) || !slices.Equal(res.restart, st.restart) {
			t.Errorf("%s: applied %q, needs restart %q; want %q, %q", st.name, res.applied, res.restart, st.applied, st.restart)
		}
		if (st.errIn == "") != (res.err == nil) || (res.err != nil && !strings.Contains(res.err.Error(), st.errIn)) {
			t.Errorf("%s: error %v, want one with %q", st.name, res.err, st.errIn)
		}
		select {
		case <-changed:
			if _, n := r.live.Current(); st.notice == "-" || !strings.Contains(n.Text, st.notice) {
				t.Errorf("%s: clients told %q, want %q", st.name, n.Text, st.notice)
			}
		default:
			if st.notice != "-" {
				t.Errorf("%s: clients not told of the change", st.name)
			}
		}
		if got := ws.Config().Prefix; got != st.prefix {
			t.Errorf("%s: prefix %q, want %q", st.name, got, st.prefix)
		}
	}
	if got := ws.Config().Agents["mine"]; !slices.Equal(got, []string{"sh"}) {
		t.Errorf("agent mine = %q after reload", got)
	}
	if s, _ := r.live.Current(); s.Prefix != 0x01 {
		t.Errorf("live prefix = %#x, want C-a", s.Prefix)
	}
}

// TestConfigWatch checks that a change of config.json is applied without
// `phantom reload`, also when the editor replaces the file.
func TestConfigWatch(t *testing.T) {
	r, ws, dir := newReloader(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.watch(ctx)
	}()
	defer func() { cancel(); <-done }()
	for _, prefix := range []string{"C-a", "C-b"} {
		changed := r.live.Changed()
		saved := time.Now()
		writeConfigFile(t, dir, `{"prefix": "`+prefix+`"}`)
		select {
		case <-changed:
			t.Logf("prefix %s applied %v after the save", prefix, time.Since(saved))
		case <-time.After(20 * time.Second):
			t.Fatalf("config.json set to prefix %s: not applied", prefix)
		}
		if got := ws.Config().Prefix; got != prefix {
			t.Errorf("prefix %q, want %q", got, prefix)
		}
	}
}

// TestReloadIsNoTool checks that ReloadConfig stays off the MCP tool list:
// agents have no reason to reload the human's settings.
func TestReloadIsNoTool(t *testing.T) {
	reg, err := toolreg.Default()
	if err != nil {
		t.Fatal(err)
	}
	if tool, ok := reg.ByMethod(terminalv1.ConfigService_ReloadConfig_FullMethodName); ok {
		t.Errorf("ReloadConfig is the MCP tool %q", tool.Name)
	}
}
