package authz

import (
	"strconv"
	"strings"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// connectionAlive reports whether a connection may still hold once grants.
// A connection bound to a process starts "proc-<pid>-<start time>"
// (guard.ProcessConnection): a process that calls a daemon directly is
// such a connection, and the gateway binds each of its connections to the
// bridge process. It has ended when no process with that pid and start
// time runs — whether or not anyone said so (EndConnection). Other
// connections end when the gateway says so.
func connectionAlive(fs procfs.FS) func(conn string) bool {
	return func(conn string) bool {
		rest, ok := strings.CutPrefix(conn, "proc-")
		if !ok {
			return true
		}
		pidText, startText, ok := strings.Cut(rest, "-")
		startText, _, _ = strings.Cut(startText, "-") // the gateway's own suffix
		pid, err1 := strconv.Atoi(pidText)
		start, err2 := strconv.ParseUint(startText, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return false // malformed: no process holds it
		}
		st, err := fs.Stat(pid)
		return err == nil && st.StartTime == start && st.State != 'Z'
	}
}
