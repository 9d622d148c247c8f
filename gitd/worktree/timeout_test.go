package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// TestGitTimeout: a git command that hangs (here a post-checkout hook
// that sleeps) is stopped after gitTimeout, and the call fails saying
// which command did not finish within which bound, as a failed
// precondition, not as a deadline the caller set.
func TestGitTimeout(t *testing.T) {
	f := newFixture(t)
	hook := filepath.Join(f.dir, ".git", "hooks", "post-checkout")
	pidFile := filepath.Join(t.TempDir(), "hook.pid")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho $$ >"+pidFile+"\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := gitTimeout
	gitTimeout = 500 * time.Millisecond
	t.Cleanup(func() { gitTimeout = old })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := f.m.Add(ctx, AddSpec{Repository: f.dir, Branch: "slow"})
	if err == nil || !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "did not finish within 500ms") ||
		!strings.Contains(err.Error(), "git worktree add") {
		t.Fatalf("Add with a hanging hook = %v; want a failed precondition naming git worktree add and the bound", err)
	}
	if ctx.Err() != nil {
		t.Errorf("the call ran out of the caller's time: %v", ctx.Err())
	}
	b, err := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("the hook did not run: %v", err)
	}
	// Killed with git; a zombie until its parent (git, gone) is reaped.
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil && !zombie(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hung hook (pid %d) outlived git's timeout", pid)
		}
	}
}

// zombie reports whether process pid has exited but is not reaped yet.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}
