package grants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// recorder collects the changes a store reports.
type recorder struct {
	mu sync.Mutex
	cs []Change
}

func (r *recorder) observe(c Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cs = append(r.cs, c)
}

func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.cs {
		s := c.Kind.String()
		if c.Grant.ID != "" {
			s += " " + c.Grant.Client
		}
		out = append(out, s)
	}
	return out
}

// twoGrants is a store with always grants for clients "a" and "b".
func twoGrants(t *testing.T) (*Store, *recorder, Grant, Grant) {
	t.Helper()
	s := Open(filepath.Join(t.TempDir(), "state", FileName), nil)
	rec := &recorder{}
	s.Observe(rec.observe)
	a, err := s.Add(Grant{Client: "a", Capability: policy.Read, Scope: policy.All, Always: true, Program: testProgram})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Add(Grant{Client: "b", Capability: policy.Run, Scope: policy.Tab, Always: true, Program: testProgram})
	if err != nil {
		t.Fatal(err)
	}
	return s, rec, a, b
}

func keyFor(g Grant) Key {
	return Key{Client: g.Client, Program: testProgram, Call: testCall, ConnectionID: "x", Capability: g.Capability, Reach: g.Scope, Project: g.Project}
}

// readGrants reads the file's grants, by client name.
func readGrants(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	var out []string
	for _, g := range f.Grants {
		out = append(out, g.Client)
	}
	return out
}

// rewrite replaces the file's grants with keep (by client), as an editor
// does: a new file renamed over the old one.
func rewrite(t *testing.T, path string, keep func(Grant) bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	f.Grants = slices.DeleteFunc(f.Grants, func(g Grant) bool { return !keep(g) })
	out, _ := json.MarshalIndent(f, "", "  ")
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestHandEdits: a change to the file that authz did not make is read
// before the next decision; a grant gone from it is revoked (and
// reported), and the next "always" is added to the file as the human
// left it.
func TestHandEdits(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, path string)
		// gone and kept are the clients whose grants the edit revoked
		// and kept; pending those listed but not in force until a new
		// store (authz's next start); file is the file's clients after
		// the next always.
		gone, kept, pending, file []string
		changes                   []string
	}{
		{
			name: "editor drops one grant",
			edit: func(t *testing.T, path string) { rewrite(t, path, func(g Grant) bool { return g.Client != "a" }) },
			gone: []string{"a"}, kept: []string{"b"}, file: []string{"b", "c"},
			changes: []string{"revoked by a change to the file a"},
		},
		{
			name: "edited in place",
			edit: func(t *testing.T, path string) {
				b, _ := os.ReadFile(path)
				var f file
				json.Unmarshal(b, &f)
				f.Grants = f.Grants[1:]
				out, _ := json.Marshal(f)
				if err := os.WriteFile(path, out, 0o600); err != nil { // O_TRUNC: same inode
					t.Fatal(err)
				}
			},
			gone: []string{"a"}, kept: []string{"b"}, file: []string{"b", "c"},
			changes: []string{"revoked by a change to the file a"},
		},
		{
			name:    "file removed",
			edit:    func(t *testing.T, path string) { os.Remove(path) },
			gone:    []string{"a", "b"},
			file:    []string{"c"},
			changes: []string{"revoked by a change to the file a", "revoked by a change to the file b"},
		},
		{
			name: "grant added by hand",
			edit: func(t *testing.T, path string) {
				b, _ := os.ReadFile(path)
				var f file
				json.Unmarshal(b, &f)
				f.Grants = append(f.Grants, Grant{ID: "ghand", Client: "h", Capability: policy.Worktree, Scope: policy.Group, Program: testProgram})
				out, _ := json.Marshal(f)
				os.WriteFile(path, out, 0o600)
			},
			kept: []string{"a", "b"}, pending: []string{"h"}, file: []string{"a", "b", "h", "c"},
			changes: []string{"added by a change to the file h"},
		},
		{
			name: "grant widened in place",
			edit: func(t *testing.T, path string) {
				b, _ := os.ReadFile(path)
				var f file
				json.Unmarshal(b, &f)
				f.Grants[1].Scope = policy.All
				out, _ := json.Marshal(f)
				os.WriteFile(path, out, 0o600)
			},
			kept: []string{"a"}, pending: []string{"b wide"}, file: []string{"a", "b", "c"},
			changes: []string{"revoked by a change to the file b", "added by a change to the file b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, rec, a, b := twoGrants(t)
			tt.edit(t, s.Path())
			wide := b
			wide.Scope = policy.All
			byClient := map[string]Grant{"a": a, "b": b, "b wide": wide, "h": {Client: "h", Capability: policy.Worktree, Scope: policy.Group, Program: testProgram}}
			for _, c := range tt.gone {
				if _, ok, err := s.Find(keyFor(byClient[c])); ok || err != nil {
					t.Errorf("grant of %s after the edit: found %v, err %v; want revoked", c, ok, err)
				}
			}
			for _, c := range tt.kept {
				if _, ok, err := s.Find(keyFor(byClient[c])); !ok || err != nil {
					t.Errorf("grant of %s after the edit: found %v, err %v; want kept", c, ok, err)
				}
			}
			for _, c := range tt.pending {
				if _, ok, err := s.Find(keyFor(byClient[c])); ok || err != nil {
					t.Errorf("grant of %s added by hand: found %v, err %v; want pending until a restart", c, ok, err)
				}
				if !slices.ContainsFunc(s.List(), func(g Grant) bool { return g.Pending && g.Client == byClient[c].Client }) {
					t.Errorf("grant of %s not listed as pending: %+v", c, s.List())
				}
				if _, ok, _ := Open(s.Path(), nil).Find(keyFor(byClient[c])); !ok {
					t.Errorf("grant of %s added by hand not in force after a restart", c)
				}
			}
			if _, err := s.Add(Grant{Client: "c", Capability: policy.Read, Scope: policy.Tab, Always: true, Program: testProgram}); err != nil {
				t.Fatal(err)
			}
			if got := readGrants(t, s.Path()); !slices.Equal(got, tt.file) {
				t.Errorf("file after the next always holds %v, want %v (the human's edit kept)", got, tt.file)
			}
			if got := rec.kinds(); !slices.Equal(got, tt.changes) {
				t.Errorf("changes = %q, want %q", got, tt.changes)
			}
		})
	}
}

// TestStrictModes: a file or folder someone else could have written is
// refused (nothing granted, nothing written over it), with a message that
// names the file and the fix; fixing it makes the grants usable again.
func TestStrictModes(t *testing.T) {
	root := os.Getuid() == 0
	tests := []struct {
		name     string
		needRoot bool
		spoil    func(t *testing.T, dir, path string)
		want     string // in the error
		fix      func(t *testing.T, dir, path string)
	}{
		{"file world-writable", false, chmod(FileName, 0o666), "writable by its group or others (mode 0666)", chmod(FileName, 0o600)},
		{"file group-writable", false, chmod(FileName, 0o620), "writable by its group or others (mode 0620)", chmod(FileName, 0o600)},
		{"folder world-writable", false, chmod(".", 0o777), "folder", chmod(".", 0o700)},
		{"folder group-writable", false, chmod(".", 0o770), "chmod 700", chmod(".", 0o700)},
		{"file a symlink", false, func(t *testing.T, dir, path string) {
			other := filepath.Join(t.TempDir(), "elsewhere.json")
			os.Rename(path, other)
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link", func(t *testing.T, dir, path string) {
			target, _ := os.Readlink(path)
			os.Remove(path)
			os.Rename(target, path)
		}},
		{"file owned by someone else", true, chown(FileName, 65534), "owned by uid 65534", chown(FileName, os.Getuid())},
		{"folder owned by someone else", true, chown(".", 65534), "owned by uid 65534", chown(".", os.Getuid())},
		{"file not regular", false, func(t *testing.T, dir, path string) {
			os.Rename(path, path+".bak")
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file", func(t *testing.T, dir, path string) {
			os.Remove(path)
			os.Rename(path+".bak", path)
		}},
		{"corrupt", false, func(t *testing.T, dir, path string) {
			os.WriteFile(path+".bak", mustRead(t, path), 0o600)
			os.WriteFile(path, []byte("{oops"), 0o600)
		}, "not valid JSON", func(t *testing.T, dir, path string) { os.Rename(path+".bak", path) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needRoot && !root {
				t.Skip("needs root to give a file away")
			}
			s, rec, a, _ := twoGrants(t)
			dir, path := filepath.Dir(s.Path()), s.Path()
			tt.spoil(t, dir, path)
			before, _ := os.Lstat(path)
			_, ok, err := s.Find(keyFor(a))
			if ok || err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "grants nothing") {
				t.Fatalf("Find after spoiling: ok %v, err %v; want a refusal saying %q", ok, err, tt.want)
			}
			if _, err := s.Add(Grant{Client: "c", Capability: policy.Read, Scope: policy.Tab, Always: true, Program: testProgram}); err == nil {
				t.Error("an always grant was added over a refused file")
			}
			if _, err := s.Add(Grant{Client: "c", Capability: policy.Read, Scope: policy.Tab, ConnectionID: "x", Call: testCall}); err == nil {
				t.Error("a once grant was added while the file is refused")
			}
			if _, err := s.Revoke(a.ID); err == nil {
				t.Error("Revoke of an always grant succeeded while the file is refused")
			}
			if after, _ := os.Lstat(path); before != nil && after != nil && !os.SameFile(before, after) {
				t.Error("the refused file was replaced")
			}
			if st := s.Status(); st.Problem == nil {
				t.Error("Status shows no problem")
			}
			tt.fix(t, dir, path)
			if _, ok, err := s.Find(keyFor(a)); !ok || err != nil {
				t.Errorf("Find after the fix: %v %v, want the grant back", ok, err)
			}
			if got := rec.kinds(); !slices.Equal(got, []string{"grants file unusable", "grants file usable again"}) {
				t.Errorf("changes = %q", got)
			}
		})
	}
}

func chmod(name string, mode os.FileMode) func(t *testing.T, dir, path string) {
	return func(t *testing.T, dir, path string) {
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func chown(name string, uid int) func(t *testing.T, dir, path string) {
	return func(t *testing.T, dir, path string) {
		if err := os.Lchown(filepath.Join(dir, name), uid, -1); err != nil {
			t.Fatal(err)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSymlinkedFolder: a grants folder that is a symbolic link is refused.
func TestSymlinkedFolder(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	good := Open(filepath.Join(real, FileName), nil)
	if _, err := good.Add(Grant{Client: "a", Capability: policy.Read, Scope: policy.All, Always: true, Program: testProgram}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "state")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	s := Open(filepath.Join(link, FileName), nil)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "folder") || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Err = %v, want the folder refused as a symbolic link", err)
	}
	if l := s.List(); len(l) != 0 {
		t.Errorf("grants listed from a symlinked folder: %v", l)
	}
}

// TestRevokeWhenWriteFails: a revocation holds in memory when the file
// cannot be written; later reads of the file (which still holds the
// grant) do not bring it back; the file is written once it can be.
func TestRevokeWhenWriteFails(t *testing.T) {
	s, rec, a, b := twoGrants(t)
	full := errors.New("no space left on device")
	s.persist = func(string, file, int, func() bool) (fileState, error) { return fileState{}, full }

	r, err := s.Revoke(a.ID)
	if err != nil || r.FileErr == nil || r.Grant.ID != a.ID {
		t.Fatalf("Revoke = %+v, %v; want revoked with a file error", r, err)
	}
	if _, ok, _ := s.Find(keyFor(a)); ok {
		t.Fatal("the revoked grant still covers after a failed write")
	}
	if st := s.Status(); st.Unsaved == nil || st.Standing != 1 {
		t.Errorf("Status = %+v, want unsaved and one standing grant", st)
	}
	// The file still holds it; a hand edit that touches something else
	// makes the store read it again, and the grant stays revoked.
	rewrite(t, s.Path(), func(Grant) bool { return true })
	s.Refresh()
	if _, ok, _ := s.Find(keyFor(a)); ok {
		t.Fatal("re-reading the file brought the revoked grant back")
	}
	if _, ok, _ := s.Find(keyFor(b)); !ok {
		t.Fatal("the other grant was lost")
	}
	if err := s.Flush(); err == nil {
		t.Error("Flush succeeded while writes fail")
	}
	s.persist = writeFile
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := readGrants(t, s.Path()); !slices.Equal(got, []string{"b"}) {
		t.Errorf("file after the flush holds %v, want [b]", got)
	}
	if st := s.Status(); st.Unsaved != nil {
		t.Errorf("still unsaved after the flush: %v", st.Unsaved)
	}
	if got := rec.kinds(); !slices.Contains(got, "grants file updated") {
		t.Errorf("changes = %q, want the update reported", got)
	}
	// And a new store over the file agrees.
	if _, ok, _ := Open(s.Path(), nil).Find(keyFor(a)); ok {
		t.Error("a new store found the revoked grant")
	}
}

// TestAddWhenWriteFails: an always grant that cannot be written is not in
// force (and the file is left alone).
func TestAddWhenWriteFails(t *testing.T) {
	s, _, _, _ := twoGrants(t)
	s.persist = func(string, file, int, func() bool) (fileState, error) { return fileState{}, errors.New("disk full") }
	g := Grant{Client: "c", Capability: policy.Configure, Scope: policy.All, Always: true, Program: testProgram}
	if _, err := s.Add(g); err == nil {
		t.Fatal("Add succeeded though the write failed")
	}
	if _, ok, _ := s.Find(keyFor(g)); ok {
		t.Error("a grant that was not written is in force")
	}
	if st := s.Status(); st.Unsaved != nil {
		t.Errorf("a failed Add left the store unsaved: %v", st.Unsaved)
	}
}

// TestWatchSeesEditWithoutRequests: the watcher reads a hand edit (and
// reports it) without any request asking.
func TestWatchSeesEditWithoutRequests(t *testing.T) {
	s, rec, _, _ := twoGrants(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Watch(ctx, slog.New(slog.DiscardHandler)) }()
	defer func() { cancel(); <-done }()
	// The watch starts in the background: keep editing until it reports.
	testenv.Eventually(t, "the watcher to report the edit", func() (bool, string) {
		rewrite(t, s.Path(), func(g Grant) bool { return g.Client != "a" })
		got := rec.kinds()
		return slices.Contains(got, "revoked by a change to the file a"), fmt.Sprint(got)
	})
}

// TestAddedWhileRefusedIsPending: grants that appear while the file is
// refused (world-writable: anyone could have added them) are pending once
// it is repaired; the grants trusted before are in force again.
func TestAddedWhileRefusedIsPending(t *testing.T) {
	s, _, a, _ := twoGrants(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(s.Path(), 0o666))
	if err := s.Err(); err == nil {
		t.Fatal("world-writable file accepted")
	}
	b := mustRead(t, s.Path())
	var f file
	must(json.Unmarshal(b, &f))
	sneaky := Grant{ID: "gsneaky", Client: "agent", Capability: policy.Run, Scope: policy.All, Program: testProgram}
	f.Grants = append(f.Grants, sneaky)
	out, _ := json.Marshal(f)
	must(os.WriteFile(s.Path(), out, 0o666))
	must(os.Chmod(s.Path(), 0o600))
	if _, ok, err := s.Find(keyFor(a)); !ok || err != nil {
		t.Errorf("trusted grant after the repair: %v %v", ok, err)
	}
	if _, ok, err := s.Find(keyFor(sneaky)); ok || err != nil {
		t.Errorf("grant added while the file was refused: found %v, err %v; want pending", ok, err)
	}
	if st := s.Status(); st.Standing != 2 || st.Pending != 1 {
		t.Errorf("Status = %+v, want 2 standing and 1 pending", st)
	}
}

// TestAcceptPending: the human puts a pending grant in force; accepting
// one in force or unknown fails, and nothing is written.
func TestAcceptPending(t *testing.T) {
	s, _, a, _ := twoGrants(t)
	hand := Grant{ID: "ghand", Client: "h", Capability: policy.Read, Scope: policy.Tab, Program: testProgram}
	b := mustRead(t, s.Path())
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	f.Grants = append(f.Grants, hand)
	out, _ := json.Marshal(f)
	if err := os.WriteFile(s.Path(), out, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Find(keyFor(hand)); ok {
		t.Fatal("a hand-added grant covers before it is accepted")
	}
	before := mustRead(t, s.Path())
	tests := []struct {
		id      string
		wantErr bool
	}{
		{"ghand", false},
		{"ghand", true}, // in force now
		{a.ID, true},
		{"gnone", true},
	}
	for _, tt := range tests {
		if _, err := s.Accept(tt.id); (err != nil) != tt.wantErr {
			t.Errorf("Accept(%s) = %v, want error %v", tt.id, err, tt.wantErr)
		}
	}
	if _, ok, _ := s.Find(keyFor(hand)); !ok {
		t.Error("the accepted grant does not cover")
	}
	if after := mustRead(t, s.Path()); string(after) != string(before) {
		t.Error("Accept rewrote the file")
	}
}

// TestEditDuringWrite: a hand edit that lands while authz writes the file
// (after it read the file, before its rename) is read and kept, not
// written over.
func TestEditDuringWrite(t *testing.T) {
	s, _, a, _ := twoGrants(t)
	edited := false
	s.persist = func(path string, f file, uid int, unchanged func() bool) (fileState, error) {
		if !edited {
			edited = true // the human removes grant a just now
			rewrite(t, path, func(g Grant) bool { return g.ID != a.ID })
		}
		return writeFile(path, f, uid, unchanged)
	}
	if _, err := s.Add(Grant{Client: "c", Capability: policy.Read, Scope: policy.Tab, Always: true, Program: testProgram}); err != nil {
		t.Fatal(err)
	}
	if got := readGrants(t, s.Path()); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("file = %v, want [b c]: the edit made during the write was lost", got)
	}
	if _, ok, _ := s.Find(keyFor(a)); ok {
		t.Error("the grant removed during the write still covers")
	}
}
