package pty

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnreadAndModes: the master sees the slave's input modes, how many
// typed bytes the slave has not read (whole lines only in canonical
// mode), and how much output the master has not read.
func TestUnreadAndModes(t *testing.T) {
	m, s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer s.Close()
	setCanonical := func(on bool) {
		t.Helper()
		tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		tio.Lflag &^= unix.ICANON | unix.ECHO
		if on {
			tio.Lflag |= unix.ICANON
		}
		if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
			t.Fatal(err)
		}
	}
	unread := func() int {
		t.Helper()
		n, err := Unread(m)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	type step struct {
		name      string
		canonical bool
		typed     string
		readN     int // bytes the program then reads
		want      int
	}
	for _, st := range []step{
		{"raw: typed bytes wait", false, "abc", 0, 3},
		{"raw: the program read two", false, "", 2, 1},
		{"raw: it read the last", false, "", 1, 0},
		{"canonical: a line being typed is not readable", true, "ab", 0, 0},
		{"canonical: a whole line is", true, "\n", 0, 3},
		{"canonical: read", true, "", 3, 0},
	} {
		setCanonical(st.canonical)
		modes, err := InputModes(m)
		if err != nil {
			t.Fatal(err)
		}
		if modes.Canonical != st.canonical || !modes.Signals || modes.Intr != 3 {
			t.Errorf("%s: modes %+v", st.name, modes)
		}
		if st.typed != "" {
			if _, err := m.Write([]byte(st.typed)); err != nil {
				t.Fatal(err)
			}
		}
		if st.readN > 0 {
			buf := make([]byte, st.readN)
			if n, err := s.Read(buf); err != nil || n != st.readN {
				t.Fatalf("%s: read %d, %v", st.name, n, err)
			}
		}
		if got := unread(); got != st.want {
			t.Errorf("%s: Unread = %d, want %d", st.name, got, st.want)
		}
	}
	if _, err := s.Write([]byte("out")); err != nil {
		t.Fatal(err)
	}
	if n, err := Unrendered(m); err != nil || n != 3 {
		t.Errorf("Unrendered = %d, %v; want 3", n, err)
	}
}
