package main

// The connect gate (terminald/sandbox/gate): sockets the human creates
// after a sandboxed tab started — where the launcher's start-time masking
// cannot know them — are refused too, whatever the directory; the MCP
// socket (vouched for), the tab's own sockets and the network still work.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// connectAbstractPy connects to the abstract socket argv[1].
const connectAbstractPy = `import socket,sys
s=socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect("\0"+sys.argv[1])
print("connected")`

// connectTCPPy connects to 127.0.0.1:argv[1].
const connectTCPPy = `import socket,sys
s=socket.create_connection(("127.0.0.1",int(sys.argv[1])),5)
print("connected")`

func TestAdversarialGate(t *testing.T) {
	t.Parallel()
	requireWalls(t)
	py := worldPython3(t)
	env := adversaryUp(t)
	sbx := newAttacker(t, env, "sandboxed", "--sandbox")
	plain := newAttacker(t, env, "plain")
	if r := sbx.run("echo ready"); r.code != 0 {
		t.Fatalf("the sandboxed tab does not run jobs: %v", r)
	}

	// Made after both tabs started: the masking at start never saw them.
	later := []*humanSocket{
		listenAsHuman(t, "a new ssh ControlMaster in ~/.ssh", filepath.Join(env.Home, ".ssh", "cm-later.sock")),
		listenAsHuman(t, "a socket deep in the home directory", filepath.Join(env.Home, "a", "b", "c", "d", "e", "later.sock")),
		listenAsHuman(t, "a socket in the sandboxed tab's own directory", filepath.Join(sbx.dir, "human-later.sock")),
		listenAsHuman(t, "a socket in /var/tmp", filepath.Join(mkdirTempIn(t, "/var/tmp", "gate-"), "later.sock")),
	}
	abstract := fmt.Sprintf("gate-human-%d", os.Getpid())
	humanAbstract, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@" + abstract, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer humanAbstract.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	for _, h := range later {
		if r := sbx.run(shellCmd(py, "-c", connectPy, h.path)); r.code == 0 {
			t.Errorf("the sandboxed tab connected to %s (%s), made after it started: %v", h.name, h.path, r)
		}
		if n := h.accepted.Load(); n != 0 {
			t.Errorf("%s (%s) accepted %d connections from the sandboxed tab", h.name, h.path, n)
		}
		if r := plain.run(shellCmd(py, "-c", connectPy, h.path)); r.code != 0 {
			t.Errorf("a plain tab cannot connect to %s (%s) either, so the probe proves nothing: %v", h.name, h.path, r)
		}
	}
	// Through a symbolic link the tab makes in its own directory.
	link := filepath.Join(sbx.dir, "link.sock")
	if r := sbx.run(shellCmd("ln", "-s", later[0].path, link)); r.code != 0 {
		t.Fatalf("ln -s in the tab's own directory: %v", r)
	}
	if r := sbx.run(shellCmd(py, "-c", connectPy, link)); r.code == 0 {
		t.Errorf("the sandboxed tab connected to %s through its own symbolic link %s: %v", later[0].path, link, r)
	}
	if r := sbx.run(shellCmd(py, "-c", connectAbstractPy, abstract)); r.code == 0 {
		t.Errorf("the sandboxed tab connected to the human's abstract socket @%s: %v", abstract, r)
	}

	// What must keep working: the MCP socket, its own sockets in its
	// directory and its /tmp, and the network.
	if r := sbx.run(shellCmd(py, "-c", connectPy, env.Layout.MCPSocket)); r.code != 0 {
		t.Errorf("the sandboxed tab cannot connect to the MCP socket: %v", r)
	}
	for _, p := range []string{filepath.Join(sbx.dir, "own.sock"), "/tmp/own-gate.sock"} {
		if r := sbx.run(shellCmd(py, "-c", ownSocketPy, p)); r.code != 0 || !strings.Contains(r.out, "own socket works") {
			t.Errorf("a socket the sandboxed tab makes itself at %s does not work: %v", p, r)
		}
	}
	port := fmt.Sprint(tcp.Addr().(*net.TCPAddr).Port)
	if r := sbx.run(shellCmd(py, "-c", connectTCPPy, port)); r.code != 0 {
		t.Errorf("the sandboxed tab cannot reach 127.0.0.1:%s over TCP: %v", port, r)
	}
	// And the whole MCP path: a real client in the sandboxed tab, whose
	// connection the gate vouches for, is placed in its own tab.
	run := sbx.agent("gated", map[string]any{"op": "call", "tool": "list_terminals"})
	l := waitStep(t, run.read, 0)
	if f := failure(t, l); f != "" {
		t.Fatalf("list_terminals from the sandboxed tab through the gate failed: %s", f)
	}
	log, _ := os.ReadFile(filepath.Join(env.Layout.Logs, "gateway.log"))
	placed := false
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.Fields(line)
		placed = placed || slices.Contains(f, "msg=connected") && slices.Contains(f, "client=gated") && slices.Contains(f, "tab="+sbx.tab)
	}
	if !placed {
		t.Errorf("the gateway did not place the gated client in tab %s:\n%s", sbx.tab, log)
	}
}
