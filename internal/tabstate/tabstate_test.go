package tabstate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func sample() State {
	return State{
		Version: Version, TabID: "t3", WindowID: "w1", PTY: "/dev/pts/4", TTYNr: 34820,
		Session: 4242, LeaderPID: 4242, LeaderStart: 987654321, TerminaldPID: 17,
	}
}

// TestRoundTrip checks that Read returns exactly what Write stored, in a
// file of mode 0600, with no temporary file left behind.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir, "t3")
	if want := filepath.Join(dir, "t3.json"); path != want {
		t.Fatalf("Path = %q, want %q", path, want)
	}
	want := sample()
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Read = %+v, want %+v", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := fi.Mode().Perm(); p != 0o600 {
		t.Errorf("mode = %v, want 0600", p)
	}
	assertOnly(t, dir, "t3.json")
}

// TestOverwrite checks that rewriting replaces the file atomically: the new
// content wins, a wider mode on the old file does not survive, and no
// temporary file is left.
func TestOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir, "t1")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := sample()
	s.WindowID = "w9"
	if err := Write(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || got.WindowID != "w9" {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	fi, _ := os.Stat(path)
	if p := fi.Mode().Perm(); p != 0o600 {
		t.Errorf("mode = %v, want 0600", p)
	}
	assertOnly(t, dir, "t1.json")
}

// TestConcurrentWriteRead checks that a reader racing writers only ever
// sees a whole, valid file.
func TestConcurrentWriteRead(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir, "t1")
	if err := Write(path, sample()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			s := sample()
			for i := range 50 {
				s.LeaderStart = uint64(w*1000 + i)
				if err := Write(path, s); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			if _, err := Read(path); err != nil {
				t.Errorf("Read during writes: %v", err)
				return
			}
		}
	})
	wg.Wait()
	assertOnly(t, dir, "t1.json")
}

// TestWriteMissingDir checks that writing into a missing directory fails
// and names the path.
func TestWriteMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope", "t1.json")
	err := Write(path, sample())
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Write = %v, want an error naming %s", err, path)
	}
}

// TestReadRejects checks that Read refuses anything but a complete file of
// the known version: the gateway must never trust a partial claim.
func TestReadRejects(t *testing.T) {
	tests := []struct {
		name, body, wantIn string
	}{
		{"empty", ``, ""},
		{"garbage", `not json at all`, ""},
		{"truncated", `{"version":1,"tab_id":"t1"`, ""},
		{"wrong type", `{"version":"1","tab_id":"t1","leader_pid":5,"session":5}`, ""},
		{"version 0", `{"tab_id":"t1","leader_pid":5,"session":5}`, "version 0"},
		{"version 2", `{"version":2,"tab_id":"t1","leader_pid":5,"session":5}`, "version 2"},
		{"missing tab id", `{"version":1,"leader_pid":5,"session":5}`, "missing"},
		{"missing leader", `{"version":1,"tab_id":"t1","session":5}`, "missing"},
		{"negative leader", `{"version":1,"tab_id":"t1","leader_pid":-5,"session":5}`, "missing"},
		{"missing session", `{"version":1,"tab_id":"t1","leader_pid":5}`, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t1.json")
			if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Read(path)
			if err == nil {
				t.Fatalf("Read = %+v, want an error", s)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error %q does not name %s and %q", err, path, tt.wantIn)
			}
		})
	}
}

// TestReadMissing checks that a missing file is an error naming the path.
func TestReadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t404.json")
	_, err := Read(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("Read = %v, want a not-exist error naming %s", err, path)
	}
}

// assertOnly fails unless dir holds exactly the named files.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want only %v (temporary files left behind?)", got, names)
	}
}
