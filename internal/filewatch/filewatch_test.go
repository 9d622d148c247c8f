package filewatch

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestFollowSeesEditorSaves checks the saves people make: a write in
// place, an editor's rename over the file, a removal, and a file made in a
// folder that was removed and made again (which ends an inotify watch, so
// only the poll sees it).
func TestFollowSeesEditorSaves(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := ""
	read := func() {
		b, _ := os.ReadFile(path)
		mu.Lock()
		seen = string(b)
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Follow(ctx, Spec{Path: path, What: "the test file", Changed: read, Poll: 50 * time.Millisecond})
	}()
	defer func() { cancel(); <-done }()

	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			got := seen
			mu.Unlock()
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the watcher last read %q, want %q", got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"write in place", func() error { return os.WriteFile(path, []byte("one"), 0o600) }, "one"},
		{"rename over", func() error {
			tmp := path + ".tmp"
			if err := os.WriteFile(tmp, []byte("two"), 0o600); err != nil {
				return err
			}
			return os.Rename(tmp, path)
		}, "two"},
		{"remove", func() error { return os.Remove(path) }, ""},
		{"folder made again", func() error {
			if err := os.RemoveAll(filepath.Dir(path)); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return err
			}
			return os.WriteFile(path, []byte("three"), 0o600)
		}, "three"},
		{"write after the new watch", func() error { return os.WriteFile(path, []byte("four"), 0o600) }, "four"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		waitFor(s.want)
	}
}

// TestFollowTicks checks that Tick runs on the poll, after Changed.
func TestFollowTicks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	ticked := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Follow(ctx, Spec{Path: path, What: "f", Changed: func() {}, Poll: 10 * time.Millisecond,
			Tick: func() {
				select {
				case ticked <- struct{}{}:
				default:
				}
			}})
	}()
	select {
	case <-ticked:
	case <-time.After(10 * time.Second):
		t.Fatal("Tick never ran")
	}
	cancel()
	<-done
}
