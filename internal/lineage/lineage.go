// Package lineage tells, from the kernel's process tree, whether a process
// runs inside a Phantom instance, and which process under the instance's
// anchor it descends from. The anchor is the instance's holder
// (terminald/holder), the parent and child subreaper of every tab's
// program, which outlives terminald's crashes and upgrades; a terminald
// running without a holder is its own anchor.
//
// Why the process tree: every file in Phantom's folders (tab-state files,
// pid files) and every variable of a process can be rewritten by an agent
// that has a shell as the human's user. Its parentage it cannot rewrite:
// terminald is a child subreaper (terminald/reaper), so whatever a tab's
// processes do — fork, setsid, double-fork, exec — they stay terminald's
// descendants for as long as terminald runs. A process is inside Phantom
// exactly when walking its parents reaches the instance's terminald.
// (With a holder, read "the holder" for "terminald" in this paragraph: it
// is the subreaper that parents the tabs.)
//
// A pid is only a name and names are reused, so the walk checks each link
// with start times (a parent is never younger than its child) and callers
// re-check the process they asked about through a pidfd afterwards
// (peercred.Creds.Alive): then what was read was about that process.
package lineage

import (
	"errors"
	"fmt"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// maxDepth bounds a walk; process trees are rarely deeper than a few dozen.
const maxDepth = 4096

// maxRetries bounds how often a walk restarts a link whose parent vanished
// while it was being read (the child is being re-parented).
const maxRetries = 8

// IsTerminald says whether a process is an anchor of the instance: its
// holder, or its terminald (the name predates the holder).
type IsTerminald func(fs procfs.FS, st procfs.Stat) bool

// Tree walks the process tree of one instance.
type Tree struct {
	// FS is the /proc to read; procfs.Default in production.
	FS procfs.FS
	// IsTerminald recognises the instance's terminald among the ancestors.
	IsTerminald IsTerminald
}

// Place is where a process runs.
type Place struct {
	// Self is the process's stat as read during the walk.
	Self procfs.Stat
	// Inside is true when the process descends from the instance's
	// terminald.
	Inside bool
	// Terminald is the anchor the walk reached, when Inside: the
	// instance's holder, or its terminald when it runs without one.
	Terminald procfs.Stat
	// Top is the ancestor just below the anchor (or the process itself):
	// a tab's program, or a process that left its tab's tree. Set when
	// Inside.
	Top procfs.Stat
}

// ErrNotFound means the process does not exist (any more).
var ErrNotFound = errors.New("no such process")

// Locate walks pid's parents up to init, or up to the nearest process
// that is the instance's terminald.
func (t Tree) Locate(pid int) (Place, error) {
	if pid <= 0 {
		return Place{}, fmt.Errorf("locate process %d: not a process id: %w", pid, ErrNotFound)
	}
	self, err := t.FS.Stat(pid)
	if err != nil {
		if procfs.IsVanished(err) {
			return Place{}, fmt.Errorf("locate process %d: %w", pid, ErrNotFound)
		}
		return Place{}, fmt.Errorf("locate process %d: %w", pid, err)
	}
	// terminald itself is walked like any process: the real one reaches
	// init, but a terminald an agent started runs inside the real one.
	p := Place{Self: self}
	cur, retries := self, 0
	for range maxDepth {
		if cur.PPID <= 0 {
			return p, nil // reached init (or a kernel thread): outside
		}
		parent, err := t.FS.Stat(cur.PPID)
		if err != nil || parent.StartTime > cur.StartTime {
			// The parent exited (or its pid was already reused) while we
			// read: cur is being re-parented. Read cur again for its new
			// parent.
			if retries++; retries > maxRetries {
				return Place{}, fmt.Errorf("locate process %d: the parent of process %d keeps changing", pid, cur.PID)
			}
			again, err := t.FS.Stat(cur.PID)
			if err != nil || again.StartTime != cur.StartTime {
				if cur.PID == pid {
					return Place{}, fmt.Errorf("locate process %d: %w", pid, ErrNotFound)
				}
				// An ancestor vanished; its children were re-parented to
				// the nearest subreaper, so restart from the process.
				cur = self
				if again, err = t.FS.Stat(pid); err != nil || again.StartTime != self.StartTime {
					return Place{}, fmt.Errorf("locate process %d: %w", pid, ErrNotFound)
				}
			}
			cur = again
			continue
		}
		if t.IsTerminald(t.FS, parent) {
			p.Inside, p.Terminald, p.Top = true, parent, cur
			return p, nil
		}
		cur = parent
	}
	return Place{}, fmt.Errorf("locate process %d: its ancestry is deeper than %d", pid, maxDepth)
}

// Self recognises the calling process as terminald: what terminald itself
// uses.
func Self(pid int, start uint64) IsTerminald {
	return func(_ procfs.FS, st procfs.Stat) bool { return st.PID == pid && st.StartTime == start }
}
