package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestWithin(t *testing.T) {
	root := t.TempDir()
	// A repository the caller may write, with a linked worktree outside
	// it, made as git makes one.
	repo := filepath.Join(root, "proj")
	wt := filepath.Join(root, "proj.worktrees", "feature")
	for _, d := range []string{filepath.Join(repo, ".git", "worktrees", "feature"), wt} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	gitdir := filepath.Join(repo, ".git", "worktrees", "feature")
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o600)
	os.WriteFile(filepath.Join(gitdir, "gitdir"), []byte(filepath.Join(wt, ".git")+"\n"), 0o600)
	os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o600)
	other := filepath.Join(root, "other")

	// Behind the walls, as terminald computes it: the caller's /tmp is
	// private, its own directory (here under the test's /tmp) bound back.
	outer := Rules{Tmp: "/run/ph/tmp/t1", Keep: []string{repo}, WriteDirs: []string{repo, "/tmp", "/var/tmp"}, WriteFiles: []string{"/home/u/.claude.json"},
		Allow: []string{"/mcp.sock"}, Vouch: []string{"/mcp.sock"}}
	tests := []struct {
		name              string
		r                 Rules
		wantDirs, wantFls []string
	}{
		{"a tab in the caller's own tree keeps it",
			Rules{WriteDirs: []string{filepath.Join(repo, "sub"), "/var/tmp"}},
			[]string{filepath.Join(repo, "sub"), "/var/tmp"}, nil},
		{"another project is not the caller's to write",
			Rules{WriteDirs: []string{other, "/var/tmp"}},
			[]string{"/var/tmp"}, nil},
		{"the home directory's entries are not either",
			Rules{WriteDirs: []string{filepath.Join(root, "home", ".ssh"), repo}, WriteFiles: []string{"/home/u/notes.txt", "/home/u/.claude.json"}},
			[]string{repo}, []string{"/home/u/.claude.json"}},
		{"the new tab's own private /tmp stays",
			Rules{Tmp: "/run/ph/tmp/t9", WriteDirs: []string{"/run/ph/tmp/t9/run-1"}},
			[]string{"/run/ph/tmp/t9/run-1"}, nil},
		{"the host's /tmp is not the caller's, whose /tmp is private",
			Rules{Tmp: "/run/ph/tmp/t9", WriteDirs: []string{"/tmp", "/tmp/human-project"}, Keep: []string{"/tmp/human-project"}},
			[]string{"/tmp"}, nil},
		{"a linked worktree of the caller's repository stays",
			Rules{WriteDirs: []string{wt, filepath.Join(repo, ".git")}},
			[]string{wt, filepath.Join(repo, ".git")}, nil},
	}
	for _, tt := range tests {
		got := tt.r.Within(outer)
		if !reflect.DeepEqual(got.WriteDirs, tt.wantDirs) || !reflect.DeepEqual(got.WriteFiles, tt.wantFls) {
			t.Errorf("%s: Within = dirs %q files %q; want %q %q", tt.name, got.WriteDirs, got.WriteFiles, tt.wantDirs, tt.wantFls)
		}
	}
	r := Rules{Allow: []string{"/mcp.sock", "/run/docker.sock"}, Vouch: []string{"/mcp.sock"}}.Within(outer)
	if !reflect.DeepEqual(r.Allow, []string{"/mcp.sock"}) || !reflect.DeepEqual(r.Vouch, []string{"/mcp.sock"}) {
		t.Errorf("sockets: Within kept %q / %q; want only the caller's MCP socket", r.Allow, r.Vouch)
	}
}
