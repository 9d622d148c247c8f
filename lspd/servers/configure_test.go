package servers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigureRealGopls: a configuration that cannot start is refused
// with the reason and the running server keeps answering; a good one is
// saved, and the running server restarts with it.
func TestConfigureRealGopls(t *testing.T) {
	needServer(t, "gopls")
	dir := t.TempDir()
	write(t, dir, map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n", "main.go": "package main\n\nfunc main() { var n int = \"x\"; _ = n }\n"})
	path := filepath.Join(dir, "main.go")
	state := filepath.Join(t.TempDir(), "lspd.json")
	r := newRegistry(t, Options{StatePath: state})
	if rep := settled(t, r, path, time.Minute); !rep.Settled {
		t.Fatalf("not settled: %+v", rep)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tests := []struct {
		name    string
		change  Change
		wantErr string
	}{
		{"missing program", Change{Language: "go", Update: Config{Command: []string{"/nonexistent/gopls"}}, Dir: dir}, "/nonexistent/gopls"},
		{"exits at once", Change{Language: "go", Update: Config{Command: []string{"sh", "-c", "echo broken >&2; exit 3"}}, Dir: dir}, "broken"},
		{"not JSON", Change{Language: "go", Update: Config{Settings: []byte("{")}, Dir: dir}, "settings must be a JSON object"},
		{"unknown server", Change{ServerID: "go:/nowhere", Dir: dir}, "no language server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Configure(ctx, tt.change)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Configure(%+v) = %v, want an error containing %q", tt.change, err, tt.wantErr)
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("a refused configuration was saved: %v", err)
			}
			if rep := settled(t, r, path, time.Minute); !rep.Settled || !strings.Contains(messages(rep), "cannot use") {
				t.Errorf("after the refusal the old server answers %+v", rep)
			}
		})
	}

	got, err := r.Configure(ctx, Change{ServerID: serverID("go", dir, ""), Update: Config{Command: []string{"gopls", "serve"}}})
	if err != nil {
		t.Fatal(err)
	}
	// Up: ready, or already indexing what the restart reopened (gopls
	// begins loading packages at once; on a loaded machine that can come
	// before the answer is made).
	if up := got.Server.State == Ready || got.Server.State == Indexing; strings.Join(got.Command, " ") != "gopls serve" ||
		len(got.Restarted) != 1 || !up || got.Server.Restarts != 1 {
		t.Errorf("Configure = %+v, want gopls serve, the server restarted once and up", got)
	}
	if b, err := os.ReadFile(state); err != nil || !strings.Contains(string(b), `"serve"`) {
		t.Errorf("saved %s: %s, %v", state, b, err)
	}
	if rep := settled(t, r, path, time.Minute); !rep.Settled || !strings.Contains(messages(rep), "cannot use") {
		t.Errorf("after configure: %+v", rep)
	}
}
