package paths

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// envOf turns a map into a Getenv; missing keys read as "".
func envOf(m map[string]string) Getenv {
	return func(k string) string { return m[k] }
}

// TestFromEnv checks that every XDG variable is honoured, that HOME is the
// fallback for each, and that relative XDG values are ignored as the XDG
// base-directory spec requires.
func TestFromEnv(t *testing.T) {
	tmp := os.TempDir()
	uid := strconv.Itoa(os.Getuid())
	id := BundleID()
	tests := []struct {
		name string
		env  map[string]string
		want Layout
	}{
		{
			name: "all XDG variables set",
			env: map[string]string{
				"HOME":            "/home/u",
				"XDG_RUNTIME_DIR": "/run/user/7",
				"XDG_CACHE_HOME":  "/c",
				"XDG_STATE_HOME":  "/s",
				"XDG_CONFIG_HOME": "/cfg",
			},
			want: Layout{
				Runtime:   "/run/user/7/" + id,
				MCPSocket: "/c/phantom/" + id + ".sock",
				State:     "/s/phantom",
				Config:    "/cfg/phantom",
				Logs:      "/s/phantom/logs",
			},
		},
		{
			name: "HOME fallback",
			env:  map[string]string{"HOME": "/home/u"},
			want: Layout{
				Runtime:   filepath.Join(tmp, id+"-"+uid),
				MCPSocket: "/home/u/.cache/phantom/" + id + ".sock",
				State:     "/home/u/.local/state/phantom",
				Config:    "/home/u/.config/phantom",
				Logs:      "/home/u/.local/state/phantom/logs",
			},
		},
		{
			name: "relative XDG values are ignored",
			env: map[string]string{
				"HOME":            "/home/u",
				"XDG_RUNTIME_DIR": "run",
				"XDG_CACHE_HOME":  "cache",
				"XDG_STATE_HOME":  "./state",
				"XDG_CONFIG_HOME": "config",
			},
			want: Layout{
				Runtime:   filepath.Join(tmp, id+"-"+uid),
				MCPSocket: "/home/u/.cache/phantom/" + id + ".sock",
				State:     "/home/u/.local/state/phantom",
				Config:    "/home/u/.config/phantom",
				Logs:      "/home/u/.local/state/phantom/logs",
			},
		},
		{
			name: "XDG set, HOME unset",
			env: map[string]string{
				"XDG_CACHE_HOME":  "/c",
				"XDG_STATE_HOME":  "/s",
				"XDG_CONFIG_HOME": "/cfg",
			},
			want: Layout{
				Runtime:   filepath.Join(tmp, id+"-"+uid),
				MCPSocket: "/c/phantom/" + id + ".sock",
				State:     "/s/phantom",
				Config:    "/cfg/phantom",
				Logs:      "/s/phantom/logs",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(envOf(tt.env))
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FromEnv =\n  %+v\nwant\n  %+v", got, tt.want)
			}
		})
	}
}

// TestFromEnvErrors checks that a directory with neither an absolute XDG
// variable nor an absolute HOME is an error naming the variable.
func TestFromEnvErrors(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantVar string
	}{
		{"nothing set", map[string]string{}, "XDG_CACHE_HOME"},
		{"relative HOME", map[string]string{"HOME": "home"}, "XDG_CACHE_HOME"},
		{"cache set, state missing", map[string]string{"XDG_CACHE_HOME": "/c"}, "XDG_STATE_HOME"},
		{"config missing", map[string]string{"XDG_CACHE_HOME": "/c", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "rel"}, "XDG_CONFIG_HOME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := FromEnv(envOf(tt.env))
			if err == nil {
				t.Fatalf("FromEnv = %+v, want an error", l)
			}
			if !strings.Contains(err.Error(), tt.wantVar) || !strings.Contains(err.Error(), "HOME") {
				t.Errorf("error %q does not name %s and HOME", err, tt.wantVar)
			}
		})
	}
}

// TestBundleID checks that the bundle id names the MCP socket and the
// runtime directory, for the development default and a release build's
// link-time value alike.
func TestBundleID(t *testing.T) {
	if got := BundleID(); got != "dev.phantom.Phantom.dev" {
		t.Errorf("BundleID() = %q, want the development id dev.phantom.Phantom.dev", got)
	}
	env := envOf(map[string]string{"HOME": "/h", "XDG_RUNTIME_DIR": "/r"})
	for _, id := range []string{"dev.phantom.Phantom.dev", "dev.phantom.Phantom"} {
		t.Run(id, func(t *testing.T) {
			old := bundleID
			bundleID = id
			t.Cleanup(func() { bundleID = old })
			l, err := FromEnv(env)
			if err != nil {
				t.Fatal(err)
			}
			if want := "/h/.cache/phantom/" + id + ".sock"; l.MCPSocket != want {
				t.Errorf("MCPSocket = %q, want %q", l.MCPSocket, want)
			}
			if want := "/r/" + id; l.Runtime != want {
				t.Errorf("Runtime = %q, want %q", l.Runtime, want)
			}
		})
	}
}

// TestLayoutDaemonPaths checks the per-daemon paths inside the runtime dir.
func TestLayoutDaemonPaths(t *testing.T) {
	l := Layout{Runtime: "/r/x"}
	checks := []struct{ name, got, want string }{
		{"DaemonSocket", l.DaemonSocket("terminald"), "/r/x/terminald.sock"},
		{"DaemonAddr", l.DaemonAddr("terminald"), "unix:///r/x/terminald.sock"},
		{"PIDFile", l.PIDFile("terminald"), "/r/x/terminald.pid"},
		{"TabStateDir", l.TabStateDir(), "/r/x/tabs"},
		{"ShellDir", l.ShellDir(), "/r/x/shell"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestEnsurePrivateDir covers creating, tightening and refusing.
func TestEnsurePrivateDir(t *testing.T) {
	t.Run("creates nested 0700", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "b")
		if err := EnsurePrivateDir(dir); err != nil {
			t.Fatal(err)
		}
		if p := perm(t, dir); p != 0o700 {
			t.Errorf("mode = %v, want 0700", p)
		}
	})
	t.Run("tightens 0755 to 0700", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "wide")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil { // regardless of umask
			t.Fatal(err)
		}
		if err := EnsurePrivateDir(dir); err != nil {
			t.Fatal(err)
		}
		if p := perm(t, dir); p != 0o700 {
			t.Errorf("mode = %v, want 0700", p)
		}
	})
	t.Run("idempotent", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "again")
		for i := range 2 {
			if err := EnsurePrivateDir(dir); err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
		}
		if p := perm(t, dir); p != 0o700 {
			t.Errorf("mode = %v, want 0700", p)
		}
	})
	t.Run("refuses a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := EnsurePrivateDir(f)
		if err == nil {
			t.Fatal("EnsurePrivateDir on a regular file succeeded")
		}
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not name %s", err, f)
		}
		if p := perm(t, f); p != 0o644 {
			t.Errorf("file mode changed to %v", p)
		}
	})
	t.Run("refuses a symlink to a directory", func(t *testing.T) {
		root := t.TempDir()
		target := filepath.Join(root, "target")
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(root, "link")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if err := EnsurePrivateDir(link); err == nil {
			t.Error("EnsurePrivateDir accepted a symlink; another user could redirect it")
		}
	})
}

// TestDaemonAddr checks that PHANTOM_<NAME>_ADDR overrides a daemon's
// socket for every user of the layout (CLI, gateway, guard, authz, gitd).
func TestDaemonAddr(t *testing.T) {
	l, err := FromEnv(envOf(map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": "/run/user/1", "PHANTOM_TERMINALD_ADDR": "tcp://terminald:7001"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.DaemonAddr("terminald"); got != "tcp://terminald:7001" {
		t.Errorf("DaemonAddr(terminald) = %q, want the override", got)
	}
	if got, want := l.DaemonAddr("authz"), "unix:///run/user/1/"+BundleID()+"/authz.sock"; got != want {
		t.Errorf("DaemonAddr(authz) = %q, want %q", got, want)
	}
}
