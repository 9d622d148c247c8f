package servers

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestCannotStart: a server that cannot start — its command missing, it
// exits at once, it dies during initialize (also leaving a helper that
// holds its output open) — fails list_diagnostics, even one that would
// wait, and restart_language_server with its own error, rather than
// waiting for a server that never comes. The start timeout is long, so
// that an answer that merely timed out would say so.
func TestCannotStart(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cmd  []string
		env  map[string]string
		want []string
	}{
		{"command not found", []string{"/nonexistent/phantom-lsp"}, nil, []string{"/nonexistent/phantom-lsp", "no such file"}},
		{"exits at once", []string{exe}, map[string]string{fakeEnv: "1", "FAKE_LSP_EXIT_AT_START": "1"},
			[]string{"exit status 3", "fake: told to exit at start"}},
		{"dies during initialize", []string{"sh", "-c", "head -c 20 >/dev/null; echo boom in initialize >&2; exit 4"}, nil,
			[]string{"exit status 4", "boom in initialize"}},
		{"dies leaving a helper holding its output", []string{"sh", "-c", "(setsid sleep 5 &); head -c 20 >/dev/null; echo boom >&2; exit 5"}, nil,
			[]string{"exit status 5", "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"fake.root": "", "a.fake": "error: x\npublish\n"})
			env := map[string]string{"FAKE_LSP_DIR": dir}
			for k, v := range tt.env {
				env[k] = v
			}
			r := newRegistry(t, Options{StartTimeout: 40 * time.Second, Configs: map[string]Config{
				"fake": {Command: tt.cmd, Env: env, Extensions: []string{"fake"}, RootMarkers: [][]string{{"fake.root"}}}}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			check := func(what string, err error) {
				t.Helper()
				if err == nil || !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "cannot start") {
					t.Fatalf("%s: %v; want a failed precondition saying the server cannot start", what, err)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: %q does not say %q", what, err, w)
					}
				}
			}
			path := filepath.Join(dir, "a.fake")
			for _, wait := range []time.Duration{0, 20 * time.Second} {
				_, err := r.Diagnostics(ctx, Query{Path: path, Wait: wait})
				check("Diagnostics", err)
			}
			id := r.List(Everyone)[0].ID
			_, err := r.Restart(ctx, id, Everyone)
			check("Restart", err)
			if ctx.Err() != nil {
				t.Errorf("the calls ran out of time: %v", ctx.Err())
			}
		})
	}
}

// TestCannotStartDirectory: in a directory query, the files of a server
// that cannot start are left unsettled with a note saying why, and the
// other servers' files are answered as ever, without waiting for it.
func TestCannotStartDirectory(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{"fake.root": "", "a.fake": "error: x\npublish\n", "b.bad": "x\n"})
	r := newRegistry(t, Options{StartTimeout: 40 * time.Second, Configs: map[string]Config{
		"fake": {Command: []string{exe}, Env: map[string]string{fakeEnv: "1", "FAKE_LSP_DIR": dir}, Extensions: []string{"fake"}, RootMarkers: [][]string{{"fake.root"}}},
		"bad":  {Command: []string{"/nonexistent/phantom-lsp"}, Extensions: []string{"bad"}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := r.Diagnostics(ctx, Query{Path: dir, Wait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	settled := map[string]bool{}
	for _, f := range rep.Files {
		settled[filepath.Base(f.Path)] = f.Settled
	}
	if !settled["a.fake"] || settled["b.bad"] || rep.Settled || len(rep.Files) != 2 {
		t.Errorf("files %+v, settled %v; want a.fake settled, b.bad not", rep.Files, rep.Settled)
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "cannot start") || !strings.Contains(notes, "/nonexistent/phantom-lsp") {
		t.Errorf("notes %q do not say the bad server cannot start", notes)
	}
	if ctx.Err() != nil {
		t.Errorf("the query ran out of time: %v", ctx.Err())
	}
}
