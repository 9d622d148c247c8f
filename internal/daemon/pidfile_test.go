package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// TestPIDFile checks the round trip of a pid file, the older format with
// a pid only, and that a record with another start time is not alive.
func TestPIDFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.pid")
	if _, err := ReadPIDFile(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadPIDFile of a missing file: %v, want ErrNotExist", err)
	}
	if err := WritePIDFile(path); err != nil {
		t.Fatal(err)
	}
	rec, err := ReadPIDFile(path)
	st, _ := procfs.ReadStat(os.Getpid())
	if err != nil || rec.PID != os.Getpid() || rec.Start != st.StartTime || !rec.Alive() {
		t.Fatalf("ReadPIDFile = %+v, %v; want this process (start %d), alive", rec, err, st.StartTime)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("pid file mode %v, want 0600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
	if (PIDRecord{PID: os.Getpid(), Start: st.StartTime + 1}).Alive() {
		t.Error("a record with another start time (a reused pid) is alive")
	}

	os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	if rec, err := ReadPIDFile(path); err != nil || rec != (PIDRecord{PID: os.Getpid()}) {
		t.Errorf("ReadPIDFile of a pid-only file = %+v, %v", rec, err)
	}
	for _, bad := range []string{"", "x", "-3", "1 2 3", "12 y"} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := ReadPIDFile(path); err == nil {
			t.Errorf("ReadPIDFile(%q) succeeded", bad)
		}
	}

	os.WriteFile(path, []byte("1 1\n"), 0o600)
	RemoveOwnPIDFile(path)
	if _, err := os.Stat(path); err != nil {
		t.Error("RemoveOwnPIDFile removed a file naming another process")
	}
	WritePIDFile(path)
	RemoveOwnPIDFile(path)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveOwnPIDFile left this process's file: %v", err)
	}
}
