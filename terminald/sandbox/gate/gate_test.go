package gate

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/peercred"
)

// The test binary plays the sandbox too: GATE_CHILD=install confines
// itself, hands the listener over on fd 3 and execs itself again as
// GATE_CHILD=probe, which runs the probes of GATE_PROBES under the filter
// and prints one result per line.
func TestMain(m *testing.M) {
	switch os.Getenv("GATE_CHILD") {
	case "install":
		childInstall()
	case "probe":
		childProbe()
	case "listen":
		childListen()
	}
	os.Exit(m.Run())
}

func childInstall() {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("no_new_privs: %v", err)
	}
	l, err := Install()
	if err != nil {
		fail("%v", err)
	}
	if err := unix.Sendmsg(3, []byte{0}, unix.UnixRights(l), nil, 0); err != nil {
		fail("send the listener: %v", err)
	}
	unix.Close(l)
	unix.Close(3)
	os.Setenv("GATE_CHILD", "probe")
	if err := syscall.Exec("/proc/self/exe", os.Args, os.Environ()); err != nil {
		fail("exec: %v", err)
	}
}

// childListen is a process of the sandbox below its first: it listens on
// GATE_LISTEN, says so on stdout, and answers one connection.
func childListen() {
	l, err := net.Listen("unix", os.Getenv("GATE_LISTEN"))
	if err != nil {
		fail("listen: %v", err)
	}
	os.Stdout.WriteString("listening\n")
	if c, err := l.Accept(); err == nil {
		c.Write([]byte("own\n"))
		c.Close()
	}
	os.Exit(0)
}

func fail(format string, args ...any) {
	os.Stderr.WriteString("child: " + fmt.Sprintf(format, args...) + "\n")
	os.Exit(3)
}

// probe is one connect the sandbox tries.
type probe struct {
	Name string `json:"name"`
	// Kind: "connect" a stream socket to Addr; "own" listens on Addr
	// first; "dgram" creates a Unix datagram socket; "uring" sets up
	// io_uring; "tcp" connects to the TCP address Addr.
	Kind string `json:"kind"`
	Addr string `json:"addr"`
	// Dir is a working directory for relative addresses.
	Dir string `json:"dir,omitempty"`
}

func childProbe() {
	var probes []probe
	if err := json.Unmarshal([]byte(os.Getenv("GATE_PROBES")), &probes); err != nil {
		fail("probes: %v", err)
	}
	out := bufio.NewWriter(os.Stdout)
	for _, p := range probes {
		out.WriteString(p.Name + " " + runProbe(p) + "\n")
	}
	out.Flush()
	os.Exit(0)
}

// runProbe returns "ok" or the errno's name.
func runProbe(p probe) string {
	if p.Dir != "" {
		if err := os.Chdir(p.Dir); err != nil {
			return "chdir:" + err.Error()
		}
	}
	switch p.Kind {
	case "dgram":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return result(err)
	case "dgrampair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return result(err)
	case "streampair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return result(err)
	case "uring":
		_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, 0, 0)
		if errno == 0 {
			return "ok"
		}
		return result(errno)
	case "tcp":
		c, err := net.DialTimeout("tcp", p.Addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return result(err)
	case "child":
		// A socket a descendant of the sandbox's first process holds.
		cmd := exec.Command("/proc/self/exe", "-test.run=^$")
		cmd.Env = append(os.Environ(), "GATE_CHILD=listen", "GATE_LISTEN="+p.Addr)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			return "start:" + err.Error()
		}
		defer cmd.Wait()
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "listening\n" {
			return "child:" + line
		}
		return dial(p.Addr, true)
	case "own":
		l, err := net.Listen("unix", p.Addr)
		if err != nil {
			return "listen:" + result(err)
		}
		defer l.Close()
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Write([]byte("own\n"))
				c.Close()
			}
		}()
	}
	return dial(p.Addr, p.Kind == "own")
}

// dial connects a stream socket to the Unix address addr; an own socket
// must greet it with "own".
func dial(addr string, own bool) string {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "socket:" + result(err)
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: addr}); err != nil {
		return result(err)
	}
	if own {
		b := make([]byte, 4)
		if n, err := unix.Read(fd, b); err != nil || string(b[:n]) != "own\n" {
			return "read:" + result(err)
		}
	} else {
		unix.Write(fd, []byte("hello\n"))
	}
	return "ok"
}

func result(err error) string {
	if err == nil {
		return "ok"
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

// TestGate runs real connects under the filter: the human's sockets
// (path, abstract, through a symbolic link, relative), the MCP socket,
// the sandbox's own, TCP, and the calls the filter refuses outright.
func TestGate(t *testing.T) {
	dir := t.TempDir()
	human := listenUnix(t, filepath.Join(dir, "human.sock"))
	mcp := listenUnix(t, filepath.Join(dir, "mcp.sock"))
	abstractName := "gate-test-human-" + strconv.Itoa(os.Getpid())
	humanAbstract := listenUnix(t, "@"+abstractName)
	if err := os.Symlink(filepath.Join(dir, "human.sock"), filepath.Join(dir, "link.sock")); err != nil {
		t.Fatal(err)
	}
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
	probes := []probe{
		{Name: "human", Kind: "connect", Addr: filepath.Join(dir, "human.sock")},
		{Name: "link", Kind: "connect", Addr: filepath.Join(dir, "link.sock")},
		{Name: "relative-human", Kind: "connect", Addr: "human.sock", Dir: dir},
		{Name: "climb", Kind: "connect", Addr: "../" + filepath.Base(dir) + "/human.sock", Dir: dir},
		{Name: "abstract-human", Kind: "connect", Addr: "@" + abstractName},
		{Name: "proc-magic", Kind: "connect", Addr: "/proc/self/root" + filepath.Join(dir, "human.sock")},
		{Name: "missing", Kind: "connect", Addr: filepath.Join(dir, "nothing.sock")},
		{Name: "mcp", Kind: "connect", Addr: filepath.Join(dir, "mcp.sock")},
		{Name: "own", Kind: "own", Addr: filepath.Join(dir, "own.sock")},
		{Name: "own-relative", Kind: "own", Addr: "own2.sock", Dir: dir},
		{Name: "own-abstract", Kind: "own", Addr: "@gate-test-own-" + strconv.Itoa(os.Getpid())},
		{Name: "own-child", Kind: "child", Addr: filepath.Join(dir, "child.sock")},
		{Name: "tcp", Kind: "tcp", Addr: tcp.Addr().String()},
		{Name: "dgram", Kind: "dgram"},
		{Name: "dgrampair", Kind: "dgrampair"},
		{Name: "streampair", Kind: "streampair"},
		{Name: "uring", Kind: "uring"},
	}
	want := map[string]string{
		"human": "EACCES", "link": "EACCES", "relative-human": "EACCES", "climb": "EACCES",
		"abstract-human": "EACCES", "proc-magic": "EACCES", "missing": "ENOENT",
		"mcp": "ok", "own": "ok", "own-relative": "ok", "own-abstract": "ok", "own-child": "ok", "tcp": "ok",
		"dgram": "EACCES", "dgrampair": "EACCES", "streampair": "ok", "uring": "EPERM",
	}
	got, pid := runSandboxed(t, probes, Policy{Vouch: []string{filepath.Join(dir, "mcp.sock")}})
	t.Logf("results: %v", got)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
	// The human's listeners accepted nothing; the MCP socket's first line
	// vouches for the process that connected.
	for name, l := range map[string]*net.UnixListener{"human": human, "abstract": humanAbstract} {
		l.SetDeadline(time.Now().Add(50 * time.Millisecond))
		if c, err := l.Accept(); err == nil {
			c.Close()
			t.Errorf("the human's %s socket accepted a connection from the sandbox", name)
		}
	}
	mcp.SetDeadline(time.Now().Add(5 * time.Second))
	c, err := mcp.Accept()
	if err != nil {
		t.Fatalf("the MCP socket got no connection: %v", err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if vp, _, err := peercred.ParseVouch(line); err != nil || vp != pid {
		t.Errorf("first line on the MCP socket = %q (%v); want a vouch for the sandboxed process %d", line, err, pid)
	}
}

// runSandboxed runs probes in a sandboxed child served by p (its Root set
// to the child) and returns each probe's result and the child's pid.
func runSandboxed(t *testing.T, probes []probe, p Policy) (map[string]string, int) {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	theirs := os.NewFile(uintptr(pair[1]), "gate")
	b, _ := json.Marshal(probes)
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), "GATE_CHILD=install", "GATE_PROBES="+string(b))
	cmd.ExtraFiles = []*os.File{theirs}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(pair[0], buf, oob, 0)
	unix.Close(pair[0])
	if err != nil {
		cmd.Wait()
		t.Fatalf("receive the listener: %v\n%s", err, out.String())
	}
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	if len(msgs) != 1 {
		cmd.Wait()
		t.Fatalf("no listener came: %s", out.String())
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		t.Fatalf("no listener came: %v", err)
	}
	p.Root = cmd.Process.Pid
	served := make(chan error, 1)
	go func() { served <- Serve(fds[0], p) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the sandboxed child: %v\n%s", err, out.String())
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Serve did not return once the sandbox had ended")
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		name, res, _ := strings.Cut(line, " ")
		got[name] = res
	}
	return got, cmd.Process.Pid
}

func listenUnix(t *testing.T, addr string) *net.UnixListener {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
