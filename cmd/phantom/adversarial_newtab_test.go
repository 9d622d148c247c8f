package main

// Tabs an agent opens are no more privileged than the agent (DESIGN.md,
// invariant 2): create_terminal from a sandboxed tab into another project
// or the home directory opens a sandboxed tab that cannot write there; so
// does one without a directory, which opens in the agent's tab's
// directory, also after the agent claimed another one with OSC 7.

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
	claimed := filepath.Join(a.dir, "claimed")
	run := a.agent("narrower",
		map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"directory": other, "name": "other"}},       // 0
		map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"directory": env.Home, "name": "homewide"}}, // 1
		map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"name": "here"}},                            // 2
		map[string]any{"op": "wait", "file": claimed},                                                                              // 3
		map[string]any{"op": "call", "tool": "create_terminal", "args": map[string]any{"name": "claimed"}},                         // 4
	)
	for _, step := range []struct {
		i   int
		dir string // where the tab opens
	}{{0, other}, {1, env.Home}, {2, proj}, {4, other}} {
		i, dir := step.i, step.dir
		if i == 4 {
			// The agent's tab claims, with OSC 7, to work in the other
			// project: a tab opened without a directory starts there and
			// may write there no more than the agent.
			if r := a.run("printf '\\033]7;file://localhost%s\\033\\\\' " + sq(other) + " >/dev/tty"); r.code != 0 {
				t.Fatalf("OSC 7 claim: %+v", r)
			}
			eventually(t, "the agent's tab to claim "+other, func() (bool, string) {
				d, _ := tabByID(tabs(t, env), a.tab)["directory"].(string)
				return d == other, d
			})
			os.WriteFile(claimed, nil, 0o600)
		}
		r := resultOf(t, waitStep(t, run.read, i))
		if r.IsError {
			t.Fatalf("create_terminal into %s: %s", dir, r.text())
		}
		var out struct {
			Terminal struct {
				ID        string `json:"id"`
				Sandboxed bool   `json:"sandboxed"`
				Directory string `json:"directory"`
			} `json:"terminal"`
		}
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || out.Terminal.ID == "" {
			t.Fatalf("create_terminal result %s: %v", b, err)
		}
		tab := out.Terminal.ID
		if !sameDir(out.Terminal.Directory, dir) {
			t.Errorf("create_terminal (step %d) opened tab %s in %q, want %s", i, tab, out.Terminal.Directory, dir)
		}
		if !out.Terminal.Sandboxed {
			t.Errorf("the tab %s a sandboxed agent opened in %s is not sandboxed", tab, dir)
		}
		// Its launcher's rules: nothing writable but the caller's.
		for _, w := range writeFlags(t, env, tab) {
			if within(w, other) || within(w, env.Home) && !within(w, proj) {
				t.Errorf("the tab %s a sandboxed agent opened in %s may write %s, which the agent itself may not", tab, dir, w)
			}
		}
		if dir == proj {
			continue // the agent may write there itself
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
