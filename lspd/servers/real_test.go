package servers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/lspd/lsp"
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

			infos := r.List(Everyone)
			if len(infos) != 1 || infos[0].PID == 0 || infos[0].State != Ready || infos[0].MemoryBytes == 0 || infos[0].Root != dir {
				t.Fatalf("List() = %+v, want one ready server with a pid and memory at root %s", infos, dir)
			}
			if err := syscall.Kill(infos[0].PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			write(t, dir, map[string]string{fx.file: fx.files[fx.file]})
			rep = settled(t, r, path, 120*time.Second)
			after := r.List(Everyone)[0]
			if !rep.Settled || !strings.Contains(messages(rep), fx.want) || after.Restarts < 1 || after.PID == infos[0].PID {
				t.Fatalf("after kill -9 of %d and the error put back: settled %v, diagnostics %q, server %+v\nwant the error again from a restarted server", infos[0].PID, rep.Settled, messages(rep), after)
			}
		})
	}
}

// TestRealServerHangs: a real server stopped with SIGSTOP lives on but
// never answers. Given a change, it is asked for the document's symbols
// (which, running, it answers fast: the figure is logged), found hung,
// killed and restarted, and the diagnostics come back from its successor.
func TestRealServerHangs(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			needServer(t, fx.server, fx.check...)
			dir := t.TempDir()
			write(t, dir, fx.files)
			path := filepath.Join(dir, fx.file)
			const unheard, timeout = 300 * time.Millisecond, 2 * time.Second
			r := newRegistry(t, Options{BackoffMin: 50 * time.Millisecond, Unheard: unheard, RequestTimeout: timeout})
			if rep := settled(t, r, path, 120*time.Second); !rep.Settled || !strings.Contains(messages(rep), fx.want) {
				t.Fatalf("first answer: %+v, want settled with %q", rep, fx.want)
			}
			t.Logf("%s answers documentSymbol in %v", fx.server, probeTime(t, r, path))

			before := r.List(Everyone)[0]
			if err := syscall.Kill(before.PID, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			write(t, dir, map[string]string{fx.file: fx.files[fx.file] + "\n"})
			crashed := waitFor(t, r, 30*time.Second, func(i Info) bool {
				return i.Restarts >= 1 && strings.Contains(i.LastError, "did not answer textDocument/documentSymbol") && strings.Contains(i.LastError, timeout.String())
			})
			if crashed.PID == before.PID || processAlive(before.PID) {
				t.Fatalf("after the hang: %+v; the stopped process %d alive: %v", crashed, before.PID, processAlive(before.PID))
			}
			rep := settled(t, r, path, 120*time.Second)
			if after := r.List(Everyone)[0]; !rep.Settled || !rep.Files[0].Current() || !strings.Contains(messages(rep), fx.want) || after.State != Ready {
				t.Fatalf("after the restart: settled %v, %+v, server %+v; want the error again, settled and current, from a ready server", rep.Settled, rep.Files, after)
			}
		})
	}
}

// probeTime times one documentSymbol call on path, as the liveness check
// makes it.
func probeTime(t *testing.T, r *Registry, path string) time.Duration {
	t.Helper()
	s, err := r.serverFor(path, Unconfined)
	if err != nil || s == nil {
		t.Fatalf("serverFor(%s) = %v, %v", path, s, err)
	}
	s.mu.Lock()
	inst := s.inst
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err = inst.conn.Call(ctx, "textDocument/documentSymbol", lsp.DocumentSymbolParams{TextDocument: lsp.TextDocumentIdentifier{URI: lsp.FileURI(path)}}, nil)
	if err != nil {
		t.Logf("documentSymbol on %s: %v", path, err)
	}
	return time.Since(start)
}
