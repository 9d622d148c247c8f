package peercred

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// A vouch line is what a sandbox's connect supervisor (the gate of
// terminald/sandbox) writes first on a connection it made for a process
// of its sandbox: the kernel then reports the supervisor as the socket's
// peer, so the line says which process asked. Only a reader that has
// checked the peer really is such a supervisor may believe it, and only
// for that supervisor's own descendants.
type vouch struct {
	Vouch string `json:"vouch"` // always "phantom"
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// VouchLine is the line that vouches for process pid, started at tick
// start (/proc/PID/stat field 22).
func VouchLine(pid int, start uint64) []byte {
	b, _ := json.Marshal(vouch{Vouch: "phantom", PID: pid, Start: start})
	return append(b, '\n')
}

// IsVouch reports whether line is meant as a vouch line, so that a
// reader can tell it from a hello before it checks the writer.
func IsVouch(line []byte) bool { return bytes.HasPrefix(line, []byte(`{"vouch":`)) }

// ParseVouch reads a vouch line strictly.
func ParseVouch(line []byte) (pid int, start uint64, err error) {
	var v vouch
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return 0, 0, fmt.Errorf("vouch line is not the expected JSON object: %w", err)
	}
	if v.Vouch != "phantom" || v.PID <= 0 {
		return 0, 0, fmt.Errorf("vouch line names no process (%q, pid %d)", v.Vouch, v.PID)
	}
	return v.PID, v.Start, nil
}
