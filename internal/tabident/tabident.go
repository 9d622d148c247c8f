// Package tabident decides which Phantom tab a process runs in, from the
// tab-state files terminald writes and /proc. The gateway uses it to verify
// an agent's claim to a tab; terminald and authz use it to tell the human
// (outside every tab) from programs inside tabs, which must never answer a
// permission sheet or skip one.
//
// A process belongs to a tab when its session and controlling terminal are
// the tab's (read from /proc/<pid>/stat, parsed after the last ')'), or when
// it descends from the tab's session leader — an agent may start its MCP
// servers in a new session, but keeps its parentage. The leader is matched
// by pid and start time, so a reused pid does not pass.
package tabident

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabstate"
)

// ErrNotInTab means the process does not belong to the tab.
var ErrNotInTab = errors.New("process does not run in the tab")

// Verify checks that pid runs in the tab st describes.
func Verify(fs procfs.FS, st tabstate.State, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("pid %d: %w", pid, ErrNotInTab)
	}
	leader, err := fs.Stat(st.LeaderPID)
	if err != nil || leader.StartTime != st.LeaderStart {
		return fmt.Errorf("tab %s: its session leader %d is gone: %w", st.TabID, st.LeaderPID, ErrNotInTab)
	}
	self, err := fs.Stat(pid)
	if err != nil {
		return fmt.Errorf("read process %d: %w", pid, err)
	}
	if self.Session == st.Session && uint64(self.TTYNr) == st.TTYNr && st.TTYNr != 0 {
		return nil
	}
	// Walk the parent chain: a process in a new session still descends
	// from the tab's leader.
	seen := map[int]bool{}
	for p := self; p.PPID > 1 && !seen[p.PID]; {
		seen[p.PID] = true
		if p.PPID == st.LeaderPID {
			return nil
		}
		next, err := fs.Stat(p.PPID)
		if err != nil || next.StartTime > p.StartTime {
			break // the parent is gone, or its pid was reused
		}
		p = next
	}
	return fmt.Errorf("process %d (session %d, tty %d) is not in tab %s (session %d, tty %d): %w",
		pid, self.Session, self.TTYNr, st.TabID, st.Session, st.TTYNr, ErrNotInTab)
}

// Find returns the tab that pid runs in, trying every tab-state file in
// dir; ok is false when it runs in none (the human's own terminal, or a
// daemon).
func Find(fs procfs.FS, dir string, pid int) (st tabstate.State, ok bool, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return tabstate.State{}, false, nil
	}
	if err != nil {
		return tabstate.State{}, false, fmt.Errorf("list tab states in %s: %w", dir, err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		st, err := tabstate.Read(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // a tab closing right now
		}
		if Verify(fs, st, pid) == nil {
			return st, true, nil
		}
	}
	return tabstate.State{}, false, nil
}
