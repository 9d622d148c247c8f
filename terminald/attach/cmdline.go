package attach

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/keys"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// tmux's habits that run commands: the command prompt (prefix :), which
// takes every prefix command by name with its arguments, as key bindings
// in config.json may too (config.ParseCommandLine reads both); the last
// tab (prefix l); repeatable keys (after prefix C-Left, more C-arrows
// within the repeat time resize again without the prefix).

// habitState is the session's state for these habits.
type habitState struct {
	shown string // the tab shown when last looked (trackShown)
	last  string // the tab shown before it, for last-tab
	// lastPane maps a tab to the pane of its entry focused before it,
	// for last-pane (extras.go); lastWin is the window shown before
	// this one, for last-session.
	lastPane map[string]string
	lastWin  string
	// repeatUntil is when the keys of repeatable commands stop running
	// without the prefix; zero when no such command ran.
	repeatUntil time.Time
	history     []string // the command prompt's lines, oldest first
	histAt      int      // the history line shown; len(history): the one typed
	draft       string   // what was typed before walking the history
	complete    []string // the names Tab cycles through, after a Tab
	completeAt  int
	bufChosen   int // modeBuffers: the highlighted buffer
}

// maxHistory bounds the command prompt's history.
const maxHistory = 100

// runLine runs a command line from a key binding or the prompt: a
// command's name, maybe with arguments. A line that does not parse (a
// binding Load did not check) says why on the status line.
func (s *session) runLine(line string) {
	l, err := config.ParseCommandLine(line)
	if err != nil {
		s.setMessage(err.Error())
		return
	}
	s.trackShown()
	if f, ok := lineFuncs[l.Name]; ok && len(l.Args) > 0 {
		f(s, l)
	} else if f, ok := commandFuncs[l.Name]; ok {
		f(s)
	} else {
		s.setMessage(fmt.Sprintf("%s: not available in this version of attach", l.Name))
	}
	s.trackShown()
}

// lineFuncs run the commands that take arguments (config's commandArgs)
// when they are given; without, commandFuncs runs them as their key does.
var lineFuncs = map[string]func(*session, config.CommandLine){
	"rename-tab":     func(s *session, l config.CommandLine) { s.rename(strings.Join(l.Args, " ")) },
	"rename-session": func(s *session, l config.CommandLine) { s.renameWindow(strings.Join(l.Args, " ")) },
	"select-tab":     func(s *session, l config.CommandLine) { s.focusNumber(l.Count(0)) },
	"new-tab":        func(s *session, l config.CommandLine) { s.newTabIn(l.Args[0]) },
	"resize-up":      func(s *session, l config.CommandLine) { s.resizeBy(dirUp, l.Count(resizeStep)) },
	"resize-down":    func(s *session, l config.CommandLine) { s.resizeBy(dirDown, l.Count(resizeStep)) },
	"resize-left":    func(s *session, l config.CommandLine) { s.resizeBy(dirLeft, l.Count(resizeStep)) },
	"resize-right":   func(s *session, l config.CommandLine) { s.resizeBy(dirRight, l.Count(resizeStep)) },
	"send-keys": func(s *session, l config.CommandLine) {
		b, err := keys.Parse(l.Args, false)
		if err != nil {
			s.setMessage("send-keys: " + err.Error())
			return
		}
		s.leaveCopy()
		_ = s.input(b)
	},
}

// rename names the shown tab.
func (s *session) rename(name string) {
	if _, err := s.ws.Update(s.tabID, workspace.Update{Name: &name}); err != nil {
		s.setMessage("rename: " + err.Error())
	}
	s.statusOld = true
}

// newTabIn opens a tab in dir (~ is the home directory, a relative path
// is taken from the shown tab's directory) and shows it.
func (s *session) newTabIn(arg string) {
	dir, base := arg, ""
	if t, ok := s.focusedTab(); ok {
		base = t.Directory
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, dir[1:])
		}
	}
	if !filepath.IsAbs(dir) && base != "" {
		dir = filepath.Join(base, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		s.setMessage(fmt.Sprintf("new-tab %s: no such directory", arg)) // as typed: the status line is short
		return
	}
	r := s.paneRect()
	spec := workspace.CreateSpec{WindowID: s.winID, Cols: r.w, Rows: r.h, Directory: dir}
	if t, ok := s.focusedTab(); ok {
		spec.GroupID = t.GroupID
	}
	t, err := s.ws.Create(spec)
	if err != nil {
		s.setMessage("new tab: " + err.Error())
		return
	}
	s.focus(t.ID)
}

// resizeBy moves the focused pane's border by cells towards d.
func (s *session) resizeBy(d direction, cells int) {
	if s.fp == nil || s.zoomed {
		return
	}
	if resize(s.fp.leaf, d, cells) {
		s.relayout()
	}
}

// trackShown notes a change of the shown tab, so that last-tab knows the
// one before.
func (s *session) trackShown() {
	h := &s.habit
	if s.tabID != "" && s.tabID != h.shown {
		if h.shown != "" {
			h.last = h.shown
		}
		h.shown = s.tabID
	}
}

// lastTab shows the tab shown before this one, as tmux's last-window.
func (s *session) lastTab() {
	s.trackShown()
	id := s.habit.last
	if id == "" || !slices.ContainsFunc(s.tabs, func(t workspace.Terminal) bool { return t.ID == id }) {
		s.setMessage("no last tab")
		return
	}
	s.focus(id)
}

// copyPageUp enters copy mode and goes a page up at once (tmux's
// copy-mode -u, prefix PgUp).
func (s *session) copyPageUp() {
	s.enterCopy(false)
	if s.mode == modeCopy {
		s.scrollBy(-max(s.paneRect().h-1, 1))
	}
}

// repeatKey runs key as a repeatable command when the repeat time of the
// last one has not run out, and reports whether it did; any other key
// ends the repeat (and goes where keys go), as in tmux.
func (s *session) repeatKey(key string) bool {
	h := &s.habit
	if h.repeatUntil.IsZero() {
		return false
	}
	if s.now().After(h.repeatUntil) {
		h.repeatUntil = time.Time{}
		return false
	}
	if len(key) == 3 && key[:2] == "\x1bO" {
		key = "\x1b[" + key[2:]
	}
	line, ok := s.settings().Bindings.Command(key)
	if f := strings.Fields(line); !ok || len(f) == 0 || !config.Repeatable(f[0]) {
		h.repeatUntil = time.Time{}
		return false
	}
	s.runRepeatable(line)
	return true
}

// runRepeatable runs a command line and, when its command repeats, lets
// its keys run without the prefix for the repeat time.
func (s *session) runRepeatable(line string) {
	s.runLine(line)
	if f := strings.Fields(line); len(f) > 0 && config.Repeatable(f[0]) && s.settings().RepeatTime > 0 {
		s.habit.repeatUntil = s.now().Add(s.settings().RepeatTime)
	} else {
		s.habit.repeatUntil = time.Time{}
	}
}

// startCommandPrompt opens the command prompt (prefix :).
func (s *session) startCommandPrompt() {
	h := &s.habit
	h.histAt, h.draft, h.complete = len(h.history), "", nil
	s.startPrompt(promptCommand, "")
}

// commandDone runs the command prompt's line (Enter) and keeps it in the
// history.
func (s *session) commandDone(line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	h := &s.habit
	if n := len(h.history); n == 0 || h.history[n-1] != line {
		h.history = append(h.history, line)
		if len(h.history) > maxHistory {
			h.history = h.history[1:]
		}
	}
	s.runLine(line)
}

// commandPromptKey handles the command prompt's own keys (Tab, Up,
// Down) and reports whether key was one.
func (s *session) commandPromptKey(key string) bool {
	if s.promptKind != promptCommand {
		return false
	}
	h := &s.habit
	if key != "\t" {
		h.complete = nil
	}
	switch key {
	case "\t":
		s.completePrompt()
	case "\x1b[A", "\x1bOA":
		if h.histAt > 0 {
			if h.histAt == len(h.history) {
				h.draft = string(s.prompt)
			}
			h.histAt--
			s.prompt = []rune(h.history[h.histAt])
		}
	case "\x1b[B", "\x1bOB":
		if h.histAt < len(h.history) {
			h.histAt++
			if h.histAt == len(h.history) {
				s.prompt = []rune(h.draft)
			} else {
				s.prompt = []rune(h.history[h.histAt])
			}
		}
	default:
		return false
	}
	return true
}

// completePrompt completes the command name (Tab): as far as the names
// that match agree, then, at each further Tab, the next of them.
func (s *session) completePrompt() {
	h := &s.habit
	if len(h.complete) > 0 {
		h.completeAt = (h.completeAt + 1) % len(h.complete)
		s.prompt = []rune(h.complete[h.completeAt])
		return
	}
	text := string(s.prompt)
	done, names := config.CompleteCommand(text)
	switch {
	case len(names) == 0 && !strings.Contains(text, " "):
		s.setMessage(fmt.Sprintf("no command starts with %q", text))
	case len(names) > 1 && done == text:
		h.complete, h.completeAt = names, 0
		s.prompt = []rune(names[0])
	default:
		s.prompt = []rune(done)
	}
}
