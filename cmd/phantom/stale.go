package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabstate"
)

// cleanStale removes what a crash leaves behind in the instance of l, and
// says what it removed: pid files naming no live daemon of this instance,
// daemon and MCP sockets nobody listens on, and tab-state files whose tab
// leader is gone. Call it holding the instance lock (lockInstance), so that
// no up is starting a daemon meanwhile.
//
// Nothing that may still be in use goes: tab-state files are judged only
// while terminald is down, and one stays while its leader (pid and start
// time) runs, since a terminald that comes back may adopt the tab (see
// terminald/holder); a socket stays while anything accepts on it.
func cleanStale(l paths.Layout) {
	var removed []string
	rm := func(path string) {
		if err := os.Remove(path); err == nil {
			rel, err := filepath.Rel(l.Runtime, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				rel = path
			}
			removed = append(removed, rel)
		}
	}
	terminaldLive := false
	for _, name := range paths.Daemons {
		path := l.PIDFile(name)
		rec, err := daemon.ReadPIDFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			rm(path)
		case instanceDaemon(l, name, rec) != nil:
			rm(path)
		case name == "terminald":
			terminaldLive = true
		}
		if ep, err := daemon.ParseAddr(l.DaemonAddr(name)); err == nil && ep.Network == "unix" {
			if staleSocket(ep.Address) {
				rm(ep.Address)
			}
		}
	}
	if staleSocket(l.MCPSocket) {
		rm(l.MCPSocket)
	}
	// A terminald that runs owns its tab-state files (and may be writing
	// one); only those of a terminald that is gone are judged here.
	dir := l.TabStateDir()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if terminaldLive {
			break
		}
		path := filepath.Join(dir, e.Name())
		switch {
		case strings.HasPrefix(e.Name(), ".tabstate-"):
			rm(path) // a write that terminald did not finish
		case strings.HasSuffix(e.Name(), ".json"):
			if !tabLeaderRuns(path) {
				rm(path)
			}
		}
	}
	if len(removed) > 0 {
		fmt.Printf("removed what a crash left behind: %s\n", strings.Join(removed, ", "))
	}
}

// tabLeaderRuns reports whether the tab-state file at path names a tab
// leader that still runs (same pid, same start time). An unreadable or
// invalid file names none.
func tabLeaderRuns(path string) bool {
	s, err := tabstate.Read(path)
	if err != nil {
		return errors.Is(err, os.ErrPermission) // not ours to judge
	}
	st, err := procfs.ReadStat(s.LeaderPID)
	return err == nil && st.State != 'Z' && (s.LeaderStart == 0 || st.StartTime == s.LeaderStart)
}

// staleSocket reports whether path is a Unix socket that nobody listens on
// (connecting is refused): what a daemon killed with -9 leaves. A path that
// is missing, not a socket, or answers is not stale.
func staleSocket(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().Type() != os.ModeSocket {
		return false
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
