// Package reaper makes a daemon (terminald, gitd, lspd) a child subreaper and reaps the orphans
// that re-parent to it.
//
// Why a subreaper: Phantom decides who is inside it from the kernel's
// process tree, not from files or variables. Without PR_SET_CHILD_SUBREAPER
// a process that double-forks (setsid -f, nohup … &, a daemonising server)
// is re-parented to init and looks like any process of the human's. With
// it, every orphan of a tab is re-parented to terminald instead, so its
// ancestry still reaches terminald however it forked.
//
// The cost is that terminald must wait for those orphans, or they stay
// zombies. It must not wait for its own children, though: Go's os/exec
// waits for each of them itself (through a pidfd), and a child reaped behind
// its back loses its exit status. So terminald starts its children through
// Start, which records them under the same lock the reaper holds while it
// reaps, and the reaper only waits for children it did not start.
package reaper

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// sweepInterval bounds how long an orphan stays a zombie when a SIGCHLD
// was coalesced with another.
const sweepInterval = 5 * time.Second

// Reaper is a subreaper's bookkeeping. The zero value is not usable: call
// New.
type Reaper struct {
	mu  sync.Mutex
	own map[int]bool // children started through Start and not yet Done

	sig  chan os.Signal
	stop chan struct{}
	done chan struct{}
}

// New makes the calling process a child subreaper and starts reaping
// orphans. Call Close when the process stops.
func New() (*Reaper, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("become a child subreaper (PR_SET_CHILD_SUBREAPER): %w", err)
	}
	r := &Reaper{own: map[int]bool{}, sig: make(chan os.Signal, 1), stop: make(chan struct{}), done: make(chan struct{})}
	signal.Notify(r.sig, syscall.SIGCHLD)
	go r.loop()
	return r, nil
}

// Start starts cmd as a child the reaper leaves alone: its owner waits for
// it, then calls Done. A nil Reaper (a test without one) only starts it.
func (r *Reaper) Start(cmd *exec.Cmd) error {
	if r == nil {
		return cmd.Start()
	}
	// Held across fork and record: a child that exits at once is not
	// mistaken for an orphan by a sweep in between.
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	r.own[cmd.Process.Pid] = true
	return nil
}

// Done forgets a child started with Start once its owner has waited for
// it; its pid may be reused by an orphan later.
func (r *Reaper) Done(pid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.own, pid)
	r.mu.Unlock()
}

// Run is exec.Cmd.Run for a subreaper: it starts cmd through r, waits
// for it, and then forgets it.
func (r *Reaper) Run(cmd *exec.Cmd) error {
	if err := r.Start(cmd); err != nil {
		return err
	}
	defer r.Done(cmd.Process.Pid) // after Wait: the pid is free only then
	return cmd.Wait()
}

func (r *Reaper) loop() {
	defer close(r.done)
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-r.sig:
		case <-tick.C:
		}
		r.sweep(false)
	}
}

// sweep waits for every orphan that has exited; with kill, it first sends
// SIGKILL to every orphan still running. It returns how many orphans it
// saw.
func (r *Reaper) sweep(kill bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, pid := range children() {
		if r.own[pid] {
			continue
		}
		n++
		if kill {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
	return n
}

// KillOrphans ends every orphan, and their orphans in turn, waiting at most
// grace: nothing started inside Phantom outlives it, so nothing an agent
// left behind comes back as a process outside Phantom (the human's side)
// once terminald is gone.
func (r *Reaper) KillOrphans(grace time.Duration) {
	deadline := time.Now().Add(grace)
	for r.sweep(true) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// Children lists the calling process's children (every thread's: orphans
// are re-parented to one of them). The holder uses it to kill what is left
// at shutdown.
func Children() []int { return children() }

// Close stops reaping.
func (r *Reaper) Close() {
	signal.Stop(r.sig)
	close(r.stop)
	<-r.done
}

// children lists the calling process's children: orphans are re-parented
// to one of its threads, so every thread's list is read.
func children() []int {
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(tasks) == 0 {
		return childrenByScan()
	}
	var out []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended
		}
		if err != nil {
			return childrenByScan()
		}
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// childrenByScan is children for kernels without /proc/<pid>/task/<tid>/children.
func childrenByScan() []int {
	stats, err := procfs.Default.AllStats()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, st := range stats {
		if st.PPID == self {
			out = append(out, st.PID)
		}
	}
	return out
}
