package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

func TestEditorDir(t *testing.T) {
	w := newWorkspace(t)
	l := w.opts.Layout
	good := l.SandboxedEditorSocket("w1", "t7")
	tests := []struct {
		name     string
		sock     string
		launcher string
		isolate  bool
		wantErr  string
		keep     bool
		write    bool
	}{
		{"unsandboxed: the directory only", good, "", false, "", false, false},
		{"Landlock alone: writable", good, "/bin/phantom", false, "", false, true},
		{"walls: kept and writable", good, "/bin/phantom", true, "", true, true},
		{"the window's own socket", l.EditorSocket("w1"), "/bin/phantom", true, "is not a socket of a sandboxed editor", false, false},
		{"another window's", l.SandboxedEditorSocket("w2", "t7"), "/bin/phantom", true, "is not a socket of a sandboxed editor", false, false},
		{"escaping with ..", filepath.Join(l.SandboxedEditorsDir("w1"), "..", "..", "x", "nvim.sock"), "/bin/phantom", true, "is not a socket of a sandboxed editor", false, false},
		{"another name", filepath.Join(filepath.Dir(good), "other.sock"), "/bin/phantom", true, "is not a socket of a sandboxed editor", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// What a previous editor left, even a link to another socket,
			// is gone: the directory is made afresh.
			if err := os.MkdirAll(filepath.Dir(good), 0o700); err != nil {
				t.Fatal(err)
			}
			os.Symlink(l.EditorSocket("w1"), good)
			ts := &tabSpec{id: "t9", launcher: tt.launcher, rules: sandbox.Rules{Isolate: tt.isolate}}
			err := w.editorDir(ts, "w1", tt.sock)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "editor_socket") {
					t.Fatalf("editorDir(%s) = %v, want an editor_socket error saying %q", tt.sock, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(good)
			fi, err := os.Lstat(dir)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Fatalf("editor directory %s: %v, %v; want a 0700 directory", dir, fi, err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("editor directory %s holds %v; want it fresh", dir, ents)
			}
			real, _ := filepath.EvalSymlinks(dir)
			if got := slices.Contains(ts.rules.WriteDirs, real); got != tt.write {
				t.Errorf("writable %s = %v, want %v (rules %+v)", real, got, tt.write, ts.rules)
			}
			if got := slices.Contains(ts.rules.Keep, real); got != tt.keep {
				t.Errorf("kept %s = %v, want %v (rules %+v)", real, got, tt.keep, ts.rules)
			}
		})
	}
}

func TestIsEditor(t *testing.T) {
	w := newWorkspace(t)
	l := w.opts.Layout
	tests := []struct {
		listen string
		want   bool
	}{
		{l.EditorSocket("w1"), true},
		{l.SandboxedEditorSocket("w1", "t3"), true},
		{l.SandboxedEditorSocket("w2", "t3"), false},
		{l.EditorSocket("w2"), false},
		{"", false},
		{"/tmp/nvim.sock", false},
	}
	for _, tt := range tests {
		if got := w.isEditor("w1", tt.listen); got != tt.want {
			t.Errorf("isEditor(w1, %q) = %v, want %v", tt.listen, got, tt.want)
		}
	}
}
