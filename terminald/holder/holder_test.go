package holder

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/terminald/pty"
)

func TestDecode(t *testing.T) {
	spawn := `{"op":"spawn","seq":1,"tab":"t1","path":"/bin/sh","argv":["sh"],"env":["A=b"],"dir":"/"}`
	tests := []struct {
		name   string
		in     string
		nfiles int
		ok     bool
	}{
		{"hello", `{"op":"hello","seq":1,"version":1}`, 0, true},
		{"hello without version", `{"op":"hello","seq":1}`, 0, false},
		{"spawn", spawn, 3, true},
		{"spawn missing files", spawn, 2, false},
		{"spawn extra files", spawn, 4, false},
		{"spawn relative path", `{"op":"spawn","seq":1,"tab":"t1","path":"sh","argv":["sh"],"dir":"/"}`, 3, false},
		{"spawn relative dir", `{"op":"spawn","seq":1,"tab":"t1","path":"/bin/sh","argv":["sh"],"dir":"."}`, 3, false},
		{"spawn empty argv", `{"op":"spawn","seq":1,"tab":"t1","path":"/bin/sh","argv":[],"dir":"/"}`, 3, false},
		{"spawn NUL in env", `{"op":"spawn","seq":1,"tab":"t1","path":"/bin/sh","argv":["sh"],"env":["A=\u0000"],"dir":"/"}`, 3, false},
		{"spawn bad tab", `{"op":"spawn","seq":1,"tab":"../x","path":"/bin/sh","argv":["sh"],"dir":"/"}`, 3, false},
		{"spawn without seq", `{"op":"spawn","tab":"t1","path":"/bin/sh","argv":["sh"],"dir":"/"}`, 3, false},
		{"release", `{"op":"release","seq":2,"tab":"t12"}`, 0, true},
		{"release tab id too long", `{"op":"release","seq":2,"tab":"t1234567890123"}`, 0, false},
		{"state", `{"op":"state","seq":3}`, 1, true},
		{"state without file", `{"op":"state","seq":3}`, 0, false},
		{"restore", `{"op":"restore","seq":4}`, 0, true},
		{"tab", `{"op":"tab","tab":"t3","pid":42,"start":7,"exited":true,"code":130}`, 2, true},
		{"tab pid 0", `{"op":"tab","tab":"t3","pid":0}`, 2, false},
		{"exit", `{"op":"exit","tab":"t3","pid":42,"code":1}`, 0, true},
		{"reply", `{"op":"reply","seq":9,"pid":5}`, 0, true},
		{"reply without seq", `{"op":"reply"}`, 0, false},
		{"shutdown", `{"op":"shutdown","seq":5}`, 0, true},
		{"unknown op", `{"op":"exec","seq":5}`, 0, false},
		{"unknown field", `{"op":"restore","seq":4,"evil":1}`, 0, false},
		{"two objects", `{"op":"restore","seq":4}{"op":"restore","seq":5}`, 0, false},
		{"not JSON", `hello`, 0, false},
		{"empty", ``, 0, false},
		{"too big", `{"op":"restore","seq":4,"dir":"` + strings.Repeat("a", MaxMsg) + `"}`, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decode([]byte(tt.in), tt.nfiles)
			if (err == nil) != tt.ok {
				t.Fatalf("decode(%.80q, %d files) = %+v, %v; want ok %v", tt.in, tt.nfiles, m, err, tt.ok)
			}
			if err != nil && !errors.Is(err, errBadMsg) {
				t.Errorf("error %v does not wrap errBadMsg", err)
			}
		})
	}
}

// FuzzDecode checks that no datagram makes the parser panic, and that
// whatever it accepts survives a round trip unchanged.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"op":"hello","seq":1,"version":1}`), 0)
	f.Add([]byte(`{"op":"spawn","seq":1,"tab":"t1","path":"/bin/sh","argv":["sh"],"env":["A=b"],"dir":"/"}`), 3)
	f.Add([]byte(`{"op":"tab","tab":"t3","pid":42,"start":7,"exited":true,"code":130}`), 2)
	f.Add([]byte(`{"op":"reply","seq":9,"error":"x"}`), 0)
	f.Fuzz(func(t *testing.T, b []byte, nfiles int) {
		m, err := decode(b, nfiles)
		if err != nil {
			return
		}
		out, err := encode(m)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", b, err)
		}
		again, err := decode(out, nfiles)
		if err != nil {
			t.Fatalf("accepted %q but not its re-encoding %q: %v", b, out, err)
		}
		if fmt.Sprintf("%+v", again) != fmt.Sprintf("%+v", m) {
			t.Fatalf("round trip changed %+v into %+v", m, again)
		}
	})
}

func TestRing(t *testing.T) {
	const size = 4 * MaxChunk
	r, err := NewRing("t1", size)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Write([]byte("hello "))
	r.Write([]byte("world"))
	if got, lost := r.Contents(); string(got) != "hello world" || lost != 0 {
		t.Fatalf("Contents = %q, lost %d; want everything", got, lost)
	}
	// Fill past the end: the oldest bytes go, and the torn-write margin
	// with them.
	var all bytes.Buffer
	all.WriteString("hello world")
	for i := 0; all.Len() < 3*size; i++ {
		line := fmt.Sprintf("line %d\n", i)
		all.WriteString(line)
		r.Write([]byte(line))
	}
	big := bytes.Repeat([]byte("x"), 3*MaxChunk+17) // split into chunks
	all.Write(big)
	r.Write(big)
	got, lost := r.Contents()
	if len(got) != size-MaxChunk || lost != uint64(all.Len()-len(got)) {
		t.Fatalf("Contents after wrapping: %d bytes, lost %d; want %d, %d", len(got), lost, size-MaxChunk, all.Len()-len(got))
	}
	if !bytes.Equal(got, all.Bytes()[all.Len()-len(got):]) {
		t.Fatal("Contents after wrapping are not the newest output in order")
	}
	// A second mapping of the same memfd (a new terminald) sees the same.
	dup, err := unix.Dup(int(r.File().Fd()))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := OpenRing(os.NewFile(uintptr(dup), "dup"))
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	got2, lost2 := r2.Contents()
	if !bytes.Equal(got, got2) || lost != lost2 || r2.Total() != r.Total() {
		t.Fatal("a second mapping sees different contents")
	}
}

func TestOpenRingRefusesUnsealed(t *testing.T) {
	fd, err := unix.MemfdCreate("x", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skip("no memfd:", err)
	}
	f := os.NewFile(uintptr(fd), "x")
	defer f.Close()
	f.Truncate(ringHeaderSize + 4*MaxChunk)
	if r, err := OpenRing(f); err == nil {
		r.Close()
		t.Fatal("OpenRing accepted a memfd that can still shrink (a SIGBUS waiting to happen)")
	}
}

// testHolder runs a holder server in this process on a socket in a
// temporary directory, trusting every peer, and returns a connected
// client.
func testHolder(t *testing.T) (*server, *Client) {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, "holder.sock")
	s := &server{opts: Options{Socket: sock, Grace: 100 * time.Millisecond}, log: nil,
		tabs: map[string]*held{}, byPID: map[int]*held{}, quit: make(chan struct{})}
	s.log = discard()
	s.check = func(*net.UnixConn) (int, error) { return os.Getpid(), nil }
	lis, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	go s.acceptLoop(lis)
	stop := make(chan struct{})
	go func() { // what Serve's SIGCHLD does
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				s.reap()
			}
		}
	}()
	uc, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := newClient(uc, os.Getpid(), 0, discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); lis.Close(); close(stop) })
	return s, cl
}

func spawnTab(t *testing.T, cl *Client, id string, script string) (pid int, master *os.File, ring *Ring) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	ring, err = NewRing(id, 4*MaxChunk)
	if err != nil {
		t.Fatal(err)
	}
	pid, start, err := cl.Spawn(SpawnRequest{Tab: id, Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: "/"}, slave, master, ring)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := procfs.Default.Stat(pid); err == nil && st.StartTime != start {
		t.Errorf("spawn said start %d, /proc says %d", start, st.StartTime)
	}
	return pid, master, ring
}

// TestProtocol drives a holder through what terminald does: spawn, exit
// reports, state, restore (as a new terminald would) and release.
func TestProtocol(t *testing.T) {
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skip("no PTYs:", err)
	}
	_, cl := testHolder(t)

	// A program that exits at once: its exit reaches the client even if it
	// comes before anyone asks.
	pid, m1, r1 := spawnTab(t, cl, "t1", "exit 3")
	defer m1.Close()
	defer r1.Close()
	select {
	case code := <-cl.Exit("t1"):
		if code != 3 {
			t.Errorf("exit code of t1 = %d, want 3", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no exit report for t1 (pid %d)", pid)
	}
	// A program in its own session, with the PTY as its controlling
	// terminal.
	pid2, m2, r2 := spawnTab(t, cl, "t2", "ps -o sid=,tty= -p $$; sleep 60")
	defer m2.Close()
	defer r2.Close()
	st, err := procfs.Default.Stat(pid2)
	if err != nil {
		t.Fatal(err)
	}
	if st.Session != pid2 || st.TTYNr == 0 {
		t.Errorf("t2's program: session %d tty %d; want its own session (%d) and a controlling terminal", st.Session, st.TTYNr, pid2)
	}
	if err := cl.SaveState([]byte(`{"hello":"state"}`)); err != nil {
		t.Fatal(err)
	}

	// What a new terminald gets back.
	tabs, state, err := cl.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if string(state) != `{"hello":"state"}` {
		t.Errorf("restored state = %q", state)
	}
	byID := map[string]HeldTab{}
	for _, h := range tabs {
		byID[h.ID] = h
		defer h.Master.Close()
		defer h.Ring.Close()
	}
	if h := byID["t1"]; !h.Exited || h.Code != 3 || h.PID != pid {
		t.Errorf("restored t1 = %+v; want pid %d exited with 3", h, pid)
	}
	if h := byID["t2"]; h.Exited || h.PID != pid2 || h.Start != st.StartTime {
		t.Errorf("restored t2 = %+v; want pid %d running", h, pid2)
	}
	// The restored ring is the same memory terminald writes.
	r1.Write([]byte("seen"))
	rr, err := OpenRing(byID["t1"].Ring)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := rr.Contents(); string(got) != "seen" {
		t.Errorf("restored ring holds %q, want %q", got, "seen")
	}
	defer rr.Close() // closes byID["t1"].Ring; its deferred Close then fails harmlessly

	// Release: the holder's copies close; with ours closed too, t2's
	// program is hung up and its exit reported.
	if err := cl.Release("t2"); err != nil {
		t.Fatal(err)
	}
	if err := cl.Release("t2"); err != nil {
		t.Errorf("a second release: %v (want none: releasing is idempotent)", err)
	}
	m2.Close()
	byID["t2"].Master.Close()
	select {
	case code := <-cl.Exit("t2"):
		if code != 128+int(unix.SIGHUP) {
			t.Errorf("t2 hung up exited with %d, want %d", code, 128+int(unix.SIGHUP))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("t2 was not hung up by its release")
	}
	// Spawning a tab id that is held is refused.
	master, slave, _ := pty.Open()
	defer master.Close()
	defer slave.Close()
	ring, _ := NewRing("t1", 4*MaxChunk)
	defer ring.Close()
	if _, _, err := cl.Spawn(SpawnRequest{Tab: "t1", Path: "/bin/true", Argv: []string{"true"}, Dir: "/"}, slave, master, ring); err == nil {
		t.Error("spawning a second t1 was accepted")
	}
}

// TestBadPeerMessage checks that a malformed message ends the connection
// instead of being half-handled.
func TestBadPeerMessage(t *testing.T) {
	_, cl := testHolder(t)
	if err := cl.c.send(msg{Op: opExit, Tab: "t1", PID: 1}); err != nil { // not a request
		t.Fatal(err)
	}
	select {
	case <-cl.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the holder kept a connection that sent a bad request")
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
