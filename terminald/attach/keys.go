package attach

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// DefaultPrefix is Ctrl-\ (0x1c), the key that starts a command.
const DefaultPrefix = config.DefaultPrefix

// ParsePrefix reads a prefix key as config.json writes it: "C-\\",
// "C-a", "^B", or "" for DefaultPrefix.
func ParsePrefix(s string) (byte, error) { return config.ParsePrefix(s) }

// keys handles typed bytes according to the mode. Mouse reports (SGR,
// which the renderer asks the client for) are cut out of the stream and
// handled by mouse.go in every mode.
func (s *session) keys(b []byte) error {
	if len(s.pending) > 0 {
		b = append(s.pending, b...)
		s.pending = nil
	}
	for len(b) > 0 && s.exit == nil {
		if bytes.HasPrefix(b, mousePrefix) {
			ev, n, ok := parseMouse(b)
			switch {
			case n == 0 && len(b) < 32:
				// Cut by the read: wait for the rest (bounded, so a
				// stray "ESC [ <" does not hold keys back for long).
				s.pending = append([]byte(nil), b...)
				return nil
			case n == 0:
				n = len(mousePrefix)
			case ok:
				if err := s.mouse(ev); err != nil {
					return err
				}
			}
			b = b[n:]
			continue
		}
		if s.prefixed {
			// The key after the prefix: one byte, or an arrow's whole
			// escape sequence.
			s.prefixed = false
			n := 1
			if b[0] == 0x1b && len(b) > 1 {
				n = escLen(b)
			}
			if err := s.command(string(b[:n])); err != nil {
				return err
			}
			b = b[n:]
			continue
		}
		if s.mode == modeNormal && !s.habit.repeatUntil.IsZero() {
			// Within the repeat time a repeatable command's key runs
			// again without the prefix (cmdline.go).
			n := 1
			if b[0] == 0x1b && len(b) > 1 {
				n = escLen(b)
			}
			if s.repeatKey(string(b[:n])) {
				b = b[n:]
				continue
			}
		}
		// The keys up to the next mouse report go to the mode.
		chunk := b
		if i := bytes.Index(b[1:], mousePrefix); i >= 0 {
			chunk = b[:i+1]
		}
		var rest []byte
		var err error
		switch s.mode {
		case modePrompt:
			rest = s.promptKeys(chunk)
		case modeCopy:
			rest = s.copyKeys(chunk)
		case modeSheet:
			rest = s.sheetKeys(chunk)
		case modeHelp:
			rest = s.helpKeys(chunk) // keylist.go
		case modeChoose:
			rest = s.chooseKeys(chunk)
		case modeGrants:
			rest = s.grantsKeys(chunk)
		case modeConfirm:
			rest = s.confirmKeys(chunk)
		case modeBuffers:
			rest = s.bufferKeys(chunk)
		default:
			rest, err = s.normalKeys(chunk)
		}
		if err != nil {
			return err
		}
		b = b[len(chunk)-len(rest):]
	}
	return nil
}

// normalKeys types b into the tab up to the prefix and returns what
// follows it. A tab whose program ended closes on any key.
func (s *session) normalKeys(b []byte) ([]byte, error) {
	i := bytes.IndexByte(b, s.o.Prefix)
	if i == 0 {
		s.prefixed = true
		return b[1:], nil
	}
	if i < 0 {
		i = len(b)
	}
	if t, ok := s.focusedTab(); ok && t.Exited {
		s.closeTab(t.ID)
		return b[i:], nil
	}
	return b[i:], s.input(b[:i])
}

// focusedTab is the shown tab as last listed.
func (s *session) focusedTab() (workspace.Terminal, bool) {
	i := slices.IndexFunc(s.tabs, func(t workspace.Terminal) bool { return t.ID == s.tabID })
	if i < 0 {
		return workspace.Terminal{}, false
	}
	return s.tabs[i], true
}

// closeTab closes tab id. Closing waits for the tab's processes to hang
// up; the close event then moves every client of the window to a
// neighbour.
func (s *session) closeTab(id string) {
	s.bg.Go(func() { _ = s.ws.Close(id) })
	s.setMessage("closing " + s.tabLabel(id))
}

// input types b into the shown tab.
func (s *session) input(b []byte) error {
	if len(b) == 0 || s.tabID == "" {
		return nil
	}
	if s.message != "" {
		s.message = ""
		s.needFrame = true
	}
	s.typedTab = s.tabID
	if err := s.ws.Input(s.tabID, b); err != nil {
		s.setMessage(err.Error())
	}
	return nil
}

// prefixKeysHelp is the short key list shown for an unknown prefix key.
const prefixKeysHelp = "prefix ? lists the keys"

// command runs the prefix command line bound to key (the bytes it sent).
// The prefix itself, pressed twice, types it into the tab.
func (s *session) command(key string) error {
	s.message = ""
	s.needFrame = true
	if key == string(rune(s.o.Prefix)) {
		if s.mode == modeNormal {
			return s.input([]byte(key))
		}
		return nil
	}
	if len(key) == 3 && key[:2] == "\x1bO" {
		key = "\x1b[" + key[2:] // an arrow in application cursor mode
	}
	name, ok := s.settings().Bindings.Command(key)
	if !ok {
		label := config.KeyName(key)
		if strings.ContainsFunc(label, unicode.IsControl) {
			label = strconv.Quote(label) // a key with no name, e.g. F5
		}
		s.setMessage(fmt.Sprintf("no prefix key %s; %s", label, prefixKeysHelp))
		return nil
	}
	s.runRepeatable(name)
	return nil
}

// commandFuncs runs each command of config.Commands by name. The table of
// commands, with their default keys and help, is config's; this is what
// each one does here.
var commandFuncs = map[string]func(*session){
	"next-tab":        func(s *session) { s.stepEntry(1) },
	"previous-tab":    func(s *session) { s.stepEntry(-1) },
	"select-tab-1":    func(s *session) { s.focusNumber(1) },
	"select-tab-2":    func(s *session) { s.focusNumber(2) },
	"select-tab-3":    func(s *session) { s.focusNumber(3) },
	"select-tab-4":    func(s *session) { s.focusNumber(4) },
	"select-tab-5":    func(s *session) { s.focusNumber(5) },
	"select-tab-6":    func(s *session) { s.focusNumber(6) },
	"select-tab-7":    func(s *session) { s.focusNumber(7) },
	"select-tab-8":    func(s *session) { s.focusNumber(8) },
	"select-tab-9":    func(s *session) { s.focusNumber(9) },
	"select-tab":      func(s *session) { s.startPrompt(promptTabNumber, "") },
	"choose-tree":     (*session).openTree,
	"choose-tab":      (*session).openTree,
	"previous-window": func(s *session) { s.stepWindow(-1) },
	"next-window":     func(s *session) { s.stepWindow(1) },
	"close-window":    func(s *session) { s.askCloseWindow(s.winID) },
	"move-tab":        (*session).startMoveTab,
	"new-tab":         (*session).newTab,
	"split-right":     func(s *session) { s.splitWith("", false) },
	"split-below":     func(s *session) { s.splitWith("", true) },
	"pane-up":         func(s *session) { s.movePane(dirUp) },
	"pane-down":       func(s *session) { s.movePane(dirDown) },
	"pane-left":       func(s *session) { s.movePane(dirLeft) },
	"pane-right":      func(s *session) { s.movePane(dirRight) },
	"next-pane":       (*session).nextPane,
	"swap-pane-up":    func(s *session) { s.swapPane(-1) },
	"swap-pane-down":  func(s *session) { s.swapPane(1) },
	"resize-up":       func(s *session) { s.resizePane(dirUp) },
	"resize-down":     func(s *session) { s.resizePane(dirDown) },
	"resize-left":     func(s *session) { s.resizePane(dirLeft) },
	"resize-right":    func(s *session) { s.resizePane(dirRight) },
	"zoom":            (*session).toggleZoom,
	"break-pane":      (*session).breakPane,
	"close-tab":       (*session).askClose,
	"rename-tab":      (*session).startRename,
	"rename-session":  (*session).startRenameWindow,
	"copy-mode":       func(s *session) { s.enterCopy(false) },
	"paste":           (*session).paste,
	"leave-copy-mode": (*session).leaveCopy,
	"sheet": func(s *session) {
		if s.mode != modeSheet {
			s.openSheet()
		}
	},
	"detach": func(s *session) {
		s.exit = &Exit{Message: "detached from window " + s.windowLabel(), OK: true}
	},
	"list-keys":    func(s *session) { s.mode, s.needFull, s.helpTop = modeHelp, true, 0 },
	"grants":       (*session).openGrants,
	"accept-focus": (*session).acceptFocus,
	// tmux's habits (cmdline.go, buffers.go).
	"command-prompt":    (*session).startCommandPrompt,
	"last-tab":          (*session).lastTab,
	"last-pane":         (*session).lastPane,    // extras.go
	"last-session":      (*session).lastSession, // extras.go
	"copy-mode-page-up": (*session).copyPageUp,
	"choose-buffer":     (*session).chooseBuffer,
	"send-keys":         func(s *session) { s.setMessage("send-keys needs keys: send-keys 'make test' Enter") },
}

// focusedIndex is the shown tab's index in the window's tabs, or -1.
func (s *session) focusedIndex() int {
	return slices.IndexFunc(s.tabs, func(t workspace.Terminal) bool { return t.ID == s.tabID })
}

// newTab opens a tab in the shown tab's directory and group and shows
// it: a new entry at the end of the status line, as tmux's new-window.
func (s *session) newTab() {
	spec := workspace.CreateSpec{WindowID: s.winID, Cols: s.cols, Rows: s.rows - 1}
	if i := s.focusedIndex(); i >= 0 {
		spec.Directory, spec.GroupID = s.tabs[i].Directory, s.tabs[i].GroupID
	}
	t, err := s.ws.Create(spec)
	if err != nil {
		s.setMessage("new tab: " + err.Error())
		return
	}
	s.focus(t.ID)
}

// askClose asks y/n before closing the shown tab.
func (s *session) askClose() {
	if s.tabID != "" {
		s.leaveCopy()
		s.mode, s.confirmID, s.confirmWin = modeConfirm, s.tabID, ""
	}
}

// startRename opens the prompt for the shown tab's new name.
func (s *session) startRename() {
	name := ""
	if i := s.focusedIndex(); i >= 0 {
		name = s.tabs[i].Name
	}
	s.startPrompt(promptRename, name)
}

// focus makes id the window's focused tab; every client of the window
// follows.
func (s *session) focus(id string) {
	if _, err := s.ws.Focus(id); err != nil {
		s.setMessage(err.Error())
		return
	}
	s.statusOld = true
	// Shown here at once: a client an agent's request switched alone
	// may already follow a window focused on id.
	s.diverged = ""
	if err := s.show(id); err != nil {
		s.setMessage(err.Error())
	}
}

// promptKind is what the status line prompt asks for.
type promptKind int

const (
	promptRename       promptKind = iota // the shown tab's new name
	promptTabNumber                      // a tab's number, for tabs past 9
	promptSearchDown                     // copy mode: search towards the end
	promptSearchUp                       // copy mode: search towards the start
	promptCommand                        // a command line (prefix :), cmdline.go
	promptMoveTab                        // the window the shown tab moves to (windows.go)
	promptRenameWindow                   // the window's new name (extras.go)
)

// startPrompt opens the status line prompt with text.
func (s *session) startPrompt(k promptKind, text string) {
	back := modeNormal
	if s.mode == modeCopy {
		back = modeCopy
	}
	s.mode, s.promptKind, s.promptBack, s.prompt = modePrompt, k, back, []rune(text)
}

// promptText is the prompt as the status line shows it.
func (s *session) promptText() string {
	var label string
	switch s.promptKind {
	case promptRename:
		label = "rename tab " + s.tabID + ": "
	case promptTabNumber:
		label = fmt.Sprintf("entry number (1-%d): ", len(s.entries))
	case promptSearchDown:
		label = "search down: "
	case promptSearchUp:
		label = "search up: "
	case promptCommand:
		label = ":"
	case promptMoveTab:
		label = s.moveTabPrompt()
	case promptRenameWindow:
		label = "rename window " + s.winID + ": "
	}
	return label + sanitize(string(s.prompt))
}

// promptDone applies the prompt's text (Enter).
func (s *session) promptDone() {
	text := strings.TrimSpace(string(s.prompt))
	s.mode = s.promptBack
	switch s.promptKind {
	case promptCommand:
		s.commandDone(text)
	case promptRename:
		s.rename(text)
	case promptTabNumber:
		n, err := strconv.Atoi(text)
		if err != nil {
			s.setMessage(fmt.Sprintf("tab number %q: type digits", text))
			return
		}
		s.focusNumber(n)
	case promptSearchDown, promptSearchUp:
		if text != "" { // an empty search repeats the last one
			s.copy.search = string(s.prompt)
		}
		s.copy.back = s.promptKind == promptSearchUp
		s.searchNext(false)
	case promptMoveTab:
		s.moveTab(text)
	case promptRenameWindow:
		s.renameWindow(text)
	}
}

// promptKeys edits the prompt and returns the bytes left over.
func (s *session) promptKeys(b []byte) []byte {
	for len(b) > 0 && s.mode == modePrompt {
		c := b[0]
		if c != '\t' {
			s.habit.complete = nil // Tab cycles only while pressed again
		}
		switch {
		case c == '\r' || c == '\n':
			s.promptDone()
			return b[1:]
		case c == 0x1b && len(b) == 1, c == 0x03, c == 0x07:
			s.mode = s.promptBack
			return b[1:]
		case c == 0x1b:
			// An arrow or such: the command prompt's history, else ignored.
			n := escLen(b)
			s.commandPromptKey(string(b[:n]))
			b = b[n:]
			continue
		case c == '\t' && s.commandPromptKey("\t"):
		case c == 0x7f || c == 0x08:
			if len(s.prompt) > 0 {
				s.prompt = s.prompt[:len(s.prompt)-1]
			}
		case c == 0x15:
			s.prompt = nil
		case c == s.o.Prefix:
			s.mode = s.promptBack
			s.prefixed = true
			return b[1:]
		case c < 0x20:
		default:
			r, n := utf8.DecodeRune(b)
			if r != utf8.RuneError && len(s.prompt) < 256 {
				s.prompt = append(s.prompt, r)
			}
			b = b[n:]
			continue
		}
		b = b[1:]
	}
	return b
}

// confirmKeys answers "close this tab? (y/n)": y closes, any other key
// keeps the tab.
func (s *session) confirmKeys(b []byte) []byte {
	s.mode = modeNormal
	if s.confirmWin != "" {
		s.confirmCloseWindow(b[0] == 'y' || b[0] == 'Y') // windows.go
		if b[0] == 0x1b {
			return b[escLen(b):]
		}
		return b[1:]
	}
	if b[0] == 'y' || b[0] == 'Y' {
		s.closeTab(s.confirmID)
		return b[1:]
	}
	s.setMessage("kept " + s.tabLabel(s.confirmID))
	if b[0] == 0x1b {
		return b[escLen(b):]
	}
	return b[1:]
}

// escLen is the length of the escape sequence at the start of b.
func escLen(b []byte) int {
	if len(b) < 2 {
		return len(b)
	}
	switch b[1] {
	case '[':
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				return i + 1
			}
		}
		return len(b)
	case 'O':
		return min(3, len(b))
	}
	return 2
}
