package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// Whether the outer terminal takes clipboard writes (OSC 52) is asked of
// the terminal when attach starts: XTGETTCAP for the "Ms" capability
// (xterm, kitty, foot, WezTerm, tmux and others answer it), then the
// primary device attributes (DA1), which every terminal answers, with
// attribute 52 where the clipboard is offered. Terminals answer in order,
// so the DA1 reply ends the probe. The first frame does not wait for it:
// the replies come in with the keys, which the key reader takes them out
// of, so they never reach the tab. PHANTOM_CLIPBOARD=on or off decides
// without the probe's answer.
//
// The same probe asks for "RGB" and "Tc", tmux's names for 24-bit colour
// (foot, WezTerm, kitty and others answer): a terminal reached over ssh,
// which does not pass COLORTERM on, can say it that way. One name per
// query, since a terminal may stop at the first name it lacks. And it asks
// the terminal's name and version (XTVERSION, CSI > q, answered DCS > |
// name version ST), from which attach knows which desktop notification
// escape it takes (attach_notify.go).

// probeQuery is what attach asks the terminal: XTGETTCAP "Ms", "RGB" and
// "Tc", XTVERSION, then DA1.
const probeQuery = "\x1bP+q4d73\x1b\\" + "\x1bP+q524742\x1b\\" + "\x1bP+q5463\x1b\\" + "\x1b[>q" + "\x1b[c"

// probeTimeout is how long attach waits for the terminal's answer. A
// terminal that does not answer DA1 at all is rare (and then is taken
// not to announce the clipboard).
const probeTimeout = 2 * time.Second

// clipboardProbe is the probe's state, shared by the key reader (which
// finds the replies) and the session loops (which tell terminald).
type clipboardProbe struct {
	mu       sync.Mutex
	state    terminalv1.AttachClipboard_State
	timedOut bool          // state is the timeout's guess: a late reply still counts
	ms       bool          // the terminal announced "Ms"
	rgb      chan struct{} // closed when the terminal announces "RGB" or "Tc"
	rgbSeen  bool
	done     bool          // the DA1 answer came, or the timeout
	version  string        // the XTVERSION answer; "" when none came
	notify   notifyForm    // the notification escape the terminal takes (attach_notify.go)
	env      notifyEnv     // what the environment says of the terminal
	pending  []byte        // the start of a reply cut by a read
	changed  chan struct{} // signalled when state changes
}

// newClipboardProbe starts knowing the answer when PHANTOM_CLIPBOARD says
// it, else asks the terminal (writing probeQuery to out).
func newClipboardProbe(out *os.File) *clipboardProbe {
	p := &clipboardProbe{changed: make(chan struct{}, 1), rgb: make(chan struct{}), env: notifyEnvFromOS()}
	switch v := strings.ToLower(os.Getenv("PHANTOM_CLIPBOARD")); {
	case envOff("PHANTOM_CLIPBOARD"):
		p.set(terminalv1.AttachClipboard_STATE_OFF, false)
	case v == "on" || v == "1" || v == "yes" || v == "true":
		p.set(terminalv1.AttachClipboard_STATE_WRITTEN, false)
	}
	out.WriteString(probeQuery)
	time.AfterFunc(probeTimeout, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.finishLocked()
		p.setLocked(terminalv1.AttachClipboard_STATE_NOT_ANNOUNCED, true)
	})
	return p
}

// set records where copies go: the first answer counts, except that a
// reply the terminal was late with replaces the timeout's guess.
func (p *clipboardProbe) set(st terminalv1.AttachClipboard_State, byTimeout bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(st, byTimeout)
}

func (p *clipboardProbe) setLocked(st terminalv1.AttachClipboard_State, byTimeout bool) {
	if p.state != terminalv1.AttachClipboard_STATE_UNSPECIFIED && (byTimeout || !p.timedOut) {
		return
	}
	p.state, p.timedOut = st, byTimeout
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// State is where copies go; STATE_UNSPECIFIED while the probe runs.
func (p *clipboardProbe) State() terminalv1.AttachClipboard_State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Changed is signalled when State changes.
func (p *clipboardProbe) Changed() <-chan struct{} { return p.changed }

// TrueColor is closed when the terminal announces 24-bit colour; a late
// answer counts too.
func (p *clipboardProbe) TrueColor() <-chan struct{} { return p.rgb }

// writes reports whether copies go to the terminal's clipboard.
func (p *clipboardProbe) writes() bool { return p.State() == terminalv1.AttachClipboard_STATE_WRITTEN }

// keys takes the terminal's replies to the probe out of b, what the key
// reader read, and returns the keys that remain. While the probe runs
// (until the terminal's DA1 answer, normally milliseconds), what may be a
// reply cut short at the end of b is kept for the next read, even a lone
// ESC; afterwards nothing is held back.
func (p *clipboardProbe) keys(b []byte) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) > 0 {
		b = append(p.pending, b...)
		p.pending = nil
	}
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	// Only while the clipboard's answer is awaited is a cut reply held
	// back: with PHANTOM_CLIPBOARD set no key waits for the probe (the
	// XTVERSION answer, asked all the same, comes whole in practice).
	probing := p.state == terminalv1.AttachClipboard_STATE_UNSPECIFIED
	out := b[:0:0]
	for i := 0; i < len(b); {
		if b[i] != 0x1b {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := parseTermReply(b[i:])
		switch {
		case n > 0:
			p.reply(r)
			i += n
		case n < 0 && probing:
			p.pending = append([]byte(nil), b[i:]...)
			return out
		default:
			out = append(out, b[i])
			i++
		}
	}
	return out
}

// reply applies one of the terminal's replies.
func (p *clipboardProbe) reply(r termReply) {
	switch r.kind {
	case replyCap:
		p.ms = p.ms || r.ms
		if r.rgb && !p.rgbSeen && p.rgb != nil {
			p.rgbSeen = true
			close(p.rgb)
		}
	case replyVersion:
		p.version = r.version
	case replyDA1:
		p.finishLocked()
		st := terminalv1.AttachClipboard_STATE_NOT_ANNOUNCED
		if p.ms || r.clipboard {
			st = terminalv1.AttachClipboard_STATE_WRITTEN
		}
		p.setLocked(st, false)
	}
}

// finishLocked ends the probe (the DA1 answer, or the timeout) and picks
// the notification escape from what the terminal and the environment
// said; a later XTVERSION answer does not change it.
func (p *clipboardProbe) finishLocked() {
	if p.done {
		return
	}
	p.done = true
	p.notify = pickNotify(p.version, p.env)
}

// Notify is the notification escape the terminal takes; notifyNone while
// the probe runs.
func (p *clipboardProbe) Notify() notifyForm {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notify
}

// termReply is a terminal's answer to the probe.
type termReply struct {
	kind      int    // replyDA1, replyCap or replyVersion
	clipboard bool   // DA1: attribute 52 is among the attributes
	ms        bool   // XTGETTCAP: the terminal has the "Ms" capability
	rgb       bool   // XTGETTCAP: the terminal has "RGB" or "Tc" (24-bit colour)
	version   string // XTVERSION: the terminal's name and version
}

const (
	replyDA1 = iota + 1
	replyCap
	replyVersion
)

// maxReply bounds a reply: longer input is not one.
const maxReply = 512

// parseTermReply parses the reply b starts with: a DA1 report
// (ESC [ ? Ps ; … c), an XTGETTCAP answer (ESC P 1 + r 4d73 = … ST for
// "Ms", 524742 for "RGB", 5463 for "Tc", with or without "= value"; ESC P
// 0 + r … ST when the terminal lacks it; ST is ESC \ or BEL) or an
// XTVERSION answer (ESC P > | text ST). It returns the reply and its length; 0 when b does not
// start with one, -1 when b is the start of one cut short.
func parseTermReply(b []byte) (termReply, int) {
	switch {
	case bytes.HasPrefix(b, []byte("\x1b[?")):
		for i := 3; i < len(b) && i < maxReply; i++ {
			switch c := b[i]; {
			case c >= '0' && c <= '9' || c == ';':
			case c == 'c':
				r := termReply{kind: replyDA1}
				for _, a := range strings.Split(string(b[3:i]), ";") {
					if n, err := strconv.Atoi(a); err == nil && n == 52 {
						r.clipboard = true
					}
				}
				return r, i + 1
			default:
				return termReply{}, 0
			}
		}
	case bytes.HasPrefix(b, []byte("\x1bP")):
		if !bytes.HasPrefix([]byte("\x1bP1+r"), b[:min(len(b), 5)]) && !bytes.HasPrefix([]byte("\x1bP0+r"), b[:min(len(b), 5)]) &&
			!bytes.HasPrefix([]byte("\x1bP>|"), b[:min(len(b), 4)]) {
			return termReply{}, 0
		}
		for i := 2; i < len(b) && i < maxReply; i++ {
			end := 0
			switch {
			case b[i] == '\a':
				end = i + 1
			case b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\':
				end = i + 2
			case b[i] == 0x1b && i+1 == len(b):
				return termReply{}, -1
			case b[i] == 0x1b || b[i] < 0x20:
				return termReply{}, 0 // not a string a terminal would send
			}
			if end == 0 {
				continue
			}
			body := string(b[2:i])
			if v, ok := strings.CutPrefix(body, ">|"); ok {
				return termReply{kind: replyVersion, version: v}, end
			}
			r := termReply{kind: replyCap}
			if rest, ok := strings.CutPrefix(body, "1+r"); ok {
				name, _, _ := strings.Cut(rest, "=")
				r.ms = strings.EqualFold(name, "4d73")
				r.rgb = strings.EqualFold(name, "524742") || strings.EqualFold(name, "5463")
			}
			return r, end
		}
	default:
		if len(b) == 1 || len(b) == 2 && (b[1] == '[' || b[1] == 'P') {
			// ESC, ESC [ or ESC P: too short to tell.
			return termReply{}, -1
		}
		return termReply{}, 0
	}
	if len(b) >= maxReply {
		return termReply{}, 0
	}
	return termReply{}, -1
}
