package servers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// recordingLauncher is a stand-in for `phantom +sandbox`: it records its
// arguments, one per line, in the returned log and execs what follows
// "--", so a test sees exactly how a server was started.
func recordingLauncher(t *testing.T) (launcher, log string) {
	t.Helper()
	dir := t.TempDir()
	launcher, log = filepath.Join(dir, "launcher"), filepath.Join(dir, "log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" >>" + log + "\necho ---- >>" + log +
		"\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n"
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return launcher, log
}

// TestConfinedServers: a confined caller's servers start through the
// launcher with its rules; an agent's configuration applies to the one
// server of its workspace in its confinement — not to another workspace
// of the language, another tab's server of the same workspace, or the
// human's — is not saved, and cannot add a language or extensions; the
// human's configuration applies everywhere else and is saved.
func TestConfinedServers(t *testing.T) {
	launcher, log := recordingLauncher(t)
	state := filepath.Join(t.TempDir(), "lspd.json")
	r, ws1 := fakeRegistry(t, Options{Launcher: launcher, StatePath: state}, nil)
	ws2 := t.TempDir()
	write(t, ws2, map[string]string{"fake.root": "", "b.fake": ""})
	write(t, ws1, map[string]string{"a.fake": ""})
	exe := r.configs["fake"].Command[0]
	t1, err := InSandbox("t1", []string{"--write=" + ws1, "--write=/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	t2, _ := InSandbox("t2", []string{"--write=" + ws1, "--write=/tmp"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	got, err := r.Configure(ctx, Change{Language: "fake", Update: Config{Command: []string{exe, "configured-by-t1"}}, Dir: ws1, ForAgent: true, Conf: t1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Server.ID != "fake:"+ws1+"@t1" || !strings.Contains(got.AppliesTo, "workspace "+ws1+" only") || !strings.Contains(got.AppliesTo, "until Phantom stops") {
		t.Errorf("Configure = %+v, want server fake:%s@t1 and the workspace alone, until Phantom stops", got, ws1)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("an agent's configuration was saved (%v)", err)
	}
	b, _ := os.ReadFile(log)
	if want := "+sandbox\n--write=" + ws1 + "\n--write=/tmp\n--\n" + exe + "\nconfigured-by-t1\n"; !strings.Contains(string(b), want) {
		t.Errorf("the launcher was run with\n%s\nwant\n%s", b, want)
	}

	for _, q := range []struct {
		name, path string
		conf       Confinement
		id         string
		command    string
	}{
		{"the configured server", filepath.Join(ws1, "a.fake"), t1, "fake:" + ws1 + "@t1", "configured-by-t1"},
		{"another workspace, same tab", filepath.Join(ws2, "b.fake"), t1, "fake:" + ws2 + "@t1", exe},
		{"same workspace, another tab", filepath.Join(ws1, "a.fake"), t2, "fake:" + ws1 + "@t2", exe},
		{"same workspace, the human", filepath.Join(ws1, "a.fake"), Unconfined, "fake:" + ws1, exe},
	} {
		t.Run(q.name, func(t *testing.T) {
			rep, err := r.Diagnostics(ctx, Query{Path: q.path, Conf: q.conf})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Files) != 1 || rep.Files[0].ServerID != q.id {
				t.Fatalf("Diagnostics(%s) = %+v, want server %s", q.path, rep, q.id)
			}
			s, _ := r.get(q.id, Everyone)
			in := s.Info()
			if last := in.Command[len(in.Command)-1]; last != q.command || in.Sandbox != q.conf.Label {
				t.Errorf("server %s runs %v %s, want %s %s", q.id, in.Command, in.Sandbox, q.command, q.conf.Label)
			}
		})
	}

	for _, bad := range []struct {
		name string
		c    Change
		want string
	}{
		{"agent adds a language", Change{Language: "rust", Update: Config{Command: []string{exe}, Extensions: []string{"rs"}}, Dir: ws1, ForAgent: true, Conf: t1}, "only the human adds languages"},
		{"agent changes extensions", Change{Language: "fake", Update: Config{Extensions: []string{"py"}}, Dir: ws1, ForAgent: true, Conf: t1}, "cannot change which files"},
	} {
		if _, err := r.Configure(ctx, bad.c); !errdefs.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: Configure = %v, want invalid argument saying %q", bad.name, err, bad.want)
		}
	}

	// The human's configuration: everywhere but the agent's server, saved.
	if _, err := r.Configure(ctx, Change{Language: "fake", Update: Config{Command: []string{exe, "by-the-human"}}, Dir: ws2}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(state); err != nil || !strings.Contains(string(b), "by-the-human") {
		t.Errorf("the human's configuration saved: %s, %v", b, err)
	}
	for id, want := range map[string]string{"fake:" + ws1 + "@t1": "configured-by-t1", "fake:" + ws1 + "@t2": "by-the-human", "fake:" + ws1: "by-the-human"} {
		s, err := r.get(id, Everyone)
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Info().Command; c[len(c)-1] != want {
			t.Errorf("after the human's configure, %s runs %v, want %s", id, c, want)
		}
	}
}
