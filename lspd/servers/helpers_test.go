package servers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain puts the repository's .tools/bin (where scripts/setup installs
// gopls) on PATH. With fakeEnv set the binary is the fake language server
// instead.
func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeServer())
	}
	_, file, _, _ := runtime.Caller(0)
	tools := filepath.Join(filepath.Dir(file), "..", "..", ".tools", "bin")
	os.Setenv("PATH", tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	os.Exit(m.Run())
}

// needServer skips the test when cmd is not installed.
func needServer(t testing.TB, cmd string, also ...string) {
	t.Helper()
	if _, err := exec.LookPath(cmd); err != nil {
		t.Skipf("%s is not installed (scripts/setup installs it): %v", cmd, err)
	}
	for _, a := range also {
		if out, err := exec.Command("sh", "-c", a).CombinedOutput(); err != nil {
			t.Skipf("%s: %v\n%s", a, err, out)
		}
	}
}

// write writes files under dir.
func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newRegistry is a registry stopped when the test ends.
func newRegistry(t testing.TB, o Options) *Registry {
	t.Helper()
	if o.StatePath == "" {
		o.StatePath = filepath.Join(t.TempDir(), "lspd.json")
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// settled asks for path's diagnostics, waiting up to wait for settled ones.
func settled(t testing.TB, r *Registry, path string, wait time.Duration) Report {
	t.Helper()
	rep, err := r.Diagnostics(context.Background(), Query{Path: path, Wait: wait})
	if err != nil {
		t.Fatalf("Diagnostics(%s): %v", path, err)
	}
	return rep
}

// messages joins the diagnostics' messages.
func messages(rep Report) string {
	var out []string
	for _, f := range rep.Files {
		for _, d := range f.Diagnostics {
			out = append(out, filepath.Base(f.Path)+": "+d.Message)
		}
	}
	return strings.Join(out, "\n")
}

// waitFor waits until r's only server satisfies ok, and returns it.
func waitFor(t testing.TB, r *Registry, within time.Duration, ok func(Info) bool) Info {
	t.Helper()
	deadline := time.Now().Add(within)
	var last []Info
	for time.Now().Before(deadline) {
		if last = r.List(Everyone); len(last) == 1 && ok(last[0]) {
			return last[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("within %v the servers were never as wanted: %+v", within, last)
	return Info{}
}

// processAlive reports whether process pid exists (and is not a zombie).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z")
}
