package grants

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/errdefs"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	return Open(filepath.Join(t.TempDir(), "state", FileName), nil)
}

func TestCoverage(t *testing.T) {
	s := newStore(t)
	always, err := s.Add(Grant{Client: "claude", Capability: policy.Read, Scope: policy.Group, Project: "/src/app", Always: true, Program: testProgram})
	if err != nil {
		t.Fatal(err)
	}
	once, err := s.Add(Grant{Client: "codex", Capability: policy.Run, Scope: policy.Tab, Project: "/src/app", ConnectionID: "c1", Call: testCall})
	if err != nil {
		t.Fatal(err)
	}
	key := func(client, conn string, c policy.Capability, reach policy.Scope, project string) Key {
		return Key{Client: client, Program: testProgram, Call: testCall, ConnectionID: conn, Capability: c, Reach: reach, Project: project}
	}
	tests := []struct {
		name string
		key  Key
		want string // grant id, "" for none
	}{
		{"same scope", key("claude", "c9", policy.Read, policy.Group, "/src/app"), always.ID},
		{"narrower reach", key("claude", "c9", policy.Read, policy.Tab, "/src/app"), always.ID},
		{"wider reach", key("claude", "c9", policy.Read, policy.All, "/src/app"), ""},
		{"capability mismatch", key("claude", "c9", policy.Run, policy.Tab, "/src/app"), ""},
		{"project mismatch", key("claude", "c9", policy.Read, policy.Tab, "/src/lib"), ""},
		{"client mismatch", key("gemini", "c9", policy.Read, policy.Tab, "/src/app"), ""},
		{"once on its connection", key("codex", "c1", policy.Run, policy.Tab, "/src/app"), once.ID},
		{"once on another connection", key("codex", "c2", policy.Run, policy.Tab, "/src/app"), ""},
		{"once for another call", func() Key {
			k := key("codex", "c1", policy.Run, policy.Tab, "/src/app")
			k.Call = "run_command\x00t2"
			return k
		}(), ""},
		{"once, another client's call", key("claude", "c1", policy.Run, policy.Tab, "/src/app"), ""},
		{"always for another program", func() Key {
			k := key("claude", "c9", policy.Read, policy.Group, "/src/app")
			k.Program = "/tmp/evil"
			return k
		}(), ""},
		{"always, no program", func() Key { k := key("claude", "c9", policy.Read, policy.Group, "/src/app"); k.Program = ""; return k }(), ""},
	}
	for _, tt := range tests {
		g, ok, err := s.Find(tt.key)
		if err != nil || ok != (tt.want != "") || g.ID != tt.want {
			t.Errorf("%s: Find = %v %v %v, want %q", tt.name, g.ID, ok, err, tt.want)
		}
	}
}

func TestOnceDiesWithConnection(t *testing.T) {
	s := newStore(t)
	g, err := s.Add(Grant{Client: "codex", Capability: policy.Run, Scope: policy.Tab, ConnectionID: "c1", Call: testCall})
	if err != nil {
		t.Fatal(err)
	}
	s.EndConnection("c1")
	if _, ok, _ := s.Find(Key{Client: "codex", Program: testProgram, Call: testCall, ConnectionID: "c1", Capability: policy.Run, Reach: policy.Tab}); ok {
		t.Error("once grant survived its connection")
	}
	if len(s.List()) != 0 {
		t.Errorf("List = %v after EndConnection", s.List())
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Errorf("once grant wrote the file: %v", err)
	}
	_ = g
}

func TestAlwaysPersisted(t *testing.T) {
	s := newStore(t)
	g, err := s.Add(Grant{Client: "claude", Capability: policy.Worktree, Scope: policy.All, Project: "/src/app", Always: true, Program: testProgram})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("grants file: %v %v, want mode 0600", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(s.Path())); di.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %v, want 0700", di.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(s.Path())); len(ents) != 1 {
		t.Errorf("state dir holds %d entries, want only the grants file (no temporaries)", len(ents))
	}
	b, _ := os.ReadFile(s.Path())
	if !strings.Contains(string(b), `"capability": "worktree"`) {
		t.Errorf("file does not name the capability in words:\n%s", b)
	}

	again := Open(s.Path(), nil)
	got, ok, err := again.Find(Key{Client: "claude", Program: testProgram, Call: testCall, ConnectionID: "other", Capability: policy.Worktree, Reach: policy.Group, Project: "/src/app"})
	if err != nil || !ok || got.ID != g.ID || !got.Always || !got.Created.Equal(g.Created) {
		t.Fatalf("after reload: %+v %v %v, want %+v", got, ok, err, g)
	}

	if _, err := again.Revoke(g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Revoke(g.ID); !errdefs.Is(err, errdefs.ErrNotFound) {
		t.Errorf("second revoke: %v, want not found", err)
	}
	if l := Open(s.Path(), nil).List(); len(l) != 0 {
		t.Errorf("revoked grant reloaded: %v", l)
	}
}

func TestRevokeOnce(t *testing.T) {
	s := newStore(t)
	g, _ := s.Add(Grant{Client: "codex", Capability: policy.Read, Scope: policy.Tab, ConnectionID: "c1", Call: testCall})
	if _, err := s.Revoke(g.ID); err != nil {
		t.Fatal(err)
	}
	if len(s.List()) != 0 {
		t.Error("once grant listed after revoke")
	}
}

func TestCorruptFileGrantsNothing(t *testing.T) {
	for name, content := range map[string]string{
		"not json":       "{oops",
		"wrong version":  `{"version":7,"grants":[]}`,
		"bad capability": `{"version":1,"grants":[{"id":"g1","client":"c","capability":"everything","scope":"all"}]}`,
		"no id":          `{"version":1,"grants":[{"client":"c","capability":"read","scope":"all"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			s := Open(path, nil)
			if err := s.Err(); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("Err = %v, want an error naming %s", err, path)
			}
			_, ok, err := s.Find(Key{Client: "c", Program: testProgram, Call: testCall, ConnectionID: "x", Capability: policy.Read, Reach: policy.Tab})
			if ok || err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Find = %v %v, want a refusal naming the file", ok, err)
			}
			if _, err := s.Add(Grant{Client: "c", Capability: policy.Read, Scope: policy.Tab, Always: true, Program: testProgram}); err == nil {
				t.Error("Add succeeded over a corrupt file")
			}
			if _, err := s.Add(Grant{Client: "c", Capability: policy.Read, Scope: policy.Tab, ConnectionID: "x", Call: testCall}); err == nil {
				t.Error("once Add succeeded while the file is corrupt")
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("corrupt file was rewritten: %s", b)
			}
		})
	}
}

// The program and call the tests' grants are for.
const (
	testProgram = "/usr/bin/agent"
	testCall    = "read_output\x00t1"
)
