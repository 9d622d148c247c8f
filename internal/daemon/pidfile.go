package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// PIDRecord is what a daemon's pid file says: which process serves the
// daemon. The start time tells that process from a later one that got the
// same pid after it died.
type PIDRecord struct {
	// PID is the daemon's process id.
	PID int
	// Start is the process's start time in clock ticks since boot
	// (/proc/<pid>/stat field 22); 0 when the file does not say (a file
	// written by an older Phantom).
	Start uint64
}

// Alive reports whether the recorded process still runs: the pid exists,
// is not a zombie, and (when the record has one) started at Start.
func (r PIDRecord) Alive() bool {
	st, err := procfs.ReadStat(r.PID)
	if err != nil || st.State == 'Z' {
		return false
	}
	return r.Start == 0 || st.StartTime == r.Start
}

// WritePIDFile records this process in path: its pid and start time, on
// one line, written to a temporary file and renamed over path, so that a
// reader sees the old record or the new one, never half of one. Daemons
// call it once they serve (see WritePIDFileWhenServing), never before: a
// pid file names a process that answers, not one that may still fail to
// start.
func WritePIDFile(path string) error {
	st, err := procfs.ReadStat(os.Getpid())
	if err != nil {
		return fmt.Errorf("write pid file %s: read this process's start time: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write pid file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := fmt.Fprintf(tmp, "%d %d\n", os.Getpid(), st.StartTime); err != nil {
		tmp.Close()
		return fmt.Errorf("write pid file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write pid file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write pid file %s: %w", path, err)
	}
	return nil
}

// ReadPIDFile reads the record in path: "PID START", or just "PID" as
// older versions wrote it. A missing file is an error satisfying
// errors.Is(err, os.ErrNotExist).
func ReadPIDFile(path string) (PIDRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PIDRecord{}, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 || len(f) > 2 {
		return PIDRecord{}, fmt.Errorf("pid file %s: %q is not \"PID START\"", path, b)
	}
	var r PIDRecord
	if r.PID, err = strconv.Atoi(f[0]); err != nil || r.PID <= 0 {
		return PIDRecord{}, fmt.Errorf("pid file %s: %q is not a pid", path, f[0])
	}
	if len(f) == 2 {
		if r.Start, err = strconv.ParseUint(f[1], 10, 64); err != nil {
			return PIDRecord{}, fmt.Errorf("pid file %s: %q is not a start time", path, f[1])
		}
	}
	return r, nil
}

// RemoveOwnPIDFile removes path if it still names this process: a daemon
// that stops takes its record with it, but never one a successor wrote.
func RemoveOwnPIDFile(path string) {
	if r, err := ReadPIDFile(path); err == nil && r.PID == os.Getpid() {
		os.Remove(path)
	}
}

// servingHook is what Serve runs once the server is SERVING; see
// WritePIDFileWhenServing.
var servingHook struct {
	mu sync.Mutex
	f  func()
}

// WritePIDFileWhenServing makes this process's Serve write path (with
// WritePIDFile) once its listener accepts and its health service says
// SERVING. `phantom daemon` calls it before running the daemon, so that the
// pid file is the daemon's own statement that it serves, made after it won
// its socket, and never a record of a process that lost the race for it
// or died starting. A failure to write is returned by onErr, which may be
// nil. It applies to the first Serve of the process only.
func WritePIDFileWhenServing(path string, onErr func(error)) {
	servingHook.mu.Lock()
	defer servingHook.mu.Unlock()
	var once sync.Once
	servingHook.f = func() {
		once.Do(func() {
			if err := WritePIDFile(path); err != nil && onErr != nil {
				onErr(err)
			}
		})
	}
}

// runServingHook runs the hook set by WritePIDFileWhenServing, if any.
func runServingHook() {
	servingHook.mu.Lock()
	f := servingHook.f
	servingHook.mu.Unlock()
	if f != nil {
		f()
	}
}
