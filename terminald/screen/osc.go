package screen

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Colours reported for OSC 10/11 queries.
const (
	replyFg = "rgb:e5e5/e5e5/e5e5"
	replyBg = "rgb:0000/0000/0000"
)

// oscDispatch acts on a complete OSC payload. bel says whether it was
// terminated by BEL (replies use the same terminator).
func (s *Screen) oscDispatch(bel bool) {
	ps := &s.p
	if ps.overflow {
		return
	}
	data := ps.str
	num, rest, _ := bytes.Cut(data, []byte{';'})
	cmd, err := strconv.Atoi(string(num))
	if err != nil {
		return
	}
	switch cmd {
	case 0, 2:
		s.title = sanitize(rest)
		s.event(Event{Kind: EventTitle, Text: s.title})
	case 7:
		s.cwd = parseCwd(rest)
		s.event(Event{Kind: EventCwd, Text: s.cwd})
	case 10, 11:
		// "10;?" or "10;?;?" (11 after 10).
		for _, q := range bytes.Split(rest, []byte{';'}) {
			if string(q) != "?" || cmd > 11 {
				return
			}
			val := replyFg
			if cmd == 11 {
				val = replyBg
			}
			term := "\x1b\\"
			if bel {
				term = "\a"
			}
			s.sendReply([]byte("\x1b]" + strconv.Itoa(cmd) + ";" + val + term))
			cmd++
		}
	case 133:
		s.osc133(rest)
	}
}

// osc133 reports a FinalTerm/iTerm2 semantic prompt mark.
func (s *Screen) osc133(b []byte) {
	if len(b) == 0 {
		return
	}
	var e Event
	switch b[0] {
	case 'A':
		e.Kind = EventPromptStart
	case 'B':
		e.Kind = EventCommandStart
	case 'C':
		e.Kind = EventCommandExecuted
	case 'D':
		e.Kind = EventCommandFinished
	case 'E':
		e.Kind = EventCommandLine
	default:
		return
	}
	rest := b[1:]
	if len(rest) > 0 && rest[0] == ';' {
		rest = rest[1:]
	}
	e.Text = sanitize(rest)
	if e.Kind == EventCommandFinished && len(rest) > 0 {
		first, _, _ := bytes.Cut(rest, []byte{';'})
		if n, err := strconv.Atoi(string(first)); err == nil {
			e.ExitCode, e.HasExit = n, true
		}
	}
	s.event(e)
}

// parseCwd extracts the percent-decoded path of file://host/path.
func parseCwd(b []byte) string {
	str := string(b)
	for _, scheme := range []string{"file://", "kitty-shell-cwd://"} {
		if len(str) >= len(scheme) && str[:len(scheme)] == scheme {
			str = str[len(scheme):]
			if i := indexByte(str, '/'); i >= 0 {
				str = str[i:]
			} else {
				str = "/"
			}
			break
		}
	}
	return sanitize([]byte(percentDecode(str)))
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func percentDecode(s string) string {
	if indexByte(s, '%') < 0 {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// sanitize returns b as valid UTF-8 without control characters.
func sanitize(b []byte) string {
	clean := utf8.Valid(b)
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return string(b)
	}
	out := make([]rune, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			continue
		}
		out = append(out, r)
	}
	return string(out)
}
