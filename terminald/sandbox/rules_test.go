package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/paths"
)

// tree is a fake file system for Compute: a home with shell startup
// files, a Phantom instance inside it, a project, caches, and a temporary
// directory. Entries ending in "/" are directories; "a -> b" is a symbolic
// link.
var tree = []string{
	"home/.bashrc -> dotfiles/bashrc",
	"home/.profile",
	"home/.config/phantom/config.json",
	"home/.config/fish/config.fish",
	"home/.config/nvim/init.lua",
	"home/.config/systemd/user/evil.service",
	"home/.ssh/authorized_keys",
	"home/.gitconfig",
	"home/.local/bin/git",
	"home/.cache/phantom/",
	"home/.cache/claude-cli/log",
	"home/.cache/pip/",
	"home/.local/state/phantom/logs/",
	"home/.local/share/",
	"home/.claude/",
	"home/.claude.json",
	"home/notes.txt",
	"home/dotfiles/bashrc",
	"home/dotfiles/vimrc",
	"home/proj/main.go",
	"home/proj/sub/",
	"home/link-to-etc -> /etc",
	"home/proj-link -> proj",
	"repo/.git/HEAD",
	"repo/src/",
	"run/phantom/",
	"bin/phantom",
	"bin/other",
	"tmp/",
}

// makeTree creates tree under a fresh directory and returns its resolved
// path.
func makeTree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tree {
		p, target, link := strings.Cut(e, " -> ")
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case link:
			err = os.Symlink(target, p)
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(p, 0o700)
		default:
			err = os.WriteFile(p, nil, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// specIn is the Spec of a tab in dir (relative to root) of an instance
// whose config, state and MCP socket live in the fake home.
func specIn(root, dir string) Spec {
	home := filepath.Join(root, "home")
	return Spec{
		Dir:  filepath.Join(root, dir),
		Home: home,
		Layout: paths.Layout{
			Runtime:   filepath.Join(root, "run/phantom"),
			MCPSocket: filepath.Join(home, ".cache/phantom/dev.sock"),
			State:     filepath.Join(home, ".local/state/phantom"),
			Config:    filepath.Join(home, ".config/phantom"),
			Logs:      filepath.Join(home, ".local/state/phantom/logs"),
		},
		Launcher: filepath.Join(root, "bin/phantom"),
		TempDirs: []string{filepath.Join(root, "tmp")},
	}
}

// rel makes the paths of r relative to root, for readable expectations.
func rel(root string, ps []string) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, strings.TrimPrefix(p, root+"/"))
	}
	return out
}

// TestCompute checks the writable paths for tabs in various places.
func TestCompute(t *testing.T) {
	for _, tt := range []struct {
		name      string
		dir       string
		edit      func(s *Spec, root string)
		wantDirs  []string
		wantFiles []string
	}{
		{
			name:     "project directory",
			dir:      "home/proj",
			wantDirs: []string{"home/proj", "tmp"},
		},
		{
			name:     "symbolic link to the project is resolved",
			dir:      "home/proj-link",
			wantDirs: []string{"home/proj", "tmp"},
		},
		{
			name: "home as the tab's directory: its entries minus the protected branches",
			dir:  "home",
			wantDirs: []string{
				"home/.cache/claude-cli", "home/.cache/pip", // not .cache/phantom
				"home/.claude",
				"home/.config/nvim", // not .config/phantom, .config/fish, .config/systemd
				"home/.local/share", // not .local/state/phantom, .local/bin
				"home/proj",
				"tmp",
			},
			// Not .bashrc (a link) nor .profile, .gitconfig or .ssh;
			// dotfiles is expanded because .bashrc leads to
			// dotfiles/bashrc.
			wantFiles: []string{"home/.claude.json", "home/dotfiles/vimrc", "home/notes.txt"},
		},
		{
			name:      "a shell file's link target is protected too",
			dir:       "home/dotfiles",
			wantDirs:  []string{"tmp"},
			wantFiles: []string{"home/dotfiles/vimrc"},
		},
		{
			name:     "a writable ~/.cache keeps the MCP socket's directory out",
			dir:      "home/proj",
			edit:     func(s *Spec, _ string) { s.Paths = []string{"~/.cache/"} },
			wantDirs: []string{"home/.cache/claude-cli", "home/.cache/pip", "home/proj", "tmp"},
		},
		{
			// Claude's state lives in its own agent home, which
			// terminald adds; nothing of the human's own is opened.
			name: "claude's default paths open nothing in the home",
			dir:  "home/proj",
			edit: func(s *Spec, _ string) {
				s.Paths = config.DefaultAgentPaths()["claude"]
			},
			wantDirs: []string{"home/proj", "tmp"},
		},
		{
			name: "an agent path inside a protected directory is dropped",
			dir:  "home/proj",
			edit: func(s *Spec, _ string) {
				s.Paths = []string{"~/.config/phantom/", "~/.config/fish/config.fish", "~/.bashrc"}
			},
			wantDirs: []string{"home/proj", "tmp"},
		},
		{
			name: "a temporary directory holding the runtime directory is expanded",
			dir:  "home/proj",
			edit: func(s *Spec, root string) {
				s.TempDirs = []string{filepath.Join(root, "run")}
				os.Mkdir(filepath.Join(root, "run/other"), 0o700)
			},
			wantDirs: []string{"home/proj", "run/other"},
		},
		{
			name:      "the phantom binary is protected",
			dir:       "bin",
			wantDirs:  []string{"tmp"},
			wantFiles: []string{"bin/other"},
		},
		{
			name:     "a subdirectory of a repository widens to its working tree",
			dir:      "repo/src",
			wantDirs: []string{"repo", "tmp"},
		},
		{
			name:     "missing temporary directories are skipped",
			dir:      "home/proj",
			edit:     func(s *Spec, root string) { s.TempDirs = append(s.TempDirs, filepath.Join(root, "nope")) },
			wantDirs: []string{"home/proj", "tmp"},
		},
		{
			name: "ZDOTDIR and XDG_CONFIG_HOME name more shell files",
			dir:  "home",
			edit: func(s *Spec, root string) {
				env := map[string]string{"ZDOTDIR": filepath.Join(root, "home/proj"), "XDG_CONFIG_HOME": filepath.Join(root, "home/.local/share")}
				s.Getenv = func(k string) string { return env[k] }
				os.WriteFile(filepath.Join(root, "home/proj/.zshrc"), nil, 0o600)
				os.Mkdir(filepath.Join(root, "home/.local/share/fish"), 0o700)
				os.Mkdir(filepath.Join(root, "home/.local/share/other"), 0o700)
			},
			wantDirs: []string{
				"home/.cache/claude-cli", "home/.cache/pip", "home/.claude", "home/.config/nvim",
				"home/.local/share/other", "home/proj/sub", "tmp",
			},
			wantFiles: []string{"home/.claude.json", "home/dotfiles/vimrc", "home/notes.txt", "home/proj/main.go"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := makeTree(t)
			s := specIn(root, tt.dir)
			if tt.edit != nil {
				tt.edit(&s, root)
			}
			r, err := Compute(s)
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			if got := rel(root, r.WriteDirs); !reflect.DeepEqual(got, orEmpty(tt.wantDirs)) {
				t.Errorf("WriteDirs = %q\nwant       %q", got, tt.wantDirs)
			}
			if got := rel(root, r.WriteFiles); !reflect.DeepEqual(got, orEmpty(tt.wantFiles)) {
				t.Errorf("WriteFiles = %q\nwant         %q", got, tt.wantFiles)
			}
			if want := []string{filepath.Join(s.Home, ".cache/phantom")}; !reflect.DeepEqual(r.Sockets, want) {
				t.Errorf("Sockets = %q, want %q", r.Sockets, want)
			}
			if !slices.Contains(r.Devices, "/dev/null") || !slices.Contains(r.Devices, "/dev/pts") {
				t.Errorf("Devices = %q, want /dev/null and /dev/pts among them", r.Devices)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestComputeRefuses checks that odd input is an error naming it, never a
// guess.
func TestComputeRefuses(t *testing.T) {
	for _, tt := range []struct {
		name    string
		edit    func(s *Spec, root string)
		wantErr string
	}{
		{"relative tab directory", func(s *Spec, _ string) { s.Dir = "home/proj" }, `"home/proj" is not an absolute path`},
		{"missing tab directory", func(s *Spec, root string) { s.Dir = filepath.Join(root, "nope") }, "nope"},
		{"tab directory is a file", func(s *Spec, root string) { s.Dir = filepath.Join(root, "home/notes.txt") }, "is not a directory"},
		{"relative home", func(s *Spec, _ string) { s.Home = "~" }, `home directory "~"`},
		{"relative temporary directory", func(s *Spec, _ string) { s.TempDirs = []string{"tmp"} }, `temporary directory "tmp"`},
		{"relative agent path", func(s *Spec, _ string) { s.Paths = []string{".claude"} }, `".claude" is neither absolute`},
		{"agent path escaping home", func(s *Spec, _ string) { s.Paths = []string{"~/../etc/"} }, "clean form"},
		{"relative launcher", func(s *Spec, _ string) { s.Launcher = "phantom" }, `protected path "phantom"`},
		{"tab directory inside Phantom's config", func(s *Spec, root string) {
			s.Dir = filepath.Join(root, "home/.config/phantom")
		}, "must not write"},
		{"tab directory is the fish config", func(s *Spec, root string) {
			s.Dir = filepath.Join(root, "home/.config/fish")
		}, "must not write"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := makeTree(t)
			s := specIn(root, "home/proj")
			tt.edit(&s, root)
			r, err := Compute(s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Compute = %+v, %v; want an error containing %q", r, err, tt.wantErr)
			}
		})
	}
}

// TestComputeTooManyEntries checks that expanding a crowded directory is
// refused with advice rather than turned into a command line exec rejects.
func TestComputeTooManyEntries(t *testing.T) {
	root := makeTree(t)
	for i := range MaxRules + 1 {
		if err := os.WriteFile(filepath.Join(root, "home", fmt.Sprintf("f%05d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Compute(specIn(root, "home")); err == nil || !strings.Contains(err.Error(), "narrower directory") {
		t.Errorf("Compute of a home with %d entries: %v, want a refusal", MaxRules+1, err)
	}
}

// TestEnsureDirs checks that missing agent directories are created, and
// nothing else is.
func TestEnsureDirs(t *testing.T) {
	root := makeTree(t)
	s := specIn(root, "home/proj")
	s.Paths = []string{"~/.npm/", "~/.local/share/opencode/", "~/.missing.json", "~/.cache/new*/"}
	if err := EnsureDirs(s); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		".npm": true, ".local/share/opencode": true, ".missing.json": false, ".cache/new*": false,
	} {
		fi, err := os.Stat(filepath.Join(s.Home, p))
		got := err == nil && fi.IsDir()
		if got != want {
			t.Errorf("%s exists as a directory: %v, want %v", p, got, want)
		}
		if got && fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", p, fi.Mode().Perm())
		}
	}
	r, err := Compute(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := rel(root, r.WriteDirs); !slices.Contains(got, "home/.npm") || !slices.Contains(got, "home/.local/share/opencode") {
		t.Errorf("WriteDirs = %q, want the created directories", got)
	}
	s.Paths = []string{"relative/"}
	if err := EnsureDirs(s); err == nil {
		t.Error("EnsureDirs of a relative path succeeded")
	}
}

// TestTidy checks that covered paths and duplicates go, including when a
// sibling sorts between a directory and what it covers ("/a-b" between
// "/a" and "/a/c").
func TestTidy(t *testing.T) {
	r := Rules{
		WriteDirs:  []string{"/a/c", "/a-b", "/a", "/x/y", "/a-b", "/x/yz"},
		WriteFiles: []string{"/a/f", "/x/f", "/x/f", "/a-b/g", "/x/y/z"},
	}
	r.tidy()
	want := Rules{WriteDirs: []string{"/a", "/a-b", "/x/y", "/x/yz"}, WriteFiles: []string{"/x/f"}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("tidy = %+v\nwant %+v", r, want)
	}
}
