package workspace

import (
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// What a shell's prompt redraw is not: new output.
//
// A shell redraws its prompt in place — on a resize (SIGWINCH), when the
// terminal gains focus, on `commandline -f repaint` in fish, for a timer
// in a prompt theme — by going back to its start, erasing (bash's
// "\r\e[K", zsh's and fish's "\e[J") and printing it again. A reader that
// continues from a cursor must not get that prompt as text printed since:
//   - a wait for "idle" ends once the prompt is drawn (its B mark), not
//     when it starts (A): zsh and fish draw the prompt between the two,
//     so a cursor handed out in between came before the prompt, and the
//     prompt then read as new output (WaitFor, promptDrawing);
//   - a cursor handed out while the tab sits at a drawn prompt is no
//     earlier than that prompt's end, even when the read caught the
//     prompt erased and not yet redrawn (ReadScreenSeen);
//   - a read from a cursor whose line the redraw erased keeps the
//     cursor where it was, instead of moving it to the start of that line
//     (screen.ReadForward).

// promptGrace bounds how long a wait for idle waits for a prompt's end
// mark after its start: a shell whose prompt the user rebuilt without it
// is idle all the same.
const promptGrace = 3 * time.Second

// promptEvent follows the prompt marks for the drawn prompt; called with
// t.mu held, from the screen's event callback.
func (t *tab) promptEvent(ev screen.Event) {
	switch ev.Kind {
	case screen.EventPromptStart:
		t.drawing, t.drawingSince = true, time.Now()
	case screen.EventCommandStart:
		t.drawing = false
		t.drawn, t.haveDrawn = t.scr.CursorPos(), true
	case screen.EventCommandExecuted, screen.EventCleared:
		t.drawing, t.haveDrawn = false, false
	}
}

// promptDrawingLocked reports whether the shell is still drawing its
// prompt: it started one (A) less than promptGrace ago and has not
// finished it (B).
func (t *tab) promptDrawingLocked() bool {
	return t.drawing && time.Since(t.drawingSince) < promptGrace
}

// ReadScreenSeen is ReadScreen that also gives read the end of the
// prompt the tab's shell sits at, drawn: a cursor for what comes next
// should be no earlier (the zero Pos when there is none).
func (w *Workspace) ReadScreenSeen(id string, read func(scr *screen.Screen, epoch int64, seen screen.Pos)) error {
	w.mu.Lock()
	e, err := w.tabLocked(id)
	w.mu.Unlock()
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var seen screen.Pos
	if e.haveDrawn && e.atPrompt && !e.scr.AltScreen() {
		seen = e.drawn
	}
	read(e.scr, e.started.UnixNano(), seen)
	return nil
}
