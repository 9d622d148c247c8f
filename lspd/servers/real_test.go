package servers

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixture is a small project with one known error, in one language.
type fixture struct {
	name    string
	server  string
	check   []string // shell commands that must succeed, or the test skips
	files   map[string]string
	file    string // the file with the error
	want    string // in the error's message
	fixed   string // the file's content without the error
	badLine string // appended to break it again
}

var fixtures = []fixture{
	{
		name: "go type error", server: "gopls",
		files: map[string]string{
			"go.mod":  "module example.com/m\n\ngo 1.21\n",
			"main.go": "package main\n\nfunc main() {\n\tvar n int = \"one\"\n\t_ = n\n}\n",
		},
		file: "main.go", want: "cannot use", fixed: "package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n",
	},
	{
		name: "c missing include", server: "clangd",
		files: map[string]string{
			".git/HEAD": "ref: refs/heads/main\n",
			"main.c":    "#include \"missing.h\"\n\nint main(void) { return 0; }\n",
		},
		file: "main.c", want: "not found", fixed: "int main(void) { return 0; }\n",
	},
	{
		name: "python undefined name", server: "pylsp", check: []string{`"$(sed -n '1s/^#!//p' "$(command -v pylsp)")" -c 'import pyflakes'`},
		files: map[string]string{
			"pyproject.toml": "[project]\nname = \"m\"\n",
			"main.py":        "def main():\n    return undefined_thing\n",
		},
		file: "main.py", want: "undefined name", fixed: "def main():\n    return 1\n",
	},
}

// TestRealServers: with each real server, the known error appears with a
// settled answer that reflects the disk; fixed on disk, it clears and the
// answer says so; the server killed, it comes back (restarts counted) and
// answers again.
func TestRealServers(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			needServer(t, fx.server, fx.check...)
			dir := t.TempDir()
			write(t, dir, fx.files)
			path := filepath.Join(dir, fx.file)
			r := newRegistry(t, Options{BackoffMin: 50 * time.Millisecond})

			rep := settled(t, r, path, 120*time.Second)
			if !rep.Settled || len(rep.Files) != 1 || !rep.Files[0].Current() || !strings.Contains(messages(rep), fx.want) {
				t.Fatalf("first answer: settled %v, files %+v\nwant settled, current, a diagnostic with %q; notes %v", rep.Settled, rep.Files, fx.want, rep.Notes)
			}

			if err := os.WriteFile(path, []byte(fx.fixed), 0o644); err != nil {
				t.Fatal(err)
			}
			rep = settled(t, r, path, 60*time.Second)
			if !rep.Settled || !rep.Files[0].Current() || len(rep.Files[0].Diagnostics) != 0 {
				t.Fatalf("after the fix: settled %v, %+v, diagnostics:\n%s\nwant settled, current, none", rep.Settled, rep.Files, messages(rep))
			}

			infos := r.List()
			if len(infos) != 1 || infos[0].PID == 0 || infos[0].State != Ready || infos[0].MemoryBytes == 0 || infos[0].Root != dir {
				t.Fatalf("List() = %+v, want one ready server with a pid and memory at root %s", infos, dir)
			}
			if err := syscall.Kill(infos[0].PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			write(t, dir, map[string]string{fx.file: fx.files[fx.file]})
			rep = settled(t, r, path, 120*time.Second)
			after := r.List()[0]
			if !rep.Settled || !strings.Contains(messages(rep), fx.want) || after.Restarts < 1 || after.PID == infos[0].PID {
				t.Fatalf("after kill -9 of %d and the error put back: settled %v, diagnostics %q, server %+v\nwant the error again from a restarted server", infos[0].PID, rep.Settled, messages(rep), after)
			}
		})
	}
}
