package workspace

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// Command tracking.
//
// A shell with integration marks each command with OSC 133: B where the
// command line starts (after the prompt), C where its output starts, D
// with its exit status where it ends. The tab's commandLog records the
// history positions of these marks as they are rendered, so a command's
// own output is the text between its C and D positions — read from the
// screen like any other history (screen.ReadRange), rendered, and as
// exact as the history. A program that erases the whole screen (ED 2)
// makes the screen's line numbers count again from its first row, so the
// running command's output restarts there (screen.EventCleared).
//
// In a tab without integration (sh), RunAndWait falls back to idleness:
// the shell has the terminal back and nothing was printed for idleQuiet.

// Ended-by values of Command.EndedBy.
const (
	// EndedByMark: the shell's end-of-command mark (OSC 133 D).
	EndedByMark = "exit_mark"
	// EndedByIdle: no integration; the shell took the terminal back.
	EndedByIdle = "idle"
	// EndedByExit: the tab's program itself exited.
	EndedByExit = "tab_exited"
	// EndedByPrompt: the shell showed its prompt again without running
	// anything (an empty line, a comment, a syntax error).
	EndedByPrompt = "prompt"
)

// idleQuiet is how long a tab without shell integration must be idle
// with no new output before a command typed into it counts as ended.
const idleQuiet = 300 * time.Millisecond

// pollEvery is how often waits look at a tab that sent no event.
const pollEvery = 25 * time.Millisecond

// Command is one command a tab's shell ran.
type Command struct {
	// Text is the command line: what the shell reported it ran (OSC 133
	// E, sent by Phantom's bash, zsh and fish integration), else what
	// run_command typed, else what the screen shows between the B and C
	// marks.
	Text string
	// Typed is what run_command typed for it, "" for a command it did not
	// type. Reported is true when Text is the shell's own report.
	Typed    string
	Reported bool
	// Start is where its output starts; End where it ended (valid when
	// Finished): its output is the history text in [Start, End).
	Start, End screen.Pos
	// StartedAt and FinishedAt are when the marks came; zero when not
	// known (TimesLost).
	StartedAt, FinishedAt time.Time
	// TimesLost is true when terminald restarted and could not learn
	// when the command ran, or when it ended (cmd_times.go).
	TimesLost bool
	// ExitCode is its status when HasExit.
	ExitCode int
	HasExit  bool
	// Finished is true once it ended.
	Finished bool
	// Cleared is true when it erased the whole screen: its output before
	// that is not in [Start, End).
	Cleared bool
	// EndedBy says how the end was seen (EndedBy* constants).
	EndedBy string
}

// commandLog is a tab's record of its shell's commands. Its fields are
// guarded by mu, which onEvent takes with the tab's mu held: never take
// the tab's mu while holding it.
type commandLog struct {
	mu      sync.Mutex
	inputAt screen.Pos // where the command line starts (B mark)
	haveIn  bool
	typed   string // the line run_command typed, for the next command
	// ran is the command line the shell reported it is about to run
	// (OSC 133 E), for the next C mark; haveRan says there is one.
	ran     string
	haveRan bool
	cur     *Command // started, not finished
	last    *Command // the last finished
	started uint64   // commands started so far
	prompts uint64   // prompts shown so far (B marks)
	lines   uint64   // command lines reported so far (E marks)
	changed chan struct{}
}

// changedLocked returns a channel closed at the next change.
func (l *commandLog) changedLocked() chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// wakeLocked wakes the waiters.
func (l *commandLog) wakeLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// onEvent records a shell integration mark; called from the screen's
// event callback, so with the tab's mu held and scr mid-write.
func (l *commandLog) onEvent(scr *screen.Screen, ev screen.Event) {
	switch ev.Kind {
	case screen.EventPromptStart, screen.EventCommandStart, screen.EventCommandExecuted, screen.EventCommandFinished,
		screen.EventCleared, screen.EventCommandLine:
	default:
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	switch ev.Kind {
	case screen.EventPromptStart:
		// A new prompt: until its end (B) the command line's place is
		// not known, and a line typed at the last one that ran nothing
		// (a comment) is not the next command's.
		l.haveIn, l.haveRan, l.typed = false, false, ""
	case screen.EventCommandStart:
		l.inputAt, l.haveIn = scr.CursorPos(), true
		l.haveRan = false
		l.prompts++
		l.wakeLocked()
	case screen.EventCommandLine:
		l.ran, l.haveRan = parseCommandLine(ev.Text)
		l.lines++
		l.wakeLocked()
	case screen.EventCommandExecuted:
		pos := scr.CursorPos()
		c := &Command{Start: pos, StartedAt: now, Text: l.typed, Typed: l.typed}
		switch {
		case l.haveRan:
			c.Text, c.Reported = l.ran, true
		case c.Text == "" && l.haveIn:
			p := scr.ReadRange(l.inputAt, screen.Pos{Seq: pos.Seq}, 50, 8192)
			c.Text = strings.TrimSpace(strings.Join(p.Lines, "\n"))
		}
		l.typed, l.haveIn = "", false
		l.ran, l.haveRan = "", false
		l.cur = c
		l.started++
		l.wakeLocked()
	case screen.EventCommandFinished:
		c := l.cur
		if c == nil {
			return // an end without a start: an empty command line
		}
		c.End, c.FinishedAt, c.Finished, c.EndedBy = scr.CursorPos(), now, true, EndedByMark
		c.ExitCode, c.HasExit = ev.ExitCode, ev.HasExit
		if c.End.Seq < c.Start.Seq {
			c.End = c.Start // numbers reused by a clear not seen as one
		}
		l.cur, l.last = nil, c
		l.wakeLocked()
	case screen.EventCleared:
		if l.cur != nil {
			l.cur.Start, l.cur.Cleared = scr.ScreenStart(), true
		}
	}
}

// parseCommandLine reads an OSC 133 E mark's parameters:
// cmdline_url=<the command line, percent-encoded>.
func parseCommandLine(params string) (string, bool) {
	enc, ok := strings.CutPrefix(params, "cmdline_url=")
	if !ok {
		return "", false
	}
	line, err := url.PathUnescape(enc)
	if err != nil {
		return "", false
	}
	return line, true
}

// LastCommand returns the last command tab id's shell finished, as shell
// integration reported it; false when there is none.
func (w *Workspace) LastCommand(id string) (Command, bool, error) {
	e, err := w.tabByID(id)
	if err != nil {
		return Command{}, false, err
	}
	l := &e.cmds
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		return Command{}, false, nil
	}
	return *l.last, true, nil
}

// tabByID returns tab id's entry.
func (w *Workspace) tabByID(id string) (*tabEntry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tabLocked(id)
}

// RunAndWait types line into idle tab id, as RunCommand, and waits up to
// wait for the command to end. It returns the command (Finished false
// when the time ran out, or ctx ended, first; End then unset). In a tab
// with shell integration the end is the D mark; without, the shell being
// back in the foreground with no new output for idleQuiet.
func (w *Workspace) RunAndWait(ctx context.Context, id, line string, wait time.Duration) (Command, error) {
	e, err := w.tabByID(id)
	if err != nil {
		return Command{}, err
	}
	t := e.tab
	t.mu.Lock()
	marks := t.integrated && t.sawPrompt
	at := t.scr.CursorPos()
	t.mu.Unlock()
	l := &t.cmds
	l.mu.Lock()
	before, prompts := l.started, l.prompts
	l.typed = line
	l.mu.Unlock()
	start := time.Now()
	if _, err := w.RunCommand(id, line); err != nil {
		l.mu.Lock()
		l.typed = ""
		l.mu.Unlock()
		return Command{}, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	if marks {
		return t.waitMarks(ctx, timer.C, before, prompts, line, at, start)
	}
	return t.waitIdle(ctx, timer.C, line, at, start)
}

// waitMarks waits for the first command started after before to end.
// A new prompt with no command started means the shell ran nothing.
func (t *tab) waitMarks(ctx context.Context, timeout <-chan time.Time, before, prompts uint64, line string, at screen.Pos, start time.Time) (Command, error) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		l := &t.cmds
		l.mu.Lock()
		var c *Command
		switch {
		case l.cur != nil && l.started == before+1:
			c = l.cur
		case l.last != nil && l.started >= before+1 && (l.cur == nil || l.started > before+1):
			c = l.last
		}
		var got Command
		if c != nil {
			got = *c
		}
		// (A prompt redrawn in place, as fish may, is no new prompt.)
		nothing := c == nil && l.started == before && l.prompts > prompts && l.inputAt.Seq > at.Seq
		if nothing {
			// The shell ran nothing: its prompt is on the line after
			// the command line (or after its error message).
			got = Command{Text: line, Start: screen.Pos{Seq: at.Seq + 1}, End: l.inputAt, StartedAt: start,
				FinishedAt: time.Now(), Finished: true, EndedBy: EndedByPrompt}
			got.End.Off = 0
		}
		changed := l.changedLocked()
		l.mu.Unlock()
		if nothing {
			return got, nil
		}
		if c != nil && got.Finished {
			t.settle(ctx)
			return got, nil
		}
		if done, cmd := t.exitedWhile(line, at, start); done {
			if c != nil {
				cmd.Start, cmd.StartedAt = got.Start, got.StartedAt
			}
			return cmd, nil
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-timeout:
			return t.stillRunning(c, got, line, at, start), nil
		case <-ctx.Done():
			return Command{}, fmt.Errorf("waiting for %q in tab %s: %w", line, t.id, ctx.Err())
		}
	}
}

// promptWait bounds how long a finished command's wait lingers for the
// shell's next prompt.
const promptWait = 2 * time.Second

// settle waits, briefly, until the tab is idle again: the end mark comes
// before the shell draws its next prompt, and a caller told the command
// ended will type the next one at once.
func (t *tab) settle(ctx context.Context) {
	deadline := time.Now().Add(promptWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		t.mu.Lock()
		idle := t.idleLocked() || t.exited || t.closed
		t.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(pollEvery / 5)
	}
}

// stillRunning is what a wait that timed out returns: the command as
// seen so far.
func (t *tab) stillRunning(c *Command, got Command, line string, at screen.Pos, start time.Time) Command {
	if c == nil {
		// The shell has not even started it (no C mark yet).
		got = Command{Text: line, StartedAt: start, Start: screen.Pos{Seq: at.Seq + 1}}
	}
	got.Finished = false
	return got
}

// exitedWhile reports whether the tab's program has exited (the command
// was `exit`, or killed the shell), and then the command as ended by it.
func (t *tab) exitedWhile(line string, at screen.Pos, start time.Time) (bool, Command) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.exited && !t.closed {
		return false, Command{}
	}
	return true, Command{Text: line, Start: screen.Pos{Seq: at.Seq + 1}, End: t.scr.HistoryEnd(), StartedAt: start,
		FinishedAt: time.Now(), Finished: true, ExitCode: t.exitCode, HasExit: t.exited, EndedBy: EndedByExit}
}

// waitIdle waits, in a tab without shell integration, for the command
// typed on the line at at to end: the cursor has left that line, the
// shell is back in the foreground and nothing was printed for idleQuiet.
// Its output runs from the line after the command line to the line the
// new prompt is on.
func (t *tab) waitIdle(ctx context.Context, timeout <-chan time.Time, line string, at screen.Pos, start time.Time) (Command, error) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	cmd := Command{Text: line, Start: screen.Pos{Seq: at.Seq + 1}, StartedAt: start}
	var gen uint64
	var quietSince time.Time
	for {
		if done, c := t.exitedWhile(line, at, start); done {
			return c, nil
		}
		t.mu.Lock()
		idle := t.idleLocked()
		cur := t.scr.CursorPos()
		t.mu.Unlock()
		g := t.outputGen()
		switch {
		case !idle || cur.Seq <= at.Seq || g != gen:
			gen, quietSince = g, time.Time{}
		case quietSince.IsZero():
			quietSince = time.Now()
		case time.Since(quietSince) >= idleQuiet:
			cmd.End = screen.Pos{Seq: cur.Seq}
			cmd.FinishedAt, cmd.Finished, cmd.EndedBy = quietSince, true, EndedByIdle
			return cmd, nil
		}
		select {
		case <-tick.C:
		case <-timeout:
			return cmd, nil
		case <-ctx.Done():
			return Command{}, fmt.Errorf("waiting for %q in tab %s: %w", line, t.id, ctx.Err())
		}
	}
}

// WaitFor waits up to wait until match reports a match in tab id's
// history from from on, or, with idle, until the tab is idle (at its
// prompt; a tab whose program is not a shell, when its output was quiet
// for a second). It returns the matching line's sequence number and
// whether there was a match. match is called with the tab's lock held
// (keep it cheap) on each line once, the newest line again each time it
// grows.
func (w *Workspace) WaitFor(ctx context.Context, id string, from screen.Pos, idle bool, match func(line string) bool, wait time.Duration) (uint64, bool, error) {
	e, err := w.tabByID(id)
	if err != nil {
		return 0, false, err
	}
	t := e.tab
	timer := time.NewTimer(wait)
	defer timer.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	pos := from
	var gen uint64
	first := true
	var quietSince time.Time
	for {
		g := t.outputGen()
		if idle {
			t.mu.Lock()
			ok := t.idleLocked() && !t.promptDrawingLocked()
			shell, exited := t.shell, t.exited || t.closed
			t.mu.Unlock()
			switch {
			case ok:
				return 0, true, nil
			case exited:
				return 0, false, fmt.Errorf("tab %s: its program has exited, so it will never be idle: %w", id, errdefs.ErrFailedPrecondition)
			case !shell && (first || g != gen):
				quietSince = time.Now()
			case !shell && time.Since(quietSince) >= time.Second:
				return 0, true, nil
			}
		} else if first || g != gen {
			var seq uint64
			var found bool
			t.mu.Lock()
			pos, seq, found = scanLines(t.scr, pos, match)
			t.mu.Unlock()
			if found {
				return seq, true, nil
			}
		}
		gen, first = g, false
		select {
		case <-tick.C:
		case <-timer.C:
			return 0, false, nil
		case <-ctx.Done():
			return 0, false, fmt.Errorf("waiting in tab %s: %w", id, ctx.Err())
		}
	}
}

// scanLines runs match on the lines from pos on and returns where the
// next scan starts: the start of the newest line, which may still grow.
func scanLines(scr *screen.Screen, pos screen.Pos, match func(string) bool) (screen.Pos, uint64, bool) {
	for {
		p := scr.ReadForward(pos, 4096, 1<<20)
		for i, line := range p.Lines {
			seq := p.Start.Seq + uint64(i)
			if match(line) {
				return pos, seq, true
			}
		}
		if !p.More {
			if len(p.Lines) > 0 {
				// Rescan the newest line from its start next time: text
				// may be appended to it.
				newest := p.Start.Seq + uint64(len(p.Lines)) - 1
				if newest > pos.Seq {
					pos = screen.Pos{Seq: newest}
				}
			}
			return pos, 0, false
		}
		pos = p.End
	}
}

// outputGen counts the chunks of output the tab rendered so far
// (snapshot_tab.go keeps the count): a wait compares it to see whether
// anything was printed.
func (t *tab) outputGen() uint64 { return t.snap.outGen.Load() }
