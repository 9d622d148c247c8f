package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/paths"
)

// lockWait bounds how long up or down waits for another up or down of the
// same instance to finish. One up starts six daemons, each allowed
// startTimeout; a queue of them (scripts, several terminals) takes a while
// on a busy machine, and the waiter says at once whom it waits for.
const lockWait = 3 * time.Minute

// lockPoll is how often a waiting up or down tries the lock again.
const lockPoll = 50 * time.Millisecond

// instanceLock is held by `phantom up` and `phantom down` for as long as
// they start or stop daemons, so that only one of them changes an instance
// at a time. Two ups at once used to race for every socket, and the loser's
// clean-up stopped daemons the winner had adopted; a down during an up saw
// pid files of daemons still starting.
//
// It is an flock(2) on a file in the private runtime directory: the kernel
// drops it when the holder exits however it dies (kill -9 included), so a
// crash never leaves the instance locked. The descriptor is close-on-exec
// (os.OpenFile's default), so the daemons up starts do not inherit it;
// otherwise they would hold the lock for their whole life.
type instanceLock struct{ f *os.File }

// lockPath is the lock file of the instance of l.
func lockPath(l paths.Layout) string { return filepath.Join(l.Runtime, "updown.lock") }

// lockInstance takes the instance's lock for what ("up", "down"), waiting
// up to lockWait for the holder to finish, and saying on stderr whom it
// waits for. The holder's pid and command are written into the lock file
// for the next waiter's message.
func lockInstance(l paths.Layout, what string) (*instanceLock, error) {
	if err := paths.EnsurePrivateDir(l.Runtime); err != nil {
		return nil, err
	}
	path := lockPath(l)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lock file %s: %w", path, err)
	}
	deadline := time.Now().Add(lockWait)
	said := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !said {
			fmt.Fprintf(os.Stderr, "phantom: waiting for %s to finish before %s runs\n", lockHolder(path), what)
			said = true
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("gave up after %s waiting for %s to finish (it holds %s); try again when it is done", lockWait, lockHolder(path), path)
		}
		time.Sleep(lockPoll)
	}
	// Say who holds it. A failure here costs only the next waiter's
	// message.
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %d: phantom %s, since %s\n", os.Getpid(), what, time.Now().Format(time.TimeOnly))
	}
	return &instanceLock{f: f}, nil
}

// lockHolder describes the holder of the lock file at path, from what it
// wrote there.
func lockHolder(path string) string {
	b, _ := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); s != "" {
		return "another up or down (" + s + ")"
	}
	return "another up or down"
}

// unlock releases the lock; a nil lock is fine.
func (lk *instanceLock) unlock() {
	if lk == nil || lk.f == nil {
		return
	}
	// Closing the descriptor drops the flock; the file stays, so that the
	// next up or down locks the same inode.
	lk.f.Close()
	lk.f = nil
}
