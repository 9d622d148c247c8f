package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/toolreg"
)

// fakeCreds are injected peer credentials.
type fakeCreds struct {
	pid, uid int
	gone     bool
}

func (f *fakeCreds) IDs() (int, int) { return f.pid, f.uid }
func (f *fakeCreds) Alive() error {
	if f.gone {
		return io.EOF
	}
	return nil
}
func (f *fakeCreds) Close() {}

func inject(c *fakeCreds) credsReader {
	return func(syscall.Conn) (peerCreds, error) { return c, nil }
}

// TestVerifyCreds checks each refusal the peer's credentials can cause,
// with injected credentials (a real peer in another pid namespace is not
// something a test can make here).
func TestVerifyCreds(t *testing.T) {
	uid := os.Getuid()
	h := Hello{Hello: "phantom", Version: 1, PID: 4242, Client: "x"}
	tests := []struct {
		name  string
		creds fakeCreds
		want  string
	}{
		{"ok", fakeCreds{pid: 4242, uid: uid}, ""},
		{"pid 0: another pid namespace", fakeCreds{pid: 0, uid: uid}, RefusePIDNamespace},
		{"another uid", fakeCreds{pid: 4242, uid: uid + 1}, RefuseUID},
		{"pid mismatch", fakeCreds{pid: 4243, uid: uid}, RefusePID},
		{"gone after the checks", fakeCreds{pid: 4242, uid: uid, gone: true}, RefusePeerGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := verifier{tabDir: t.TempDir(), uid: uid, creds: inject(&tt.creds),
				locate: func(pid int) (guard.Caller, error) { return guard.Caller{PID: pid}, nil }}
			_, r := v.verify(nil, h, nil)
			got := ""
			if r != nil {
				got = r.Code
			}
			if got != tt.want {
				t.Errorf("verify = %v, want code %q", r, tt.want)
			}
		})
	}
}

// TestCheckClaim checks the tab a hello claims against the tab the kernel
// places the process in: a missing claim is filled in, a wrong one is
// refused, and the claimed file is never trusted.
func TestCheckClaim(t *testing.T) {
	dir := "/run/ph/tabs"
	v := verifier{tabDir: dir}
	inT1 := guard.Caller{Inside: true, PID: 7, TabID: "t1"}
	leftTab := guard.Caller{Inside: true, PID: 7}
	outside := guard.Caller{PID: 7}
	tests := []struct {
		name  string
		claim string
		c     guard.Caller
		want  string
	}{
		{"no claim, in a tab: filled in", "", inT1, ""},
		{"no claim, outside", "", outside, ""},
		{"right tab", dir + "/t1.json", inT1, ""},
		{"another tab", dir + "/t2.json", inT1, RefuseNotInTab},
		{"claims a tab, runs outside", dir + "/t1.json", outside, RefuseNotInTab},
		{"claims a tab, left it", dir + "/t1.json", leftTab, RefuseNotInTab},
		{"outside the directory", "/tmp/t1.json", inT1, RefuseTabState},
		{"dot-dot", dir + "/../tabs/t1.json", inT1, RefuseTabState},
		{"not a tab-state name", dir + "/t1.txt", inT1, RefuseTabState},
		{"hidden file", dir + "/.t1.json", inT1, RefuseTabState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if r := v.checkClaim(tt.claim, tt.c); r != nil {
				got = r.Code
			}
			if got != tt.want {
				t.Errorf("checkClaim(%q) = %q, want %q", tt.claim, got, tt.want)
			}
		})
	}
}

// TestParseHello covers good and malformed hellos.
func TestParseHello(t *testing.T) {
	good := `{"hello":"phantom","version":1,"pid":12,"client":"claude","tab_state":"/run/x/tabs/t1.json"}`
	if h, r := ParseHello([]byte(good)); r != nil || h.PID != 12 || h.Client != "claude" {
		t.Fatalf("good hello: %+v %v", h, r)
	}
	bad := map[string]string{
		"not JSON":         `hello`,
		"wrong magic":      `{"hello":"ghostty","version":1,"pid":1,"client":"c","tab_state":""}`,
		"no pid":           `{"hello":"phantom","version":1,"client":"c","tab_state":""}`,
		"no tab_state":     `{"hello":"phantom","version":1,"pid":1,"client":"c"}`,
		"unknown field":    `{"hello":"phantom","version":1,"pid":1,"client":"c","tab_state":"","x":1}`,
		"control in name":  `{"hello":"phantom","version":1,"pid":1,"client":"c\u001b[31m","tab_state":""}`,
		"empty name":       `{"hello":"phantom","version":1,"pid":1,"client":"","tab_state":""}`,
		"relative state":   `{"hello":"phantom","version":1,"pid":1,"client":"c","tab_state":"tabs/t1.json"}`,
		"negative pid":     `{"hello":"phantom","version":1,"pid":-1,"client":"c","tab_state":""}`,
		"trailing data":    `{"hello":"phantom","version":1,"pid":1,"client":"c","tab_state":""} {}`,
		"string version":   `{"hello":"phantom","version":"1","pid":1,"client":"c","tab_state":""}`,
		"over-long client": `{"hello":"phantom","version":1,"pid":1,"client":"` + strings.Repeat("a", 200) + `","tab_state":""}`,
	}
	for name, line := range bad {
		if _, r := ParseHello([]byte(line)); r == nil || r.Code != RefuseBadHello {
			t.Errorf("%s: %v, want %s", name, r, RefuseBadHello)
		}
	}
	if _, r := ParseHello([]byte(`{"hello":"phantom","version":2,"pid":1,"client":"c","tab_state":""}`)); r == nil || r.Code != RefuseVersion {
		t.Errorf("version 2: %v, want %s", r, RefuseVersion)
	}
}

// FuzzHello checks that the hello parser never panics and that an accepted
// hello round-trips.
func FuzzHello(f *testing.F) {
	f.Add([]byte(`{"hello":"phantom","version":1,"pid":12,"client":"claude","tab_state":"/run/x/tabs/t1.json"}`))
	f.Add([]byte(`{"hello":"phantom","version":1,"pid":0,"client":"é","tab_state":""}`))
	f.Add([]byte(`{"hello":"phantom","version":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, r := ParseHello(b)
		if r != nil {
			return
		}
		again, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		h2, r2 := ParseHello(again)
		if r2 != nil || h2 != h {
			t.Fatalf("accepted %q but not its re-encoding %q: %v", b, again, r2)
		}
	})
}

// TestTools checks the tool table built from the protos.
func TestTools(t *testing.T) {
	tt, err := buildTools()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := toolreg.Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(tt.byName) != len(reg.Tools()) {
		t.Errorf("the gateway lists %d tools, the registry has %d", len(tt.byName), len(reg.Tools()))
	}
	for _, rt := range reg.Tools() {
		tl := tt.byName[rt.Name]
		if tl == nil || tl.daemon != rt.Daemon || tl.method != rt.Method || tl.listing.Description == "" {
			t.Errorf("tool %s: gateway has %+v; want it routed to %s %s with a description", rt.Name, tl, rt.Daemon, rt.Method)
		}
	}
	for _, internal := range []string{"resize_terminal", "attach", "set_agent_state"} {
		if tt.byName[internal] != nil {
			t.Errorf("method %s must not be a tool", internal)
		}
	}
	schemaOf := func(tool string, s any) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(s.(json.RawMessage), &m); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return m
	}
	ro := schemaOf("read_output", tt.byName["read_output"].listing.InputSchema)
	props := ro["properties"].(map[string]any)
	lines := props["lines"].(map[string]any)
	if lines["type"] != "integer" || lines["minimum"] != float64(1) || !strings.Contains(lines["description"].(string), "default 100") {
		t.Errorf("read_output.lines schema = %v", lines)
	}
	if req, _ := ro["required"].([]any); len(req) != 1 || req[0] != "terminal_id" {
		t.Errorf("read_output required = %v, want [terminal_id]", ro["required"])
	}
	ct := schemaOf("create_terminal", tt.byName["create_terminal"].listing.InputSchema)
	for _, hidden := range []string{"command", "cols", "rows", "window_id"} {
		if _, ok := ct["properties"].(map[string]any)[hidden]; ok {
			t.Errorf("create_terminal schema shows hidden field %s", hidden)
		}
	}
	out := schemaOf("list_terminals", tt.byName["list_terminals"].listing.OutputSchema)
	term := out["properties"].(map[string]any)["terminals"].(map[string]any)["items"].(map[string]any)
	tprops := term["properties"].(map[string]any)
	if tprops["agent_state"].(map[string]any)["type"] != "string" || !slices.Equal(tprops["foreground_process"].(map[string]any)["type"].([]any), []any{"object", "null"}) {
		t.Errorf("list_terminals output schema: terminal = %v", term)
	}

	// The option's hints, and the spec's defaults for what it does not say.
	for _, h := range []struct {
		tool                                              string
		readOnly, idempotent, destructive, destructiveSet bool
	}{
		{tool: "run_command", destructive: true, destructiveSet: true},
		{tool: "read_output", readOnly: true, idempotent: true},
		{tool: "create_group", destructiveSet: true},
		{tool: "update_terminal", idempotent: true, destructiveSet: true},
	} {
		a := tt.byName[h.tool].listing.Annotations
		if a.ReadOnlyHint != h.readOnly || a.IdempotentHint != h.idempotent || (a.DestructiveHint != nil) != h.destructiveSet ||
			(a.DestructiveHint != nil && *a.DestructiveHint != h.destructive) || a.OpenWorldHint != nil {
			t.Errorf("%s annotations = %+v", h.tool, a)
		}
	}
	if !strings.HasPrefix(tt.byName["run_command"].listing.Description, "Types one command line") {
		t.Errorf("run_command description = %q", tt.byName["run_command"].listing.Description)
	}
}

// pipeConn is a net.Conn reading a fixed input and recording what is
// written, for driving a connection without a socket.
type pipeConn struct {
	r  *bytes.Reader
	mu sync.Mutex
	w  bytes.Buffer
}

func (p *pipeConn) Read(b []byte) (int, error) { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.w.Write(b)
}
func (p *pipeConn) Close() error                     { return nil }
func (p *pipeConn) LocalAddr() net.Addr              { return &net.UnixAddr{} }
func (p *pipeConn) RemoteAddr() net.Addr             { return &net.UnixAddr{} }
func (p *pipeConn) SetDeadline(time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// testServer is a gateway whose daemons are absent.
func testServer(t testing.TB) *Server {
	dir := t.TempDir()
	s, err := NewServer(Options{TabStateDir: dir, Addr: func(n string) string { return "unix://" + dir + "/" + n + ".sock" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.backends.close)
	return s
}

// serveInput runs one connection over input and returns the lines written
// (the hello answer first).
func serveInput(t testing.TB, s *Server, input []byte) []string {
	pc := &pipeConn{r: bytes.NewReader(input)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serveConn(context.Background(), pc, bufio.NewReaderSize(pc, 64<<10), peer{hello: Hello{Client: "fuzz", PID: 1}})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("connection did not end on input %q", input)
	}
	out := strings.TrimSuffix(pc.w.String(), "\n")
	return strings.Split(out, "\n")
}

// TestHugeLine checks that a line over MaxLine is answered and ends the
// connection.
func TestHugeLine(t *testing.T) {
	s := testServer(t)
	in := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`), bytes.Repeat([]byte("a"), MaxLine)...)
	in = append(in, "\"}}\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"...)
	lines := serveInput(t, s, in)
	if len(lines) != 2 || !strings.Contains(lines[1], `"code":-32600`) || !strings.Contains(lines[1], "longer than") {
		t.Errorf("got %q, want the hello answer and one error", lines)
	}
}

// FuzzFraming feeds arbitrary bytes to a connection: it must never panic
// or hang, and no request id may be answered more often than it was sent.
func FuzzFraming(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"list_terminals"}}` + "\n[1,2]\n\n{}"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))
	f.Add([]byte("\x00\xff{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"tools/list\"}"))
	s := testServer(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		lines := serveInput(t, s, b)
		if !strings.Contains(lines[0], `"hello":"ok"`) {
			t.Fatalf("first line %q", lines[0])
		}
		sent := map[string]int{}
		requests := 0
		for _, l := range bytes.Split(b, []byte("\n")) {
			requests++
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(l, &m) == nil && m.ID != nil {
				sent[string(m.ID)]++
			}
		}
		if len(lines)-1 > requests {
			t.Fatalf("%d responses to %d lines", len(lines)-1, requests)
		}
		got := map[string]int{}
		for _, l := range lines[1:] {
			var r struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("response %q is not JSON: %v", l, err)
			}
			if string(r.ID) == "null" {
				continue
			}
			got[string(r.ID)]++
			if got[string(r.ID)] > sent[string(r.ID)] {
				t.Fatalf("id %s answered %d times, sent %d times", r.ID, got[string(r.ID)], sent[string(r.ID)])
			}
		}
	})
}

// TestVerifyVouched checks connections a sandbox's connect gate made: the
// hello must be from the process the gate vouched for, the gate must pass
// the vouchee check, and without a vouchee no vouch is taken.
func TestVerifyVouched(t *testing.T) {
	uid := os.Getuid()
	h := Hello{Hello: "phantom", Version: 1, PID: 500, Client: "x"}
	ok := func(monitor int, v vouched) (guard.Caller, error) {
		return guard.Caller{Inside: true, ForAgent: true, PID: v.pid, TabID: "t3"}, nil
	}
	notMonitor := func(monitor int, v vouched) (guard.Caller, error) {
		return guard.Caller{}, fmt.Errorf("process %d is not the sandbox monitor of a tab", monitor)
	}
	tests := []struct {
		name    string
		vouchee vouchee
		vc      vouched
		gone    bool
		want    string
	}{
		{"ok", ok, vouched{pid: 500, start: 9}, false, ""},
		{"hello from another process", ok, vouched{pid: 501, start: 9}, false, RefusePID},
		{"the peer is no monitor", notMonitor, vouched{pid: 500, start: 9}, false, RefuseVouch},
		{"no vouchee", nil, vouched{pid: 500, start: 9}, false, RefuseVouch},
		{"monitor gone", ok, vouched{pid: 500, start: 9}, true, RefusePeerGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := verifier{tabDir: t.TempDir(), uid: uid, creds: inject(&fakeCreds{pid: 77, uid: uid, gone: tt.gone}), vouchee: tt.vouchee,
				locate: func(pid int) (guard.Caller, error) { return guard.Caller{PID: pid}, nil }}
			p, r := v.verify(nil, h, &tt.vc)
			got := ""
			if r != nil {
				got = r.Code
			}
			if got != tt.want {
				t.Fatalf("verify = %v, want code %q", r, tt.want)
			}
			if got == "" && (p.caller.PID != 500 || p.caller.TabID != "t3") {
				t.Errorf("verified caller = %+v, want pid 500 in tab t3 (the vouched-for process, not the gate)", p.caller)
			}
		})
	}
}
