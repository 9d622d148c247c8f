package pty

import (
	"bytes"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestOpenRunAndCloseInterruptsRead(t *testing.T) {
	m, s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := SetSize(m, 100, 30); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "stty size; sleep 30")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	var out bytes.Buffer
	buf := make([]byte, 256)
	deadline := time.Now().Add(5 * time.Second)
	for !bytes.Contains(out.Bytes(), []byte("30 100")) && time.Now().Before(deadline) {
		n, err := m.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			t.Fatalf("read: %v (got %q)", err, out.String())
		}
	}
	if !bytes.Contains(out.Bytes(), []byte("30 100")) {
		t.Fatalf("stty size: got %q, want 30 100", out.String())
	}
	if fg, err := Foreground(m); err != nil || fg != cmd.Process.Pid {
		t.Errorf("Foreground = %d, %v; want %d", fg, err, cmd.Process.Pid)
	}

	// sleep still holds the terminal: Close must still end a pending Read.
	done := make(chan error, 1)
	go func() { _, err := m.Read(buf); done <- err }()
	time.Sleep(50 * time.Millisecond)
	m.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Read after Close returned no error")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not interrupt Read")
	}
}
