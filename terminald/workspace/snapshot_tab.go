package workspace

import (
	"sync"
	"sync/atomic"
	"time"
)

// Why snapshots: a tab's status — its foreground program, directory,
// worktree, idleness — takes an ioctl and a few /proc reads to compute
// (tens of µs). Computed on every list_terminals, that cost grew with the
// number of tabs (5 ms of terminald's CPU per call with 200 tabs). So each
// tab keeps the status it last computed, and recomputes it when something
// may have changed it, from the tab's own goroutines and timers:
//   - output: what the screen reports (prompt marks, title, OSC 7
//     directory, the alternate screen) and a new foreground process
//     group (TIOCGPGRP, ~1 µs, at most once per fgCheckEvery) at once;
//     anything else (a `cd` in a shell without integration) within
//     snapDelay;
//   - the exit of the tab's program;
//   - the workspace's poll (PollInterval), for what no output shows: a
//     program that starts or execs silently, the end of the integration
//     grace;
//   - a caller that acts on one tab (Get, after RunCommand or a resize).
// Listing tabs only copies the snapshots: its cost does not grow with the
// tabs' activity either.

// snapDelay is how soon after output a tab's snapshot is recomputed in
// full. Under a burst the output keeps coming: one recomputation per
// snapDelay, the last one after the burst, bounds the cost to a few per
// second per tab.
const snapDelay = 50 * time.Millisecond

// fgCheckEvery bounds how often output makes a tab look at its foreground
// process group: under a burst, thousands of chunks a second arrive.
const fgCheckEvery = time.Millisecond

// execWindow is how long after a process group comes to the foreground
// its name is read again with each output check: a shell forks, and the
// child execs the program moments later under the same pid, so a name
// read in between is the shell's.
const execWindow = 100 * time.Millisecond

// tabSnap is a tab's last computed status.
type tabSnap struct {
	// refreshMu serialises computations, so that the one stored last is
	// the newest; it is taken before t.mu and t.lastMu.
	refreshMu sync.Mutex

	// outGen counts the chunks of output rendered (commands.go waits
	// for it to stay still).
	outGen atomic.Uint64

	mu      sync.Mutex // guards the fields below; a leaf lock
	cur     status
	valid   bool      // cur has been computed
	at      time.Time // when cur was computed
	fgSince time.Time // when cur.fgPID was first seen in the foreground
	checked time.Time // the last foreground check after output
	due     bool      // a recomputation after output is scheduled
}

// snapshot returns the tab's status as last computed, computing it the
// first time.
func (t *tab) snapshot() status {
	t.snap.mu.Lock()
	s, ok := t.snap.cur, t.snap.valid
	t.snap.mu.Unlock()
	if ok {
		return s
	}
	s, _ = t.refresh()
	return s
}

// statusComputations counts the computations of every tab's status, for
// tests that check listing tabs does not compute them.
var statusComputations atomic.Uint64

// refresh recomputes and stores the tab's status, and reports whether it
// differs from the one stored before.
func (t *tab) refresh() (status, bool) {
	statusComputations.Add(1)
	t.snap.refreshMu.Lock()
	defer t.snap.refreshMu.Unlock()
	s := t.computeStatus()
	now := time.Now()
	t.snap.mu.Lock()
	changed := !t.snap.valid || t.snap.cur != s
	if !t.snap.valid || t.snap.cur.fgPID != s.fgPID {
		t.snap.fgSince = now
	}
	t.snap.cur, t.snap.valid, t.snap.at = s, true, now
	t.snap.mu.Unlock()
	return s, changed
}

// rendered is called by readLoop after each chunk of output. events
// says the screen reported something (prompt marks, title, directory,
// the alternate screen): watchers learn it at once. Otherwise a new
// foreground process is looked for. The rest of the status is recomputed
// within snapDelay.
func (t *tab) rendered(events bool) {
	t.snap.outGen.Add(1)
	if events {
		// The workspace's callback recomputes the snapshot first.
		t.notify(t)
	} else {
		t.checkForeground()
	}
	t.refreshSoon()
}

// checkForeground recomputes the snapshot when the terminal's foreground
// process group is not the one it shows, or came to the foreground within
// execWindow (its program may just have been exec'd).
func (t *tab) checkForeground() {
	now := time.Now()
	t.snap.mu.Lock()
	if now.Sub(t.snap.checked) < fgCheckEvery {
		t.snap.mu.Unlock()
		return
	}
	t.snap.checked = now
	pid, since, valid := t.snap.cur.fgPID, t.snap.fgSince, t.snap.valid
	t.snap.mu.Unlock()
	if valid && t.foreground() == pid && now.Sub(since) >= execWindow {
		return
	}
	if _, changed := t.refresh(); changed {
		t.notify(t)
	}
}

// refreshSoon schedules a recomputation snapDelay after the last one, and
// tells watchers if it changed anything. A refresh already due covers this
// call too: under a burst of output this costs a lock, not a timer.
func (t *tab) refreshSoon() {
	t.snap.mu.Lock()
	if t.snap.due {
		t.snap.mu.Unlock()
		return
	}
	t.snap.due = true
	wait := snapDelay - time.Since(t.snap.at)
	t.snap.mu.Unlock()
	// A timer, not a goroutine per tab: an idle tab costs nothing.
	time.AfterFunc(max(wait, 0), func() {
		t.snap.mu.Lock()
		t.snap.due = false
		t.snap.mu.Unlock()
		t.mu.Lock()
		closed := t.closed
		t.mu.Unlock()
		if closed {
			return
		}
		if _, changed := t.refresh(); changed {
			t.notify(t)
		}
	})
}

// refreshAll recomputes every tab's snapshot: the poll's part, for what
// no output reports. It runs without w.mu, tab by tab, so that listing
// tabs never waits for /proc.
func (w *Workspace) refreshAll() {
	w.mu.Lock()
	tabs := make([]*tab, 0, len(w.tabs))
	for _, e := range w.tabs {
		tabs = append(tabs, e.tab)
	}
	w.mu.Unlock()
	for _, t := range tabs {
		t.refresh()
	}
}
