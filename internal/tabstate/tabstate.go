// Package tabstate is the tab-state file: what terminald writes for every tab
// (mode 0600, in a 0700 directory) so that the gateway can verify that a
// process claiming to run in a tab really does. The claim is the file's path,
// which the tab exports as PHANTOM_TAB_STATE; the proof is that the caller's
// session and controlling tty match the PTY named here, or that it descends
// from the session leader named here (pid and start time, so a reused pid does
// not pass).
package tabstate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Version is the file format version.
const Version = 1

// State is one tab's identity.
type State struct {
	// Version is the format version, Version.
	Version int `json:"version"`
	// TabID is the tab's id.
	TabID string `json:"tab_id"`
	// WindowID is the tab's window when the file was written.
	WindowID string `json:"window_id"`
	// PTY is the path of the tab's terminal device, e.g. /dev/pts/4.
	PTY string `json:"pty"`
	// TTYNr is the device number of the PTY as /proc/<pid>/stat reports it.
	TTYNr uint64 `json:"tty_nr"`
	// Session is the tab's session id (the leader's pid).
	Session int `json:"session"`
	// LeaderPID is the session leader's pid.
	LeaderPID int `json:"leader_pid"`
	// LeaderStart is the leader's start time in clock ticks since boot.
	LeaderStart uint64 `json:"leader_start"`
	// TerminaldPID is the pid of the terminald that wrote the file.
	TerminaldPID int `json:"terminald_pid"`
}

// Path is where the state of tab id lives inside dir.
func Path(dir, id string) string { return filepath.Join(dir, id+".json") }

// Write stores s atomically with mode 0600: a reader never sees half a file.
func Write(path string, s State) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode tab state %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tabstate-*")
	if err != nil {
		return fmt.Errorf("write tab state %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write tab state %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write tab state %s: %w", path, err)
	}
	// CreateTemp makes the file 0600 already; rename is atomic.
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write tab state %s: %w", path, err)
	}
	return nil
}

// Read loads and checks the state file at path.
func Read(path string) (State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return State{}, fmt.Errorf("read tab state: %w", err)
	}
	return Parse(path, b)
}

// Parse checks the contents b of the state file at path (named in errors),
// for a caller that read the file itself.
func Parse(path string, b []byte) (State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("tab state %s: %w", path, err)
	}
	if s.Version != Version {
		return State{}, fmt.Errorf("tab state %s: unknown version %d", path, s.Version)
	}
	if s.TabID == "" || s.LeaderPID <= 0 || s.Session <= 0 {
		return State{}, fmt.Errorf("tab state %s: missing tab id, leader or session", path)
	}
	return s, nil
}
