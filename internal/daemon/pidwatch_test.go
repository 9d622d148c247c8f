package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatchDirSeesPIDFile checks that writing a pid file the way daemons
// do (a temporary file renamed into place) wakes a watcher, and that
// Close ends the watch.
func TestWatchDirSeesPIDFile(t *testing.T) {
	dir := t.TempDir()
	w, err := WatchDir(dir)
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	path := filepath.Join(dir, "terminald.pid")
	if err := WritePIDFile(path); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Changed():
	case <-time.After(10 * time.Second):
		t.Fatal("no change seen after a pid file was written")
	}
	if rec, err := ReadPIDFile(path); err != nil || rec.PID != os.Getpid() {
		t.Fatalf("ReadPIDFile = %+v, %v", rec, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for range w.Changed() { // drained and closed once the watch ended
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestWatchDirMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := WatchDir(missing); err == nil {
		t.Fatalf("WatchDir(%s) of a missing directory succeeded", missing)
	}
}
