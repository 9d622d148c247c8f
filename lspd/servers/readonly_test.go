package servers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/paths"
)

// TestReadOnly: the read-only sandbox writes the temporary directories
// alone and no terminal; where the machine allows the walls it has them
// (a private /tmp under the runtime directory, the runtime directories
// hidden), keeps each server's workspace and program in view, gives each
// process a /tmp of its own and removes it.
func TestReadOnly(t *testing.T) {
	base := t.TempDir()
	runtime, xdg := filepath.Join(base, "run"), filepath.Join(base, "xdg")
	for _, d := range []string{runtime, xdg} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	m := func(walls bool, getenv func(string) string) Machine {
		return Machine{Layout: paths.Layout{Runtime: runtime}, Home: filepath.Join(base, "home"), Getenv: getenv, Walls: walls}
	}
	// The runtime directories outside /tmp, where the private /tmp does
	// not cover them already.
	elsewhere := Machine{Layout: paths.Layout{Runtime: "/nonexistent/run"}, Home: "/nonexistent/home", Getenv: env("XDG_RUNTIME_DIR", "/nonexistent/xdg"), Walls: true}
	tests := []struct {
		name    string
		m       Machine
		want    []string // flags it has
		notWant []string // flags it must not have
		err     string
	}{
		{"no walls", m(false, env()),
			[]string{"--write=/var/tmp", "--device=/dev/null"},
			[]string{"--isolate", "--device=/dev/pts", "--device=/dev/tty", "--device=/dev/ptmx", "--write=" + runtime}, ""},
		{"walls", elsewhere,
			[]string{"--isolate", "--tmp=/nonexistent/run/tmp/lspd/t9", "--hide=/nonexistent/run", "--hide=/nonexistent/xdg", "--write=/tmp", "--write=/var/tmp"},
			[]string{"--device=/dev/pts", "--device=/dev/tty", "--keep=" + base}, ""},
		{"walls, the runtime directories in /tmp", m(true, env("XDG_RUNTIME_DIR", xdg)),
			[]string{"--isolate", "--tmp=" + filepath.Join(runtime, "tmp", "lspd", "t9"), "--write=/tmp", "--write=/var/tmp"},
			[]string{"--device=/dev/pts", "--write=" + runtime, "--write=" + xdg}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ReadOnly("t9", tt.m)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ReadOnly = %+v, %v; want an error saying %q", c, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.Confined() || c.Key != "t9" || !strings.Contains(c.Label, "read-only sandbox") {
				t.Errorf("ReadOnly = %+v, want a confined read-only sandbox keyed t9", c)
			}
			for _, f := range tt.want {
				if !slices.Contains(c.Flags, f) {
					t.Errorf("flags %v lack %s", c.Flags, f)
				}
			}
			for _, f := range tt.notWant {
				if slices.Contains(c.Flags, f) {
					t.Errorf("flags %v have %s", c.Flags, f)
				}
			}
		})
	}

	// One process of a server behind the walls: its workspace and program
	// stay in view, its private /tmp is its own, removed afterwards.
	c, err := ReadOnly("t9", m(true, env()))
	if err != nil {
		t.Fatal(err)
	}
	ws, prog := filepath.Join(base, "ws"), filepath.Join(base, "bin", "server")
	write(t, base, map[string]string{"ws/a.go": "", "bin/server": ""})
	argv, cenv, cleanup, err := c.start("/phantom", ws, []string{prog, "-v"})
	if err != nil {
		t.Fatal(err)
	}
	var tmp string
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, "--tmp="); ok {
			tmp = v
		}
	}
	if filepath.Dir(tmp) != filepath.Join(runtime, "tmp", "lspd") || !strings.HasPrefix(filepath.Base(tmp), "t9-") {
		t.Errorf("the private /tmp is %q, want a fresh t9-* in %s", tmp, filepath.Join(runtime, "tmp", "lspd"))
	}
	for _, want := range []string{"--keep=" + ws, "--keep=" + prog, "--", prog, "-v"} {
		if !slices.Contains(argv, want) {
			t.Errorf("argv %v lacks %s", argv, want)
		}
	}
	if slices.Contains(argv, "--write="+ws) {
		t.Errorf("argv %v makes the workspace writable", argv)
	}
	if !slices.Contains(cenv, "XDG_CACHE_HOME="+cacheInPrivateTmp) {
		t.Errorf("cache environment %v, want the cache in the private /tmp", cenv)
	}
	if fi, err := os.Stat(tmp); err != nil || !fi.IsDir() {
		t.Fatalf("the private /tmp %s was not made: %v", tmp, err)
	}
	cleanup()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the private /tmp %s is still there after cleanup: %v", tmp, err)
	}
}
