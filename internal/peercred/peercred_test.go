package peercred

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPeerOfAnotherProcess connects from a child process and checks the
// credentials name it, and that Alive notices when it is gone.
func TestPeerOfAnotherProcess(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed (scripts/setup installs it)")
	}
	sock := filepath.Join(t.TempDir(), "s")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	child := exec.Command("python3", "-c", `import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(1)`, sock)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := FromConn(conn)
	if err != nil {
		t.Fatal(err)
	}
	defer creds.Close()
	if creds.PID != child.Process.Pid || creds.UID != os.Getuid() || creds.GID != os.Getgid() {
		t.Errorf("creds = %+v, want pid %d uid %d gid %d", creds, child.Process.Pid, os.Getuid(), os.Getgid())
	}
	if err := creds.Alive(); err != nil {
		t.Errorf("Alive while the peer runs: %v", err)
	}
	conn.Close() // the child's recv returns and it exits
	child.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for !errors.Is(creds.Alive(), ErrGone) {
		if time.Now().After(deadline) {
			t.Fatalf("Alive after the peer exited = %v, want ErrGone (pidfd %v)", creds.Alive(), creds.HasPIDFD())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFromConnRefusesNonSockets(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := FromConn(a); err == nil {
		t.Error("FromConn(net.Pipe) succeeded")
	}
}
