package workspace

import (
	"fmt"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/terminald/pty"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// A line run_command typed may leave the shell waiting for more: an alias
// that opens a block (alias zz='for i in 1; do'), a fish abbreviation, or
// syntax the check before typing (authz) cannot see. The next line the
// human typed would then be joined to the agent's command and run under
// the agent's approval.
//
// So in a tab with shell integration run_command keeps the tab's input
// lock after the Enter (keys typed meanwhile wait in the lock, they are
// not lost) until the shell shows it took the line as a whole command:
// its E or C mark (bash's PS0, zsh's and fish's preexec), or a new prompt
// (its B mark) on a line after the command line. If none came within
// acceptWait and the tab shows the shell reading more — its own process
// group in the foreground, its line editor's raw mode, our line read, the
// cursor on a new line — Phantom presses Ctrl-C, which in bash, zsh and
// fish discards the pending command: only the agent's text, since nobody
// could type in between. When in doubt it does not: a program in the
// foreground (the command started and the mark was lost) or a shell still
// busy with the line (canonical mode, input unread) is left alone, and
// after acceptCap the lock is released as before. A false cancel thus
// needs a shell back in its line editor, with no mark, for acceptWait.
// Tabs without integration (sh) show no marks: they are not guarded.

// acceptWait is how long after the Enter the shell may take to mark the
// line as a command before a shell reading more is cancelled.
const acceptWait = 1500 * time.Millisecond

// acceptCap bounds how long run_command keeps the input lock while the
// shell shows neither a mark nor that it is reading more.
const acceptCap = 5 * time.Second

// cancelWait bounds how long, after the Ctrl-C, the lock is kept for the
// shell's new prompt.
const cancelWait = 2 * time.Second

// accept is the tab's command log as it was when run_command typed.
type accept struct {
	// marks: the tab has shell integration and showed a prompt.
	marks bool
	// at is the cursor when the line was typed, on the command line.
	at                      screen.Pos
	started, prompts, lines uint64
}

// acceptLocked notes the command log before typing; t.mu held.
func (t *tab) acceptLocked() accept {
	l := &t.cmds
	l.mu.Lock()
	defer l.mu.Unlock()
	return accept{marks: t.integrated && t.sawPrompt, at: t.scr.CursorPos(), started: l.started, prompts: l.prompts, lines: l.lines}
}

// awaitAccepted waits, with the input lock held, until the shell took the
// line typed after g as a command, and cancels it when the shell waits for
// more of it: see the comment at the top of this file.
func (t *tab) awaitAccepted(g accept) error {
	start := time.Now()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		ok, changed := t.accepted(g)
		if ok {
			return nil
		}
		if since := time.Since(start); since >= acceptWait {
			switch t.readingMore(g.at) {
			case moreYes:
				return t.cancelContinuation(g)
			case moreNo:
				return nil
			}
			if since >= acceptCap {
				return nil
			}
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-t.stop:
			return nil
		}
	}
}

// accepted reports whether a mark after g shows the shell took the line,
// and returns a channel closed at the log's next change.
func (t *tab) accepted(g accept) (bool, chan struct{}) {
	l := &t.cmds
	l.mu.Lock()
	defer l.mu.Unlock()
	// (A prompt redrawn in place, as fish does for a line continued in
	// its editor, is no new prompt.)
	ok := l.started > g.started || l.lines > g.lines || l.prompts > g.prompts && l.haveIn && l.inputAt.Seq > g.at.Seq
	return ok, l.changedLocked()
}

// more is what readingMore found.
type more int

const (
	moreUnknown more = iota // the shell is busy, or the tab cannot be read
	moreYes                 // the shell's line editor waits for more
	moreNo                  // a program runs, or the tab's program ended
)

// readingMore reports whether the shell sits in its line editor, on a line
// after the command line at at, with everything typed read.
func (t *tab) readingMore(at screen.Pos) more {
	t.mu.Lock()
	gone := t.exited || t.closed
	cur, alt := t.scr.CursorPos(), t.scr.AltScreen()
	t.mu.Unlock()
	fg := t.foreground()
	switch {
	case gone || fg > 0 && !t.leaderGroup(fg):
		return moreNo
	case fg <= 0 || alt || cur.Seq <= at.Seq:
		return moreUnknown
	}
	m, err := pty.InputModes(t.pty)
	if err != nil || m.Canonical {
		return moreUnknown
	}
	if n, err := pty.Unread(t.pty); err != nil || n != 0 {
		return moreUnknown
	}
	return moreYes
}

// cancelContinuation presses Ctrl-C for the shell waiting for more of the
// line typed after g, waits briefly for its new prompt, and returns
// run_command's error.
func (t *tab) cancelContinuation(g accept) error {
	select {
	case t.input <- []byte{0x03}:
	case <-t.stop:
		return fmt.Errorf("tab %s closed while its shell waited for more of the command line: %w", t.id, errdefs.ErrFailedPrecondition)
	}
	t.waitPrompt(g.prompts, cancelWait)
	t.cmds.mu.Lock()
	t.cmds.typed = ""
	t.cmds.mu.Unlock()
	return fmt.Errorf("tab %s: the shell did not take the line as a whole command: after the Enter it held the line open for more "+
		"(a continuation prompt: an alias, abbreviation or syntax that opens a block), so Phantom cancelled it with Ctrl-C and nothing ran. "+
		"Send the command complete on one line, with the words that open and close its blocks written out: %w",
		t.id, errdefs.ErrFailedPrecondition)
}

// waitPrompt waits up to wait for a prompt after the first prompts.
func (t *tab) waitPrompt(prompts uint64, wait time.Duration) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		l := &t.cmds
		l.mu.Lock()
		back := l.prompts > prompts
		changed := l.changedLocked()
		l.mu.Unlock()
		if back {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			return
		case <-t.stop:
			return
		}
	}
}
