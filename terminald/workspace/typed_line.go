package workspace

import "strings"

// LineTyped reports whether tab id's shell sits at its prompt with text on
// the command line that was not entered yet: a half-typed line, which
// keys typed next would finish. It knows only what shell integration
// tells (the OSC 133 B mark where the command line starts): false for a
// tab without it, or running another program, or an unknown tab. The
// text counted runs from the mark to the cursor, so a shell's right-hand
// prompt or an autosuggestion drawn after the cursor does not count.
func (w *Workspace) LineTyped(id string) bool {
	e, err := w.tabByID(id)
	if err != nil {
		return false
	}
	t := e.tab
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited || !t.integrated || !t.sawPrompt || !t.atPrompt || t.scr.AltScreen() {
		return false
	}
	// The tab's mu, then the log's: the order onEvent holds them in.
	l := &t.cmds
	l.mu.Lock()
	from, ok := l.inputAt, l.haveIn
	l.mu.Unlock()
	if !ok {
		return false
	}
	cur := t.scr.CursorPos()
	if cur.Seq > from.Seq+1 {
		return true // a command line over several lines: surely typed
	}
	p := t.scr.ReadRange(from, cur, 2, 4096)
	return strings.TrimSpace(strings.Join(p.Lines, "")) != "" || p.More
}
