package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/peercred"
)

// HelloVersion is the only hello version this gateway speaks.
const HelloVersion = 1

// MaxHello bounds the hello line.
const MaxHello = 64 << 10

// maxClientName bounds the client name (authz keys grants by it).
const maxClientName = 128

// Hello is the first line a client sends:
//
//	{"hello":"phantom","version":1,"pid":N,"client":"NAME","tab_state":"PATH or empty"}
type Hello struct {
	// Hello is always "phantom".
	Hello string `json:"hello"`
	// Version is the hello version, HelloVersion.
	Version int `json:"version"`
	// PID is the caller's process id; it must be the socket peer's.
	PID int `json:"pid"`
	// Client names the agent (e.g. "claude"); grants are keyed by it.
	Client string `json:"client"`
	// TabState is the path of the caller's tab-state file
	// ($PHANTOM_TAB_STATE), empty when the bridge does not know it. It is a
	// hint: the tab comes from the process tree, and a claim that
	// disagrees with it is refused.
	TabState string `json:"tab_state"`
}

// Refusal is why a handshake failed: a stable code and a message for the
// human reading the bridge's stderr.
type Refusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

func refuse(code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Refusal codes.
const (
	RefuseBadHello       = "bad_hello"
	RefuseVersion        = "unknown_version"
	RefusePeerUnreadable = "unreadable_peer"
	RefusePIDNamespace   = "pid_namespace"
	RefuseUID            = "uid_mismatch"
	RefusePID            = "pid_mismatch"
	RefuseTabState       = "bad_tab_state"
	RefuseNotInTab       = "not_in_tab"
	RefusePeerGone       = "peer_gone"
	RefuseVouch          = "bad_vouch"
)

// refusalLine renders r as the one JSON error line sent before closing.
func refusalLine(r *Refusal) []byte {
	b, _ := json.Marshal(struct {
		Error *Refusal `json:"error"`
	}{r})
	return append(b, '\n')
}

// okLine is the line sent after a successful handshake, so that the bridge
// can tell acceptance from refusal before it forwards anything. The bridge
// does not forward it.
func okLine(connID string) []byte {
	b, _ := json.Marshal(struct {
		Hello        string `json:"hello"`
		Version      int    `json:"version"`
		ConnectionID string `json:"connection_id"`
	}{"ok", HelloVersion, connID})
	return append(b, '\n')
}

// ParseHello reads a hello line strictly: every field present, nothing
// else, a known version, a printable client name and an absolute tab-state
// path (or none).
func ParseHello(line []byte) (Hello, *Refusal) {
	if len(line) > MaxHello {
		return Hello{}, refuse(RefuseBadHello, "hello longer than %d bytes", MaxHello)
	}
	var raw struct {
		Hello    *string `json:"hello"`
		Version  *int    `json:"version"`
		PID      *int    `json:"pid"`
		Client   *string `json:"client"`
		TabState *string `json:"tab_state"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Hello{}, refuse(RefuseBadHello, "hello is not the expected JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Hello{}, refuse(RefuseBadHello, "hello has trailing data")
	}
	if raw.Hello == nil || *raw.Hello != "phantom" {
		return Hello{}, refuse(RefuseBadHello, `hello must start with "hello":"phantom"`)
	}
	if raw.Version == nil {
		return Hello{}, refuse(RefuseBadHello, "hello lacks a version")
	}
	if *raw.Version != HelloVersion {
		return Hello{}, refuse(RefuseVersion, "hello version %d is not known; this Phantom speaks version %d", *raw.Version, HelloVersion)
	}
	if raw.PID == nil || raw.Client == nil || raw.TabState == nil {
		return Hello{}, refuse(RefuseBadHello, "hello must carry pid, client and tab_state")
	}
	h := Hello{Hello: *raw.Hello, Version: *raw.Version, PID: *raw.PID, Client: *raw.Client, TabState: *raw.TabState}
	if h.PID < 0 {
		return Hello{}, refuse(RefuseBadHello, "pid %d is not a process id", h.PID)
	}
	if err := checkClientName(h.Client); err != nil {
		return Hello{}, refuse(RefuseBadHello, "client name: %v", err)
	}
	if h.TabState != "" {
		if !filepath.IsAbs(h.TabState) || len(h.TabState) > 4096 || !utf8.ValidString(h.TabState) ||
			bytes.ContainsRune([]byte(h.TabState), 0) {
			return Hello{}, refuse(RefuseBadHello, "tab_state %q is not an absolute path", h.TabState)
		}
	}
	return h, nil
}

// checkClientName accepts 1–128 bytes of printable UTF-8: the name is shown
// to the human on permission sheets, so it must not carry control
// characters or escape sequences.
func checkClientName(name string) error {
	if name == "" {
		return errors.New("empty")
	}
	if len(name) > maxClientName {
		return fmt.Errorf("longer than %d bytes", maxClientName)
	}
	if !utf8.ValidString(name) {
		return errors.New("not UTF-8")
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("contains the non-printable character %U", r)
		}
	}
	return nil
}

// peer is what the handshake learnt about a verified client.
type peer struct {
	hello Hello
	// caller is where the process runs, from the kernel: outside Phantom,
	// in a tab, or inside but in no tab.
	caller guard.Caller
	// program is the program behind the connection as the process tree
	// shows it (lineage.ClientProgram): standing grants are for it.
	program string
}

// tabID is the peer's tab, "" when it runs in none.
func (p peer) tabID() string { return p.caller.TabID }

// credsReader reads a connection's peer credentials; tests inject one.
type credsReader func(syscall.Conn) (peerCreds, error)

// peerCreds is the part of peercred.Creds the handshake uses.
type peerCreds interface {
	IDs() (pid, uid int)
	Alive() error
	Close()
}

// realCreds adapts peercred.Creds.
type realCreds struct{ c peercred.Creds }

func (r *realCreds) IDs() (int, int) { return r.c.PID, r.c.UID }
func (r *realCreds) Alive() error    { return r.c.Alive() }
func (r *realCreds) Close()          { r.c.Close() }

func readPeerCreds(conn syscall.Conn) (peerCreds, error) {
	c, err := peercred.Get(conn)
	if err != nil {
		return nil, err
	}
	return &realCreds{c}, nil
}

// locator places a process: outside Phantom, or inside and in which tab
// (guard.Locate over the instance's process tree and terminald).
type locator func(pid int) (guard.Caller, error)

// verifier checks hellos against the socket and the process tree.
type verifier struct {
	tabDir string
	uid    int
	creds  credsReader
	locate locator
	// vouchee checks the vouch of a sandbox's connect gate; nil takes
	// none.
	vouchee vouchee
	// program names the program behind a peer pid; nil names none.
	program func(pid int) string
}

// verify checks h against conn's peer: same pid, visible pid namespace,
// same uid; places the peer in the process tree, checks the tab the hello
// claims (if any) is that one, and — after /proc was read — that the peer
// still runs, through its pidfd, so a reused pid cannot pass. With a
// vouch (vc not nil), the peer is a sandbox's connect gate, and the hello
// must be from the process it vouches for.
func (v *verifier) verify(conn syscall.Conn, h Hello, vc *vouched) (peer, *Refusal) {
	creds, err := v.creds(conn)
	if err != nil {
		return peer{}, refuse(RefusePeerUnreadable, "cannot read the socket peer's credentials: %v", err)
	}
	defer creds.Close()
	pid, uid := creds.IDs()
	switch {
	case pid == 0:
		return peer{}, refuse(RefusePIDNamespace, "the peer runs in another pid namespace (its pid reads as 0); run the bridge in Phantom's pid namespace")
	case uid != v.uid:
		return peer{}, refuse(RefuseUID, "the peer runs as uid %d, Phantom as uid %d", uid, v.uid)
	case vc != nil:
		return v.verifyVouched(creds, pid, h, *vc)
	case pid != h.PID:
		return peer{}, refuse(RefusePID, "the hello says pid %d but the socket's peer is pid %d", h.PID, pid)
	}
	c, err := v.locate(pid)
	if err != nil {
		return peer{}, refuse(RefusePeerUnreadable, "cannot tell where process %d runs: %v", pid, err)
	}
	if r := v.checkClaim(h.TabState, c); r != nil {
		return peer{}, r
	}
	prog := v.programOf(pid)
	if err := creds.Alive(); err != nil {
		return peer{}, refuse(RefusePeerGone, "the peer process %d is gone: %v", pid, err)
	}
	return peer{hello: h, caller: c, program: prog}, nil
}

// verifyVouched is verify for a connection a sandbox's gate (the peer,
// monitor) made for the process vc names.
func (v *verifier) verifyVouched(creds peerCreds, monitor int, h Hello, vc vouched) (peer, *Refusal) {
	if v.vouchee == nil {
		return peer{}, refuse(RefuseVouch, "this gateway takes no vouch lines")
	}
	if h.PID != vc.pid {
		return peer{}, refuse(RefusePID, "the hello says pid %d but the sandbox's connect gate connected for pid %d", h.PID, vc.pid)
	}
	c, err := v.vouchee(monitor, vc)
	if err != nil {
		return peer{}, refuse(RefuseVouch, "%v", err)
	}
	if r := v.checkClaim(h.TabState, c); r != nil {
		return peer{}, r
	}
	prog := v.programOf(vc.pid)
	if err := creds.Alive(); err != nil {
		return peer{}, refuse(RefusePeerGone, "the sandbox monitor %d is gone: %v", monitor, err)
	}
	return peer{hello: h, caller: c, program: prog}, nil
}

// programOf names the program behind pid; "" when it cannot be read,
// which no standing grant covers.
func (v *verifier) programOf(pid int) string {
	if v.program == nil {
		return ""
	}
	return v.program(pid)
}

// checkClaim compares the tab a hello claims (the tab-state path the
// bridge found in its environment) with the tab the process runs in. An
// empty claim is filled in from the process: clients such as Codex and the
// TypeScript SDK strip the environment of the servers they start.
func (v *verifier) checkClaim(tabState string, c guard.Caller) *Refusal {
	if tabState == "" {
		return nil
	}
	claimed, ok := v.claimedTab(tabState)
	if !ok {
		return refuse(RefuseTabState, "tab_state %s is not a file of Phantom's tab-state directory %s", tabState, v.tabDir)
	}
	switch {
	case !c.Inside:
		return refuse(RefuseNotInTab, "the hello claims tab %s, but process %d does not run inside Phantom", claimed, c.PID)
	case c.TabID != claimed:
		where := "in no tab (it left its tab's process tree)"
		if c.TabID != "" {
			where = "in tab " + c.TabID
		}
		return refuse(RefuseNotInTab, "the hello claims tab %s, but process %d runs %s", claimed, c.PID, where)
	}
	return nil
}

// claimedTab reads the tab id out of a tab-state path: <dir>/<id>.json.
// The file itself is not read: it proves nothing.
func (v *verifier) claimedTab(path string) (string, bool) {
	if filepath.Clean(path) != path || filepath.Dir(path) != v.tabDir {
		return "", false
	}
	id, ok := strings.CutSuffix(filepath.Base(path), ".json")
	return id, ok && id != "" && !strings.HasPrefix(id, ".")
}
