package main

// Tabs an agent opens are no more privileged than the agent (DESIGN.md,
// invariant 2): create_terminal from a sandboxed tab into another project
// or the home directory opens a sandboxed tab that cannot write there.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/testenv"
)

func TestAdversarialNewTabWritesNoMore(t *testing.T) {
	t.Parallel()
	requireWalls(t)
	env := adversaryUp(t)
	proj, other := filepath.Join(env.Home, "proj"), filepath.Join(env.Home, "other")
	for _, d := range []string{proj, other, filepath.Join(env.Home, ".config", "systemd", "user")} {
		mustMkdir(t, d)
	}
	a := newAttacker(t, env, "narrow", "--sandbox", "--dir", proj)
	run := a.agent("narrower",
		map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"directory": other, "name": "other"}},       // 0
		map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"directory": env.Home, "name": "homewide"}}, // 1
	)
	for i, dir := range []string{other, env.Home} {
		r := resultOf(t, waitStep(t, run.read, i))
		if r.IsError {
			t.Fatalf("create_terminal into %s: %s", dir, r.text())
		}
		var out struct {
			Terminal struct {
				ID        string `json:"id"`
				Sandboxed bool   `json:"sandboxed"`
			} `json:"terminal"`
		}
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || out.Terminal.ID == "" {
			t.Fatalf("create_terminal result %s: %v", b, err)
		}
		tab := out.Terminal.ID
		if !out.Terminal.Sandboxed {
			t.Errorf("the tab %s a sandboxed agent opened in %s is not sandboxed", tab, dir)
		}
		// Its launcher's rules: nothing writable but the caller's.
		for _, w := range writeFlags(t, env, tab) {
			if within(w, other) || within(w, env.Home) && !within(w, proj) {
				t.Errorf("the tab %s a sandboxed agent opened in %s may write %s, which the agent itself may not", tab, dir, w)
			}
		}
		// And typed into by the human: the writes fail.
		victim := filepath.Join(dir, fmt.Sprintf("pwned-%d", i))
		unit := filepath.Join(env.Home, ".config", "systemd", "user", fmt.Sprintf("evil-%d.service", i))
		eventually(t, "tab "+tab+"'s shell to sit at its prompt", func() (bool, string) {
			return tabByID(tabs(t, env), tab)["idle"] == true, mustPhantom(t, env, "read", tab)
		})
		mustPhantom(t, env, "run", tab, "--", "sh", "-c", "echo x >"+sq(victim)+"; echo x >"+sq(unit)+"; echo done-"+tab)
		eventually(t, "the command in tab "+tab+" to finish", func() (bool, string) {
			out := mustPhantom(t, env, "read", tab)
			return strings.Contains(out, "done-"+tab), out
		})
		for _, f := range []string{victim, unit} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("the tab %s a sandboxed agent opened wrote %s", tab, f)
			}
		}
	}
}

// writeFlags are the --write= and --write-file= paths of tab's sandbox
// launcher, from its command line.
func writeFlags(t *testing.T, env *testenv.Env, tab string) []string {
	t.Helper()
	var st struct {
		LeaderPID int `json:"leader_pid"`
	}
	b, err := os.ReadFile(filepath.Join(env.Layout.TabStateDir(), tab+".json"))
	if err != nil || json.Unmarshal(b, &st) != nil || st.LeaderPID <= 0 {
		t.Fatalf("tab %s's state file: %v %s", tab, err, b)
	}
	argv, err := procfs.Default.Cmdline(st.LeaderPID)
	if err != nil {
		t.Fatalf("tab %s's leader %d: %v", tab, st.LeaderPID, err)
	}
	var out []string
	for _, a := range argv {
		if a == "--" {
			break
		}
		for _, f := range []string{"--write=", "--write-file="} {
			if p, ok := strings.CutPrefix(a, f); ok {
				out = append(out, p)
			}
		}
	}
	if len(argv) < 2 || argv[1] != "+sandbox" {
		t.Fatalf("tab %s's leader runs %q, not the sandbox launcher", tab, argv)
	}
	return out
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
