// Package notifytest runs a private session bus (dbus-daemon --session,
// Debian's package dbus) with a fake freedesktop notification service on
// it, for tests of what sends desktop notifications.
package notifytest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/phantom-dev/phantom/internal/notify"
)

// Notification is one Notify call the fake service received.
type Notification struct {
	App, Summary, Body string
}

// Service is the fake notification service.
type Service struct {
	// Address is the private bus's address, for DBUS_SESSION_BUS_ADDRESS.
	Address string

	mu   sync.Mutex
	got  []Notification
	next uint32
}

// Start runs a private session bus and, when serve is true, the fake
// service on it (false: a bus where nobody owns the name). Both end with
// the test. It skips the test when dbus-daemon is missing.
func Start(t testing.TB, serve bool) *Service {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed (Debian package dbus; scripts/setup installs it)")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "bus")
	conf := filepath.Join(dir, "session.conf")
	// A session bus of its own: this socket, no activation of services.
	if err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+sock+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+conf, "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrCh := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addrCh <- strings.TrimSpace(line)
	}()
	s := &Service{}
	select {
	case s.Address = <-addrCh:
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon did not print its address within 10s")
	}
	if s.Address == "" {
		t.Fatal("dbus-daemon printed no address")
	}
	if !serve {
		return s
	}
	conn, err := dbus.Connect(s.Address)
	if err != nil {
		t.Fatalf("connect to the private bus %s: %v", s.Address, err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.Export(fake{s}, notify.ObjectPath, notify.ServiceName); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(notify.ServiceName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: reply %v, %v", notify.ServiceName, reply, err)
	}
	return s
}

// Received returns the notifications so far.
func (s *Service) Received() []Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notification(nil), s.got...)
}

// fake is the exported object: godbus calls its methods by name.
type fake struct{ s *Service }

// Notify is org.freedesktop.Notifications.Notify.
func (f fake) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.s.got = append(f.s.got, Notification{App: app, Summary: summary, Body: body})
	f.s.next++
	return f.s.next, nil
}
