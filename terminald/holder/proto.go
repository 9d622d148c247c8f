package holder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Version is the holder protocol's version, sent in the hello. A holder
// keeps running across terminald upgrades, so a newer terminald must speak
// the version of the holder it finds (the hello says which).
const Version = 1

// MaxMsg bounds one message (a SOCK_SEQPACKET datagram): a spawn carries
// the tab's whole environment. Larger blobs (the workspace state) travel
// in a memfd.
const MaxMsg = 128 << 10

// maxFiles bounds the descriptors one message carries.
const maxFiles = 3

// Operations. Requests go from terminald to the holder and get one
// opReply with the same Seq (restore first sends its opTab and opState
// messages); opExit goes from the holder to terminald whenever a tab's
// program was reaped.
const (
	opHello    = "hello"    // → version; reply: version, pid (the holder's)
	opSpawn    = "spawn"    // → tab, path, argv, env, dir; files: slave, master, ring; reply: pid, start
	opRelease  = "release"  // → tab: close the tab's master and ring (its hangup, once terminald's copy closes too)
	opState    = "state"    // → files: a memfd with the workspace state
	opRestore  = "restore"  // → nothing; the holder sends opTab for each tab, opState, then the reply
	opTab      = "tab"      // ← tab, pid, start, exited, code; files: master, ring
	opExit     = "exit"     // ← tab, pid, code
	opShutdown = "shutdown" // → the holder kills what is left and exits (phantom down)
	opReply    = "reply"    // either way: seq, error or the answer's fields
)

// msg is one protocol message: a JSON object in one datagram, with its
// descriptors (SCM_RIGHTS) alongside.
type msg struct {
	Op      string   `json:"op"`
	Seq     uint64   `json:"seq,omitempty"`
	Version int      `json:"version,omitempty"`
	Tab     string   `json:"tab,omitempty"`
	Path    string   `json:"path,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Env     []string `json:"env,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	PID     int      `json:"pid,omitempty"`
	Start   uint64   `json:"start,omitempty"`
	Exited  bool     `json:"exited,omitempty"`
	Code    int      `json:"code,omitempty"`
	Error   string   `json:"error,omitempty"`

	files []*os.File
}

// filesFor is how many descriptors each operation carries.
var filesFor = map[string]int{
	opHello: 0, opSpawn: 3, opRelease: 0, opState: 1, opRestore: 0,
	opTab: 2, opExit: 0, opShutdown: 0, opReply: 0,
}

// errBadMsg marks a message that breaks the protocol; the connection is
// dropped.
var errBadMsg = errors.New("bad holder message")

// decode parses and checks one datagram that arrived with nfiles
// descriptors. Everything a handler relies on is checked here, so that
// handlers never see a malformed message; the descriptors are the
// caller's to close when decode fails.
func decode(b []byte, nfiles int) (msg, error) {
	var m msg
	if len(b) > MaxMsg {
		return m, fmt.Errorf("%w: %d bytes, more than %d", errBadMsg, len(b), MaxMsg)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return msg{}, fmt.Errorf("%w: %v", errBadMsg, err)
	}
	if dec.More() {
		return msg{}, fmt.Errorf("%w: data after the message", errBadMsg)
	}
	want, ok := filesFor[m.Op]
	if !ok {
		return msg{}, fmt.Errorf("%w: unknown op %q", errBadMsg, m.Op)
	}
	if nfiles != want {
		return msg{}, fmt.Errorf("%w: %s carries %d descriptors, want %d", errBadMsg, m.Op, nfiles, want)
	}
	bad := func(why string) (msg, error) { return msg{}, fmt.Errorf("%w: %s: %s", errBadMsg, m.Op, why) }
	switch m.Op {
	case opHello:
		if m.Version <= 0 {
			return bad("no version")
		}
	case opSpawn:
		if err := checkTab(m.Tab); err != nil {
			return bad(err.Error())
		}
		if !filepath.IsAbs(m.Path) || strings.IndexByte(m.Path, 0) >= 0 {
			return bad(fmt.Sprintf("path %q is not absolute", m.Path))
		}
		if !filepath.IsAbs(m.Dir) || strings.IndexByte(m.Dir, 0) >= 0 {
			return bad(fmt.Sprintf("dir %q is not absolute", m.Dir))
		}
		if len(m.Argv) == 0 {
			return bad("empty argv")
		}
		for _, s := range append(append([]string(nil), m.Argv...), m.Env...) {
			if strings.IndexByte(s, 0) >= 0 {
				return bad("a NUL byte in argv or env")
			}
		}
	case opRelease:
		if err := checkTab(m.Tab); err != nil {
			return bad(err.Error())
		}
	case opTab, opExit:
		if err := checkTab(m.Tab); err != nil {
			return bad(err.Error())
		}
		if m.PID <= 0 {
			return bad(fmt.Sprintf("pid %d", m.PID))
		}
	case opReply:
		if m.Seq == 0 {
			return bad("no seq")
		}
	}
	if m.Op != opReply && m.Op != opTab && m.Op != opExit && m.Seq == 0 {
		return bad("no seq")
	}
	return m, nil
}

// checkTab accepts the tab ids terminald makes: "t" and a number.
func checkTab(id string) error {
	if len(id) < 2 || len(id) > 12 || id[0] != 't' {
		return fmt.Errorf("tab id %q", id)
	}
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return fmt.Errorf("tab id %q", id)
		}
	}
	return nil
}

// encode is the datagram for m.
func encode(m msg) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxMsg {
		return nil, fmt.Errorf("holder message %s is %d bytes, more than %d", m.Op, len(b), MaxMsg)
	}
	return b, nil
}
