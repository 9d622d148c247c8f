package pty

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestReader reads a program's output through Reader to the end of the
// terminal, and checks that closing the master or a read deadline ends a
// Read that waits, while a program still holds the terminal.
func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		prog string // the program on the slave
		end  func(m *os.File)
		want string // output read before the end
	}{
		{"the program exits", "seq 1 20000", nil, "19999\r\n20000\r\n"},
		{"the master is closed", "echo ready; sleep 30", func(m *os.File) { m.Close() }, "ready\r\n"},
		{"a read deadline passes", "echo ready; sleep 30", func(m *os.File) { m.SetReadDeadline(time.Unix(1, 0)) }, "ready\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, s, err := Open()
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			cmd := exec.Command("sh", "-c", tc.prog)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			s.Close()
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			r, err := NewReader(m)
			if err != nil {
				t.Fatal(err)
			}
			// Read until the expected output, then (if the case has one)
			// end the terminal's reading from another goroutine while a
			// Read waits.
			var out bytes.Buffer
			buf := make([]byte, 4096)
			done := make(chan error, 1)
			go func() {
				for {
					n, err := r.Read(buf)
					out.Write(buf[:n])
					if err != nil {
						done <- err
						return
					}
					if tc.end != nil && bytes.HasSuffix(out.Bytes(), []byte(tc.want)) {
						done <- nil
						return
					}
				}
			}()
			select {
			case err := <-done:
				if tc.end == nil && !errors.Is(err, syscall.EIO) {
					t.Fatalf("at the end of the terminal: %v, want EIO", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no end after %q", out.String())
			}
			if !bytes.HasSuffix(out.Bytes(), []byte(tc.want)) {
				t.Fatalf("read %q, want it to end in %q", tail(out.Bytes()), tc.want)
			}
			if tc.end == nil {
				return
			}
			go func() { _, err := r.Read(buf); done <- err }()
			tc.end(m)
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("Read returned no error")
				}
			case <-time.After(3 * time.Second):
				t.Fatal("Read did not end")
			}
		})
	}
}

// tail is the end of b, for a failure message.
func tail(b []byte) []byte { return b[max(0, len(b)-64):] }
