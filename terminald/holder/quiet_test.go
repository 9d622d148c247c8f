package holder

import (
	"bytes"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/pty"
)

// TestQuietFile checks the holder's way of keeping a PTY master: after
// quiet, the original file is closed, yet the terminal stays up (the
// slave still writes); a duplicate from file reads what the slave wrote;
// Close hangs the terminal up once no other copy is left.
func TestQuietFile(t *testing.T) {
	m, s, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q, err := quiet(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stat(); err == nil {
		t.Fatal("quiet left the original file open")
	}
	if _, err := s.Write([]byte("still up\n")); err != nil {
		t.Fatalf("write to the slave after quiet: %v", err)
	}
	f, err := q.file()
	if err != nil {
		t.Fatal(err)
	}
	f.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := f.Read(buf)
	if err != nil || !bytes.Contains(buf[:n], []byte("still up")) {
		t.Fatalf("read through file: %q, %v", buf[:n], err)
	}
	f.Close()
	if err := q.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	// Every master copy is gone: the terminal is hung up.
	if _, err := s.Write([]byte("x")); err == nil {
		t.Fatal("the slave still writes after the last master copy closed")
	}
}
