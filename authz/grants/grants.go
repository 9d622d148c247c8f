// Package grants keeps the permissions a human gave: "always" grants,
// written down in a JSON file that survives restarts, and "once" grants,
// held in memory for the life of one gateway connection.
//
// A once grant allows exactly the call its sheet showed (Key.Call: the
// same tool, target and decisive arguments), never a capability or a
// scope: another command, another tab, another tool asks again. An always
// grant is keyed by client name, the program behind it (Key.Program, from
// the process tree, never the name a client chose), capability, scope and
// project; a grant without a program covers nothing.
//
// The file is the human's as much as authz's: it may be edited or removed
// by hand while authz runs, and authz follows. Before every decision the
// store checks (two lstat calls) whether the file or its folder changed
// since it last read or wrote them, and reads the file again if so; Watch
// does the same as soon as the file changes, so that a revocation by hand
// is seen (and audited) without waiting for the next call. A grant that
// disappeared from the file is revoked; the next "always" is added to the
// file as the human left it, never to authz's older view of it.
//
// While authz runs, a change to the file only ever takes grants away. A
// grant that appears in it (added or changed by hand, or by anything else
// that can write the file) is kept in the file and listed, but is pending:
// it covers nothing until authz starts again. So a process that can write
// the file gains nothing at once, and the human still decides when it
// counts: Accept (`phantom grants accept`), or authz's next start — the
// same boundary as editing the file while Phantom is down.
//
// The file is written atomically (temporary file, fsync, rename, fsync of
// the folder) with mode 0600. A file that cannot be read or understood, or
// that someone else could have written — a symbolic link, owned by another
// user, writable by its group or others, or in a folder that is any of
// these (sshd's StrictModes) — is an error that the store remembers: it
// then grants nothing at all, and never overwrites the file, until a human
// repairs or removes it.
//
// A revocation takes effect in memory even when the file cannot be
// written (a full disk): the store remembers the revoked ids, keeps them
// out of every later read of the file, and writes the file again at its
// next change or Flush.
package grants

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/authz/policy"
	"github.com/phantom-dev/phantom/internal/errdefs"
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
	// Pending is true for an always grant that appeared in the file while
	// authz ran: it covers nothing until authz starts again.
	Pending bool `json:"-"`
	// Program is the program an always grant is for (policy.Caller.Program).
	Program string `json:"program,omitempty"`
	// ConnectionID is the connection a once grant lives with.
	ConnectionID string `json:"-"`
	// Call is the one call a once grant allows (policy.Need.Call);
	// CallText says it in words, as the sheet did.
	Call     string    `json:"-"`
	CallText string    `json:"-"`
	Created  time.Time `json:"created"`
}

// Key is what a request is matched on.
type Key struct {
	Client       string
	Program      string
	ConnectionID string
	Capability   policy.Capability
	Reach        policy.Scope
	Project      string
	// Call is the exact call (policy.Need.Call), for once grants.
	Call string
}

// covers reports whether g covers a request with key k: a once grant the
// very call it was given for on the same connection; an always grant the
// same client and program, capability and project, within its scope.
func (g Grant) covers(k Key) bool {
	switch {
	case g.Pending || g.Client != k.Client:
		return false
	case !g.Always:
		return g.ConnectionID == k.ConnectionID && g.Call != "" && g.Call == k.Call
	}
	return g.Program != "" && g.Program == k.Program && g.Capability == k.Capability && g.Project == k.Project &&
		g.Scope.Covers(k.Reach)
}

// file is the on-disk format.
type file struct {
	Version int     `json:"version"`
	Grants  []Grant `json:"grants"`
}

// ChangeKind is a kind of change the store noticed without having made it.
type ChangeKind int

// The kinds of Change.
const (
	// HandRevoked: an always grant is gone from the file (edited or
	// removed by hand), so it is revoked.
	HandRevoked ChangeKind = iota + 1
	// HandAdded: the file holds an always grant authz did not write; it
	// is pending (see Grant.Pending).
	HandAdded
	// Unusable: the file became unusable (Change.Err says why); every
	// request that needs a grant is refused.
	Unusable
	// Usable: the file is usable again.
	Usable
	// Saved: changes held in memory after a failed write (a revocation
	// on a full disk) are written now.
	Saved
)

// String names the kind for logs.
func (k ChangeKind) String() string {
	switch k {
	case HandRevoked:
		return "revoked by a change to the file"
	case HandAdded:
		return "added by a change to the file"
	case Unusable:
		return "grants file unusable"
	case Usable:
		return "grants file usable again"
	case Saved:
		return "grants file updated"
	}
	return fmt.Sprintf("change(%d)", int(k))
}

// Change is something the store noticed: a grant changed by hand, or the
// file becoming unusable or usable again.
type Change struct {
	Kind  ChangeKind
	Grant Grant // HandRevoked, HandAdded
	// Removed is true for HandRevoked when the whole file was removed.
	Removed bool
	Err     error // Unusable
}

// Status is the state of the file, for `phantom status`.
type Status struct {
	Path string
	// Problem is why the file is refused; nil when it is in use.
	Problem error
	// Unsaved is why the file does not hold what is in memory (a write
	// failed); nil when it does.
	Unsaved error
	// Standing is how many always grants are in force.
	Standing int
	// Pending is how many always grants wait for the human to accept
	// them, or for authz's next start.
	Pending int
}

// Store holds the grants. Its methods are safe for concurrent use.
type Store struct {
	path string
	now  func() time.Time
	uid  int // the owner the file and its folder must have

	mu       sync.Mutex
	broken   error           // why the file is refused; nil when fine
	always   []Grant         // as in the file (minus revoked), in the file's order
	once     []Grant         // in memory, in the order given
	seen     fileState       // the file and folder as last read or written
	loaded   bool            // seen is valid
	revoked  map[string]bool // always grants revoked here but maybe still in the file (a write failed)
	unsaved  error           // why the file does not hold what memory does
	persist  func(path string, f file, uid int, unchanged func() bool) (fileState, error)
	observe  func(Change)
	pending  []Change      // noticed under mu, reported after it
	changed  chan struct{} // closed and replaced when Status may have changed
	notifyMu sync.Mutex    // serialises observe calls, in order
}

// Open loads the grants file at path (a missing file is an empty store).
// A file that cannot be loaded does not make Open fail: the store records
// the error, logs nothing itself, and refuses everything; see Err.
func Open(path string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	s := &Store{path: path, now: now, uid: os.Getuid(), persist: writeFile, revoked: map[string]bool{},
		changed: make(chan struct{})}
	s.mu.Lock()
	s.syncLocked(true)
	s.pending = nil // nothing changed yet: this is the first look
	s.mu.Unlock()
	return s
}

// Observe sets the function told about changes the store did not make
// (see Change). It is called outside the store's lock, one change at a
// time, and should not block. Set it before the store is used.
func (s *Store) Observe(fn func(Change)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observe = fn
}

// Path is the grants file.
func (s *Store) Path() string { return s.path }

// Err is why the grants file is refused, or nil.
func (s *Store) Err() error {
	s.begin(false)
	defer s.end()
	return s.broken
}

// Status reports the file's state.
func (s *Store) Status() Status {
	s.begin(false)
	defer s.end()
	st := Status{Path: s.path, Problem: s.broken, Unsaved: s.unsaved}
	if s.broken == nil {
		for _, g := range s.always {
			if g.Pending {
				st.Pending++
			} else {
				st.Standing++
			}
		}
	}
	return st
}

// Changed returns a channel closed at the next change of Status's Problem
// or Unsaved. Take it before reading Status so that no change is missed.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Refresh checks the file now and reads it again if it changed (the
// watcher calls it). A refused file is read again even when it looks
// unchanged, so that a passing read error does not stick.
func (s *Store) Refresh() {
	s.mu.Lock()
	s.syncLocked(s.broken != nil)
	s.end()
}

// Find returns a grant covering k. While the file is refused it returns
// why instead: a store that cannot trust its file grants nothing.
func (s *Store) Find(k Key) (Grant, bool, error) {
	s.begin(false)
	defer s.end()
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

// Get returns the grant with id, once or always.
func (s *Store) Get(id string) (Grant, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, list := range [][]Grant{s.once, s.always} {
		if i := slices.IndexFunc(list, func(g Grant) bool { return g.ID == id }); i >= 0 {
			return list[i], true
		}
	}
	return Grant{}, false
}

// Add records a grant: written down (and only then in effect) when
// g.Always, else held for g.ConnectionID. It fills in the id and time.
// An always grant is added to the file as it is now, hand edits included.
func (s *Store) Add(g Grant) (Grant, error) {
	if !g.Capability.Valid() || !g.Scope.Valid() || g.Client == "" {
		return Grant{}, fmt.Errorf("grant %+v is incomplete: %w", g, errdefs.ErrInvalidArgument)
	}
	if !g.Always && (g.ConnectionID == "" || g.Call == "") {
		return Grant{}, fmt.Errorf("a once grant needs a connection and the one call it allows: %w", errdefs.ErrInvalidArgument)
	}
	if g.Always && g.Program == "" {
		return Grant{}, fmt.Errorf("an always grant needs the program it is for: %w", errdefs.ErrInvalidArgument)
	}
	s.begin(false)
	defer s.end()
	if s.broken != nil {
		return Grant{}, s.broken
	}
	g.ID, g.Created = newID(), s.now().UTC().Truncate(time.Second)
	if !g.Always {
		s.once = append(s.once, g)
		return g, nil
	}
	if _, err := s.writeLocked(func(cur []Grant) []Grant { return append(slices.Clone(cur), g) }); err != nil {
		return Grant{}, err
	}
	return g, nil
}

// Revoked is what Revoke did.
type Revoked struct {
	Grant Grant
	// FileErr is set when the grant is revoked in memory but the file
	// could not be updated: it stays revoked while this store lives, and
	// the store writes the file again at its next change or Flush.
	FileErr error
}

// Revoke removes the grant with id, whether always or once. An always
// grant is revoked in memory first: a file that cannot be written (a full
// disk) does not keep it in force; Revoked.FileErr then says so.
func (s *Store) Revoke(id string) (Revoked, error) {
	s.begin(false)
	defer s.end()
	if i := slices.IndexFunc(s.once, func(g Grant) bool { return g.ID == id }); i >= 0 {
		g := s.once[i]
		s.once = slices.Delete(s.once, i, i+1)
		return Revoked{Grant: g}, nil
	}
	if s.broken != nil {
		// Nothing from the file is in force; and a refused file is the
		// human's to repair, never written over.
		return Revoked{}, s.broken
	}
	i := slices.IndexFunc(s.always, func(g Grant) bool { return g.ID == id })
	if i < 0 {
		return Revoked{}, fmt.Errorf("grant %q: %w", id, errdefs.ErrNotFound)
	}
	g := s.always[i]
	without := func(cur []Grant) []Grant {
		return slices.DeleteFunc(slices.Clone(cur), func(g Grant) bool { return g.ID == id })
	}
	s.revoked[id] = true
	if _, err := s.writeLocked(without); err != nil {
		// In memory all the same: the file is behind until a write
		// gets through.
		s.always = without(s.always)
		s.setUnsaved(err)
		return Revoked{Grant: g, FileErr: err}, nil
	}
	return Revoked{Grant: g}, nil
}

// Accept puts in force a pending grant (see Grant.Pending): the human
// confirms a grant that appeared in the file while authz ran. The file
// already holds it; nothing is written.
func (s *Store) Accept(id string) (Grant, error) {
	s.begin(false)
	defer s.end()
	if s.broken != nil {
		return Grant{}, s.broken
	}
	i := slices.IndexFunc(s.always, func(g Grant) bool { return g.ID == id })
	switch {
	case i < 0:
		return Grant{}, fmt.Errorf("grant %q: %w", id, errdefs.ErrNotFound)
	case !s.always[i].Pending:
		return Grant{}, fmt.Errorf("grant %q is in force already, not pending: %w", id, errdefs.ErrFailedPrecondition)
	}
	s.always = slices.Clone(s.always)
	s.always[i].Pending = false
	return s.always[i], nil
}

// Flush writes the file again when an earlier write failed; it returns
// the error of that write, or nil when the file is up to date.
func (s *Store) Flush() error {
	s.begin(false)
	defer s.end()
	if s.unsaved == nil || s.broken != nil {
		return s.unsaved
	}
	if _, err := s.writeLocked(func(cur []Grant) []Grant { return cur }); err != nil {
		s.setUnsaved(err)
		return err
	}
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

// List returns every grant: always grants first (pending ones among
// them), then once grants. While the file is refused it lists the once
// grants only.
func (s *Store) List() []Grant {
	s.begin(false)
	defer s.end()
	if s.broken != nil {
		return slices.Clone(s.once)
	}
	return append(slices.Clone(s.always), s.once...)
}

// begin takes the lock and brings the store up to date with the file.
func (s *Store) begin(force bool) {
	s.mu.Lock()
	s.syncLocked(force)
}

// end releases the lock, then reports what was noticed under it. The
// notify lock is taken before the store's is released, so changes are
// reported in the order they were noticed.
func (s *Store) end() {
	changes, observe := s.pending, s.observe
	s.pending = nil
	s.notifyMu.Lock()
	s.mu.Unlock()
	defer s.notifyMu.Unlock()
	if observe == nil {
		return
	}
	for _, c := range changes {
		observe(c)
	}
}

// syncLocked reads the file again when it or its folder changed since the
// store last read or wrote it (or always, with force), and records what
// changed. Called with s.mu held.
//
// While the file is refused, s.always keeps the last view that was
// trusted, so that repairing the file (a chmod back to 0600) restores
// those grants, while anything that appeared in the meantime is pending.
// A file refused when the store opened holds no trusted grants at all:
// once repaired, every grant in it is pending.
func (s *Store) syncLocked(force bool) {
	if !force && s.loaded && statState(s.path) == s.seen {
		return
	}
	first := !s.loaded
	list, st, err := load(s.path, s.uid)
	s.seen, s.loaded = st, true
	wasBroken, wasUnsaved := s.broken, s.unsaved
	if err != nil {
		s.broken = err
		if wasBroken == nil || wasBroken.Error() != err.Error() {
			s.pending = append(s.pending, Change{Kind: Unusable, Err: err})
		}
		s.notifyIf(wasBroken, wasUnsaved)
		return
	}
	s.broken = nil
	if wasBroken != nil && !first {
		s.pending = append(s.pending, Change{Kind: Usable})
	}
	// What was revoked here stays revoked, whatever a file written
	// before the revocation reached the disk still says.
	kept := slices.DeleteFunc(list, func(g Grant) bool { return s.revoked[g.ID] })
	stale := len(kept) != len(list)
	if !first {
		s.diff(s.always, kept, !st.exists)
	}
	s.always = kept
	if !stale && s.unsaved != nil {
		// The file no longer holds anything revoked here: someone
		// removed it by hand, or a write got through after all.
		s.unsaved, s.revoked = nil, map[string]bool{}
	}
	s.notifyIf(wasBroken, wasUnsaved)
}

// diff records the grants the file lost (revoked by hand) and gained
// (added by hand) between old and next, and marks the gained ones
// pending; the others keep their state. A grant changed in place is both.
func (s *Store) diff(old, next []Grant, removed bool) {
	oldByID := make(map[string]Grant, len(old))
	for _, g := range old {
		oldByID[g.ID] = g
	}
	nextByID := make(map[string]Grant, len(next))
	for _, g := range next {
		nextByID[g.ID] = g
	}
	for _, g := range old {
		if n, ok := nextByID[g.ID]; !ok || !sameGrant(n, g) {
			s.pending = append(s.pending, Change{Kind: HandRevoked, Grant: g, Removed: removed})
		}
	}
	for i, g := range next {
		o, ok := oldByID[g.ID]
		if ok && sameGrant(o, g) {
			next[i].Pending = o.Pending
			continue
		}
		next[i].Pending = true
		s.pending = append(s.pending, Change{Kind: HandAdded, Grant: next[i]})
	}
}

// sameGrant reports whether a and b are the same always grant.
func sameGrant(a, b Grant) bool {
	return a.ID == b.ID && a.Client == b.Client && a.Capability == b.Capability && a.Scope == b.Scope &&
		a.Project == b.Project && a.Created.Equal(b.Created)
}

// setUnsaved records that memory is ahead of the file, and why. Called
// with s.mu held.
func (s *Store) setUnsaved(err error) {
	was := s.unsaved
	s.unsaved = err
	s.notifyIf(s.broken, was)
}

// writeLocked writes the file as build makes it from the grants in
// memory, and puts that in memory; on success the revocations it carries
// are settled. If the file changes under it (a hand edit while the
// temporary file was written and synced), it reads the change and builds
// again, so that the edit is not written over. Called with s.mu held.
func (s *Store) writeLocked(build func(cur []Grant) []Grant) ([]Grant, error) {
	wasBroken, wasUnsaved := s.broken, s.unsaved
	defer s.notifyIf(wasBroken, wasUnsaved)
	for attempt := 1; ; attempt++ {
		list := build(s.always)
		seen := s.seen
		st, err := s.persist(s.path, file{Version: fileVersion, Grants: list}, s.uid,
			func() bool { return statState(s.path) == seen })
		if errors.Is(err, errChanged) && attempt < 3 {
			s.syncLocked(false)
			if s.broken != nil {
				return nil, s.broken
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		s.always = list
		s.seen, s.loaded = st, true
		if s.unsaved != nil {
			s.pending = append(s.pending, Change{Kind: Saved})
		}
		s.unsaved, s.revoked = nil, map[string]bool{}
		return list, nil
	}
}

// notifyIf wakes the Changed waiters when broken or unsaved changed from
// the values given. Called with s.mu held.
func (s *Store) notifyIf(wasBroken, wasUnsaved error) {
	if errText(wasBroken) != errText(s.broken) || errText(wasUnsaved) != errText(s.unsaved) {
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// newID is a random grant id, e.g. "g1a2b3c4d5e".
func newID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "g" + hex.EncodeToString(b[:])
}
