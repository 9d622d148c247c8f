// Package testenv runs isolated Phantom instances for tests: every XDG
// directory and HOME point into fresh temporary directories, so a test never
// touches the user's instance and tests never see each other's.
package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/paths"
)

// Env is an isolated environment.
type Env struct {
	// Vars is the full environment to give processes: the test's own, with
	// HOME and the XDG variables replaced.
	Vars []string
	// Layout is the instance's paths.
	Layout paths.Layout
	// Home is the fake home directory.
	Home string
}

// New makes an isolated environment removed when the test ends. The root
// lives directly under the system temp directory, not t.TempDir(), because
// Unix socket paths are limited to 108 bytes and test names can be long.
func New(t testing.TB) *Env {
	t.Helper()
	root, err := os.MkdirTemp("", "ph")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	set := map[string]string{
		"HOME":            filepath.Join(root, "home"),
		"XDG_RUNTIME_DIR": filepath.Join(root, "run"),
		"XDG_CACHE_HOME":  filepath.Join(root, "cache"),
		"XDG_STATE_HOME":  filepath.Join(root, "state"),
		"XDG_CONFIG_HOME": filepath.Join(root, "config"),
	}
	for _, d := range set {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var vars []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || strings.HasPrefix(k, "PHANTOM_") {
			continue
		}
		vars = append(vars, kv)
	}
	for k, v := range set {
		vars = append(vars, k+"="+v)
	}
	l, err := paths.FromEnv(func(k string) string { return set[k] })
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Vars: vars, Layout: l, Home: set["HOME"]}
}

// Getenv reads a variable of the environment.
func (e *Env) Getenv(key string) string {
	for i := len(e.Vars) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Vars[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
