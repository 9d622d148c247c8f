package workspace

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/terminald/pty"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// run_command types only into an empty command line.
//
// Before it types, with the tab's input lock held (so that no other
// writer's keys can come between the look and the line), it refuses when
//
//   - keys typed into the tab since the last Enter may still be on the
//     line (lineKeys, linekeys.go): keys already written but not yet read
//     or echoed count, so a human typing at that moment is never joined;
//   - or, in a tab with shell integration, the screen shows text between
//     the end of the prompt (the OSC 133 B mark) and the cursor: a line
//     recalled from history, typed before terminald restarted, or the
//     first line of a command continued on the next (PS2).
//
// It never clears the line (no Ctrl-U, no Ctrl-C) and its refusal never
// quotes what is there: it may be a secret.
//
// Keys are forgotten without an Enter only where the screen can be
// trusted to show the whole line: with shell integration, once the tab
// has settled — the kernel says nothing typed is left unread and all the
// output was read, nothing was typed or printed for lineSettle — and the
// screen from the prompt's end on is blank (a right prompt or a
// completion menu there keeps the keys). Keys typed into a full-screen
// program (less, vim) are forgotten that way once the shell has shown a
// prompt after them; keys into the shell's own line that Phantom could
// not follow (a line erased with Ctrl-U, an arrow pressed) once the
// prompt they were typed at settled with its line empty. Plain text typed
// into the shell's line is never forgotten that way: OSC 133 marks are
// output, which any program in the tab can print, so a forged prompt mark
// must not make the human's text look gone; only Enter, Ctrl-C and
// Backspace clear it. Without
// integration (sh) Phantom cannot see where the command line starts: it
// follows the keys alone and refuses until the next Enter (or Ctrl-C)
// whenever it cannot tell the line is empty.

// lineSettle is how quiet a tab must have been before keys typed into a
// program that has since ended are taken as that program's.
const lineSettle = 300 * time.Millisecond

// inputLockWait bounds how long run_command waits for the tab's input
// lock, which a writer holds while the program does not read its input.
const inputLockWait = 2 * time.Second

// lineView is what the check of a tab's command line looks at, gathered
// with the tab's input lock and mu held.
type lineView struct {
	keys lineKeys
	// marks: shell integration reported where the prompt ends (B) and
	// the shell sits at that prompt.
	marks bool
	// lost: the cursor is before the prompt's end (the screen was
	// cleared at the prompt), so the line cannot be read.
	lost bool
	// shown is the screen from the prompt's end to the cursor; rest from
	// the cursor to the end of the screen. more: shown did not fit a read.
	shown, rest string
	more        bool
	// prompts counts the prompts the shell has shown; promptAt is where
	// the current one ends (its B mark), valid with marks.
	prompts  uint64
	promptAt screen.Pos
	// unread is the typed bytes no program has read, unrendered the
	// output not yet read from the terminal; -1 when unknown.
	unread, unrendered int
	// canonical: the terminal is in canonical mode, where unread does
	// not count a line still being typed.
	canonical bool
	// quiet is how long nothing was typed into or printed by the tab.
	quiet time.Duration
}

// check decides whether run_command may type into the line v shows. It
// returns forget when the keys followed since the last Enter are gone
// from the line and may be forgotten.
func (v lineView) check(tab string) (forget bool, err error) {
	if !v.keys.empty() {
		if !v.keysGone() {
			return false, v.keysError(tab)
		}
		forget = true
	}
	if !v.marks {
		return forget, nil
	}
	if v.lost {
		return false, refuseLine(tab, "Phantom cannot see its command line: the cursor is before the end of its prompt (the screen was cleared at the prompt)")
	}
	if shown := strings.TrimSpace(v.shown); shown != "" || v.more {
		what := fmt.Sprintf("shows %s after its prompt, not entered", characters(utf8.RuneCountInString(shown)))
		if v.more {
			what = "shows more than a screenful of text after its prompt, not entered"
		}
		return false, refuseLine(tab, "its command line "+what+
			" (typed there, recalled from history, or the start of a command continued on the next line)")
	}
	return forget, nil
}

// screenBlank reports whether the screen can be trusted to show the line,
// and shows it empty: see the comment at the top of this file.
func (v lineView) screenBlank() bool {
	return v.marks && !v.lost && !v.more && strings.TrimSpace(v.shown) == "" && strings.TrimSpace(v.rest) == ""
}

// keysGone reports whether the keys followed are gone from the line: see
// the comment at the top of this file. A line that only ended (Enter,
// Ctrl-C) is gone once the tab settled, in any tab: whatever read it has
// started, and the interrupt was handled.
func (v lineView) keysGone() bool {
	k := v.keys
	switch {
	case k.lineEmpty():
		return v.unread == 0 && v.unrendered == 0 && v.quiet >= lineSettle
	case k.shell && k.unknown == whyNone:
		// Plain text typed into the shell's line and not erased: the
		// screen cannot show it gone (marks are output any program can
		// print), so only Enter, Ctrl-C or Backspace clear it.
		return false
	case k.shell:
		// Edited in ways not followed: gone when the prompt the keys were
		// typed at (redrawn, maybe: readline redraws it with its marks on
		// Ctrl-U) shows its line empty.
		return v.screenBlank() && v.samePrompt() && v.settled()
	default:
		// Keys into a program: gone once a prompt came after them.
		return v.screenBlank() && v.prompts > k.prompts && v.settled()
	}
}

// samePrompt reports whether the prompt shown ends where the one the
// last key was typed at ended.
func (v lineView) samePrompt() bool {
	return v.keys.havePrompt && v.keys.promptAt == v.promptAt
}

// settled reports whether the kernel holds no typed key unread and no
// output unrendered, and nothing was typed or printed for lineSettle.
func (v lineView) settled() bool {
	return v.unread == 0 && v.unrendered == 0 && !v.canonical && v.quiet >= lineSettle
}

// keysError says why the keys followed keep run_command out, without
// quoting them.
func (v lineView) keysError(tab string) error {
	k := v.keys
	var what string
	switch {
	case k.lineEmpty():
		return refuseLine(tab, "a line was entered or interrupted there moments ago, and what reads it has not settled yet: try again in a moment")
	case k.unknown == whyNone && k.chars > 0:
		what = fmt.Sprintf("its command line holds %s typed there but not entered", characters(k.chars))
	case k.unknown == whyPaste:
		what = "its command line may hold text pasted there but not entered"
	case k.unknown == whyRestored:
		what = "its command line may hold text typed there before terminald restarted"
	default:
		what = "its command line may hold text typed there but not entered: keys that edit the line in ways Phantom cannot follow " +
			"(arrows, Tab, Ctrl-U, Ctrl-R, Escape, …) were pressed there since the last Enter"
	}
	if v.screenBlank() && (k.shell && k.unknown != whyNone && v.samePrompt() || !k.shell && v.prompts > k.prompts) {
		// Only the settling is missing.
		what += "; the screen shows the line empty, but keys were typed or output printed there moments ago: try again in a moment"
	}
	return refuseLine(tab, what)
}

// characters is "1 character" or "n characters".
func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return fmt.Sprintf("%d characters", n)
}

// refuseLine is run_command's refusal of a tab whose command line is not
// empty, or not known to be.
func refuseLine(tab, what string) error {
	return fmt.Errorf("tab %s: %s. run_command types only into an empty command line; it never adds to or clears what someone typed there. "+
		"Wait until the line is run or cleared, or open a tab of your own with create_terminal and run the command there: %w",
		tab, what, errdefs.ErrFailedPrecondition)
}

// lineViewLocked gathers what check looks at. Called with the input lock
// and t.mu held, the tab idle.
func (t *tab) lineViewLocked() lineView {
	v := lineView{keys: t.keys, unread: -1, unrendered: -1}
	l := &t.cmds
	l.mu.Lock()
	in, haveIn := l.inputAt, l.haveIn
	v.prompts = l.prompts
	l.mu.Unlock()
	if t.integrated && t.sawPrompt && haveIn {
		v.marks, v.promptAt = true, in
		cur := t.scr.CursorPos()
		if cur.Seq < in.Seq || cur.Seq == in.Seq && cur.Off < in.Off {
			v.lost = true
		} else {
			var p screen.Page
			p = t.scr.ReadRange(in, cur, 50, 8192)
			v.shown, v.more = strings.Join(p.Lines, "\n"), p.More || p.Trimmed > 0
			p = t.scr.ReadRange(cur, t.scr.HistoryEnd(), 50, 8192)
			v.rest = strings.Join(p.Lines, "\n")
			if p.More {
				v.rest += "…"
			}
		}
	}
	if v.keys.empty() {
		return v // the kernel's counts are needed only to forget keys
	}
	if m, err := pty.InputModes(t.pty); err == nil {
		v.canonical = m.Canonical
	} else {
		v.canonical = true // unknown: never forget
	}
	if n, err := pty.Unread(t.pty); err == nil {
		v.unread = n
	}
	if n, err := pty.Unrendered(t.pty); err == nil {
		v.unrendered = n
	}
	last := v.keys.at
	if out := time.Unix(0, t.lastOutput.Load()); out.After(last) {
		last = out
	}
	v.quiet = time.Since(last)
	return v
}

// keyTarget says where keys written now go: see keyTarget.shell.
func (t *tab) keyTarget() keyTarget {
	m, err := pty.InputModes(t.pty)
	if err != nil {
		return keyTarget{shell: true}
	}
	shell := m.Canonical
	if !shell {
		fg := t.foreground()
		shell = fg <= 0 || t.leaderGroup(fg)
	}
	return keyTarget{shell: shell, modes: m}
}

// lockInput takes the tab's input lock, which every writer of typed
// input holds while it writes: false when the tab closed first, or wait
// (when > 0) passed.
func (t *tab) lockInput(wait time.Duration) bool {
	var timeout <-chan time.Time
	if wait > 0 {
		tm := time.NewTimer(wait)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case t.inLock <- struct{}{}:
		return true
	case <-t.stop:
	case <-timeout:
	}
	return false
}

// unlockInput releases the input lock.
func (t *tab) unlockInput() { <-t.inLock }

// typeKeys writes keys typed into the tab — by the human (attach,
// `phantom send`) or, with agent, send_keys — following them (lineKeys)
// before they reach the program, with the input lock held until they are
// queued. An agent's keys are refused while keys the human typed are on
// the line, not entered (humanLineError): an Enter would run the human's
// half-typed line, text would join it, Ctrl-C or Ctrl-U would throw it
// away.
func (t *tab) typeKeys(p []byte, agent bool) error {
	if !t.lockInput(0) {
		return fmt.Errorf("tab %s is closed: %w", t.id, errdefs.ErrFailedPrecondition)
	}
	defer t.unlockInput()
	if agent && t.keys.human && !t.keys.lineEmpty() {
		t.mu.Lock()
		v := t.lineViewLocked()
		t.mu.Unlock()
		if !v.keysGone() {
			return humanLineError(t.id)
		}
		t.keys.forget()
	}
	to := t.keyTarget()
	t.cmds.mu.Lock()
	prompts, promptAt, havePrompt := t.cmds.prompts, t.cmds.inputAt, t.cmds.haveIn
	t.cmds.mu.Unlock()
	t.keys.feed(p, to)
	if !agent && !t.keys.lineEmpty() {
		t.keys.human = true
	}
	if !t.keys.empty() {
		t.keys.at, t.keys.prompts, t.keys.promptAt, t.keys.havePrompt = time.Now(), prompts, promptAt, havePrompt
	}
	select {
	case t.input <- append([]byte(nil), p...):
		return nil
	case <-t.stop:
		return fmt.Errorf("tab %s is closed: %w", t.id, errdefs.ErrFailedPrecondition)
	}
}

// humanLineError is send_keys's refusal of a tab whose line holds keys
// the human typed and did not enter; it never quotes them (they may be a
// secret).
func humanLineError(tab string) error {
	return fmt.Errorf("tab %s: the human typed keys there that are not entered yet (a half-typed line, or keys a program "+
		"is still reading); send_keys never finishes, joins or erases what the human is typing. Wait until they enter or "+
		"clear it, or ask them: %w", tab, errdefs.ErrFailedPrecondition)
}
