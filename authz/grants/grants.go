// Package grants keeps the permissions a human gave: "always" grants,
// written down in a JSON file that survives restarts, and "once" grants,
// held in memory for the life of one gateway connection.
//
// The file is written atomically (temporary file, fsync, rename) with mode
// 0600 in a 0700 directory. A file that cannot be read or understood is an
// error that the store remembers: it then grants nothing at all, and never
// overwrites the file, until a human repairs or removes it.
package grants

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/paths"
)

// FileName is the grants file's name inside the state directory.
const FileName = "grants.json"

// fileVersion is the format version of the grants file.
const fileVersion = 1

// Grant is one permission.
type Grant struct {
	ID         string            `json:"id"`
	Client     string            `json:"client"`
	Capability policy.Capability `json:"capability"`
	Scope      policy.Scope      `json:"scope"`
	// Project is the repository or directory the grant is keyed by; ""
	// for callers outside any tab.
	Project string `json:"project"`
	// Always is true for grants written down.
	Always bool `json:"-"`
	// ConnectionID is the connection a once grant lives with.
	ConnectionID string    `json:"-"`
	Created      time.Time `json:"created"`
}

// Key is what a request is matched on.
type Key struct {
	Client       string
	ConnectionID string
	Capability   policy.Capability
	Reach        policy.Scope
	Project      string
}

// covers reports whether g covers a request with key k.
func (g Grant) covers(k Key) bool {
	return g.Client == k.Client && g.Capability == k.Capability && g.Project == k.Project &&
		g.Scope.Covers(k.Reach) && (g.Always || g.ConnectionID == k.ConnectionID)
}

// file is the on-disk format.
type file struct {
	Version int     `json:"version"`
	Grants  []Grant `json:"grants"`
}

// Store holds the grants. Its methods are safe for concurrent use.
type Store struct {
	path string
	now  func() time.Time

	mu      sync.Mutex
	broken  error   // why the file could not be loaded; nil when fine
	always  []Grant // written down, in the order given
	once    []Grant // in memory, in the order given
	persist func(path string, f file) error
}

// Open loads the grants file at path (a missing file is an empty store).
// A file that cannot be loaded does not make Open fail: the store records
// the error, logs nothing itself, and refuses everything; see Err.
func Open(path string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	s := &Store{path: path, now: now, persist: writeFile}
	s.always, s.broken = load(path)
	return s
}

// Path is the grants file.
func (s *Store) Path() string { return s.path }

// Err is why the grants file could not be loaded, or nil.
func (s *Store) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken
}

// Find returns a grant covering k. While the file is broken it returns the
// load error instead: a store that cannot read its file grants nothing.
func (s *Store) Find(k Key) (Grant, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return Grant{}, false, s.broken
	}
	for _, list := range [][]Grant{s.once, s.always} {
		for _, g := range list {
			if g.covers(k) {
				return g, true, nil
			}
		}
	}
	return Grant{}, false, nil
}

// Add records a grant: written down (and only then in effect) when
// g.Always, else held for g.ConnectionID. It fills in the id and time.
func (s *Store) Add(g Grant) (Grant, error) {
	if !g.Capability.Valid() || !g.Scope.Valid() || g.Client == "" {
		return Grant{}, fmt.Errorf("grant %+v is incomplete: %w", g, errdefs.ErrInvalidArgument)
	}
	if !g.Always && g.ConnectionID == "" {
		return Grant{}, fmt.Errorf("a once grant needs a connection: %w", errdefs.ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return Grant{}, s.broken
	}
	g.ID, g.Created = newID(), s.now().UTC().Truncate(time.Second)
	if !g.Always {
		s.once = append(s.once, g)
		return g, nil
	}
	next := append(slices.Clone(s.always), g)
	if err := s.persist(s.path, file{Version: fileVersion, Grants: next}); err != nil {
		return Grant{}, err
	}
	s.always = next
	return g, nil
}

// Revoke removes the grant with id, whether always or once.
func (s *Store) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.once, func(g Grant) bool { return g.ID == id }); i >= 0 {
		s.once = slices.Delete(s.once, i, i+1)
		return nil
	}
	i := slices.IndexFunc(s.always, func(g Grant) bool { return g.ID == id })
	if i < 0 {
		if s.broken != nil {
			return s.broken
		}
		return fmt.Errorf("grant %q: %w", id, errdefs.ErrNotFound)
	}
	next := slices.Delete(slices.Clone(s.always), i, i+1)
	if err := s.persist(s.path, file{Version: fileVersion, Grants: next}); err != nil {
		return err
	}
	s.always = next
	return nil
}

// EndConnection drops the once grants of a closed connection.
func (s *Store) EndConnection(conn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.once = slices.DeleteFunc(s.once, func(g Grant) bool { return g.ConnectionID == conn })
}

// Prune drops the once grants whose connection alive says has ended: a
// process that called a daemon directly and has exited. Its pid, reused
// later, names another connection and gets none of them.
func (s *Store) Prune(alive func(conn string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.once = slices.DeleteFunc(s.once, func(g Grant) bool { return !alive(g.ConnectionID) })
}

// List returns every grant: always grants first, then once grants.
func (s *Store) List() []Grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(slices.Clone(s.always), s.once...)
}

// load reads the grants file; a missing file is no grants.
func load(path string) ([]Grant, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, brokenf(path, "cannot be read: %v", err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, brokenf(path, "is not valid JSON: %v", err)
	}
	if f.Version != fileVersion {
		return nil, brokenf(path, "has version %d, want %d", f.Version, fileVersion)
	}
	seen := map[string]bool{}
	for i, g := range f.Grants {
		if g.ID == "" || seen[g.ID] || g.Client == "" || !g.Capability.Valid() || !g.Scope.Valid() {
			return nil, brokenf(path, "grant %d is malformed or duplicated: %+v", i, g)
		}
		seen[g.ID] = true
		f.Grants[i].Always = true
	}
	return f.Grants, nil
}

// brokenf is the error of a grants file that cannot be used. Its kind is
// FailedPrecondition: the human must repair or remove the file.
func brokenf(path, format string, args ...any) error {
	return fmt.Errorf("the grants file %s %s; Phantom grants nothing until it is repaired or removed (then restart authz): %w",
		path, fmt.Sprintf(format, args...), errdefs.ErrFailedPrecondition)
}

// writeFile replaces the grants file atomically: a temporary file in the
// same 0700 directory, written, synced, renamed over the old one.
func writeFile(path string, f file) error {
	dir := filepath.Dir(path)
	if err := paths.EnsurePrivateDir(dir); err != nil {
		return err
	}
	if f.Grants == nil {
		f.Grants = []Grant{}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+FileName+".*")
	if err != nil {
		return fmt.Errorf("write grants: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(append(b, '\n'))
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write grants %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// newID is a random grant id, e.g. "g1a2b3c4d5e".
func newID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "g" + hex.EncodeToString(b[:])
}
