package attach

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/terminald/workspace"
)

// DefaultPrefix is Ctrl-\ (0x1c), the key that starts a command.
const DefaultPrefix byte = 0x1c

// ParsePrefix reads a prefix key as config.json writes it: "C-\\",
// "C-a", "^B", or "" for DefaultPrefix.
func ParsePrefix(s string) (byte, error) {
	switch {
	case s == "":
		return DefaultPrefix, nil
	case len(s) == 3 && (strings.HasPrefix(s, "C-") || strings.HasPrefix(s, "c-")),
		len(s) == 2 && s[0] == '^':
		c := s[len(s)-1]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c < '@' || c > '_' {
			return 0, fmt.Errorf("prefix %q: Ctrl works with a letter or one of @[\\]^_", s)
		}
		return c - '@', nil
	case len(s) == 1 && s[0] < 0x80:
		return s[0], nil
	}
	return 0, fmt.Errorf("prefix %q: write a control key as \"C-a\" or \"^A\"", s)
}

// keys handles typed bytes according to the mode.
func (s *session) keys(b []byte) error {
	for len(b) > 0 && s.exit == nil {
		if s.prefixed {
			s.prefixed = false
			if err := s.command(b[0]); err != nil {
				return err
			}
			b = b[1:]
			continue
		}
		switch s.mode {
		case modeRename:
			b = s.renameKeys(b)
		case modeScroll:
			b = s.scrollKeys(b)
		case modeSheet:
			b = s.sheetKeys(b)
		default:
			i := bytes.IndexByte(b, s.o.Prefix)
			if i < 0 {
				return s.input(b)
			}
			if err := s.input(b[:i]); err != nil {
				return err
			}
			s.prefixed = true
			b = b[i+1:]
		}
	}
	return nil
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
	if err := s.ws.Input(s.tabID, b); err != nil {
		s.setMessage(err.Error())
	}
	return nil
}

// command runs the prefix command key k.
func (s *session) command(k byte) error {
	s.message = ""
	s.needFrame = true
	idx := slices.IndexFunc(s.tabs, func(t workspace.Terminal) bool { return t.ID == s.tabID })
	switch {
	case k == s.o.Prefix:
		if s.mode == modeNormal {
			return s.input([]byte{k})
		}
	case k == 'n' || k == 'p':
		if len(s.tabs) > 0 {
			step := 1
			if k == 'p' {
				step = len(s.tabs) - 1
			}
			s.focus(s.tabs[(max(idx, 0)+step)%len(s.tabs)].ID)
		}
	case k >= '1' && k <= '9':
		if n := int(k - '1'); n < len(s.tabs) {
			s.focus(s.tabs[n].ID)
		} else {
			s.setMessage(fmt.Sprintf("no tab %c", k))
		}
	case k == 'c':
		spec := workspace.CreateSpec{WindowID: s.winID, Cols: s.cols, Rows: s.rows - 1}
		if idx >= 0 {
			spec.Directory, spec.GroupID = s.tabs[idx].Directory, s.tabs[idx].GroupID
		}
		t, err := s.ws.Create(spec)
		if err != nil {
			s.setMessage("new tab: " + err.Error())
			return nil
		}
		s.focus(t.ID)
	case k == 'x':
		id := s.tabID
		// Closing waits for the tab's processes to hang up; the close
		// event then moves every client of the window to a neighbour.
		s.bg.Go(func() { _ = s.ws.Close(id) })
		s.setMessage("closing " + id)
	case k == ',':
		s.mode, s.prompt = modeRename, nil
		if idx >= 0 {
			s.prompt = []rune(s.tabs[idx].Name)
		}
	case k == 'd':
		s.exit = &Exit{Message: fmt.Sprintf("detached from window %s", s.winID), OK: true}
	case k == '[':
		if s.view != nil {
			_, total := s.view.History(0, 0)
			s.mode, s.scrollTop = modeScroll, max(total-(s.rows-1), 0)
			s.needFull = true
		}
	case k == ']' || k == 'q':
		s.leaveScroll()
	case k == 's':
		if s.mode != modeSheet {
			s.openSheet()
		}
	default:
		s.setMessage(fmt.Sprintf("prefix keys: n p 1-9 c x , d [ s (prefix twice sends it); not %q", k))
	}
	return nil
}

// focus makes id the window's focused tab; every client of the window
// follows.
func (s *session) focus(id string) {
	if _, err := s.ws.Focus(id); err != nil {
		s.setMessage(err.Error())
		return
	}
	s.statusOld = true
}

// renameKeys edits the rename prompt and returns the bytes left over.
func (s *session) renameKeys(b []byte) []byte {
	for len(b) > 0 {
		c := b[0]
		switch {
		case c == '\r' || c == '\n':
			name := strings.TrimSpace(string(s.prompt))
			s.mode = modeNormal
			if _, err := s.ws.Update(s.tabID, workspace.Update{Name: &name}); err != nil {
				s.setMessage("rename: " + err.Error())
			}
			s.statusOld = true
			return b[1:]
		case c == 0x1b && len(b) == 1, c == 0x03, c == 0x07:
			s.mode = modeNormal
			return b[1:]
		case c == 0x1b:
			b = b[escLen(b):] // an arrow or such: ignored
			continue
		case c == 0x7f || c == 0x08:
			if len(s.prompt) > 0 {
				s.prompt = s.prompt[:len(s.prompt)-1]
			}
		case c == 0x15:
			s.prompt = nil
		case c == s.o.Prefix:
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

// scrollKeys moves through the scrollback and returns the bytes left
// over.
func (s *session) scrollKeys(b []byte) []byte {
	page := max(s.rows-2, 1)
	for len(b) > 0 && s.mode == modeScroll {
		n := 1
		switch c := b[0]; {
		case c == 'q' || (c == 0x1b && len(b) == 1) || c == 0x03:
			s.leaveScroll()
		case c == 0x1b:
			n = escLen(b)
			switch string(b[:n]) {
			case "\x1b[5~":
				s.scrollBy(-page)
			case "\x1b[6~":
				s.scrollBy(page)
			case "\x1b[A", "\x1bOA":
				s.scrollBy(-1)
			case "\x1b[B", "\x1bOB":
				s.scrollBy(1)
			case "\x1b[H", "\x1bOH", "\x1b[1~":
				s.scrollBy(-1 << 30)
			case "\x1b[F", "\x1bOF", "\x1b[4~":
				s.scrollBy(1 << 30)
			}
		case c == 'k':
			s.scrollBy(-1)
		case c == 'j':
			s.scrollBy(1)
		case c == 'b' || c == 0x02:
			s.scrollBy(-page)
		case c == ' ' || c == 'f' || c == 0x06:
			s.scrollBy(page)
		case c == 'u' || c == 0x15:
			s.scrollBy(-page / 2)
		case c == 'd' || c == 0x04:
			s.scrollBy(page / 2)
		case c == 'g':
			s.scrollBy(-1 << 30)
		case c == 'G':
			s.scrollBy(1 << 30)
		case c == s.o.Prefix:
			s.prefixed = true
			return b[1:]
		}
		b = b[n:]
	}
	return b
}

// scrollBy moves the scrollback view by d lines (negative: back in time).
func (s *session) scrollBy(d int) {
	if s.view == nil {
		return
	}
	_, total := s.view.History(0, 0)
	s.scrollTop = min(max(s.scrollTop+d, 0), max(total-(s.rows-1), 0))
	s.needFrame = true
}

// leaveScroll returns from the scrollback to the live screen.
func (s *session) leaveScroll() {
	if s.mode == modeScroll {
		s.mode = modeNormal
		s.needFull = true
	}
}
