package workspace

import (
	"time"

	"github.com/phantom-dev/phantom/terminald/pty"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// Following what was typed into a tab since the last Enter.
//
// run_command types only into an empty command line (prompt.go): a line
// the human half typed must be neither joined nor thrown away. The screen
// shows the line only once the shell has read and echoed the keys, so
// every key written to a tab — from attach, `phantom send`, send_keys,
// anything but run_command and terminal-query answers — is followed here
// as it is written, before the program could read it. What cannot be
// followed exactly (arrows, Tab completion, history recall, Ctrl-U, a
// paste) makes the line unknown until the next Enter: unsure means not
// empty.

// keysWhy says why lineKeys cannot tell what is on the line.
type keysWhy int

// Reasons the line is unknown.
const (
	whyNone     keysWhy = iota
	whyKeys             // keys that edit the line in ways not followed here
	whyPaste            // a bracketed paste (it may hold line breaks)
	whyRestored         // terminald restarted since the last Enter
)

// pasteEnd ends a bracketed paste.
const pasteEnd = "\x1b[201~"

// lineKeys follows the keys typed into a tab since the last Enter. The
// zero value is an empty line.
type lineKeys struct {
	// chars counts the characters typed since the last Enter, less
	// those erased with Backspace, while every key was plain text.
	chars int
	// unknown is why the line cannot be told (whyNone: it can).
	unknown keysWhy
	// nonASCII: a character of several bytes was typed, which a
	// Backspace may not erase whole.
	nonASCII bool
	// shell: some of the keys went to the shell's line editor, or
	// waited for a line in the line discipline (canonical mode), rather
	// than to a full-screen program that reads keys one by one.
	shell bool
	// ended: the last key ended a line (Enter) or interrupted (Ctrl-C).
	// Until the tab settles, what read the line is not known: the shell
	// may be starting a program that will read whatever is typed next
	// (its C mark not rendered yet), or discarding its input on the
	// interrupt.
	ended bool
	// at is when the last key was typed; prompts how many prompts the
	// shell had shown by then (commandLog.prompts), and promptAt where
	// the last one ended (its B mark), if known.
	at         time.Time
	prompts    uint64
	promptAt   screen.Pos
	havePrompt bool

	// The scanner's state across writes.
	esc      int // escNone, escStart, escCSI, escSS3
	csi      []byte
	quote    bool // after Ctrl-V: the next byte is literal
	paste    bool // inside a bracketed paste
	pasteHit int  // bytes of pasteEnd matched so far

	// human: the human's keyboard (attach, the human's `phantom send`)
	// typed some of the keys on the line, which an agent's keys must
	// neither finish nor erase (typeAgentKeys).
	human bool
}

// Escape-sequence states of lineKeys.
const (
	escNone = iota
	escStart
	escCSI
	escSS3
)

// keyTarget says where keys go as they are written.
type keyTarget struct {
	// shell: the shell (its process group) has the terminal, or the
	// line discipline holds keys until a line ends (canonical mode), so
	// what is not entered stays for the shell's next prompt.
	shell bool
	// modes are the terminal's input modes.
	modes pty.Modes
}

// empty reports whether nothing typed since the last Enter is left and no
// line ended moments ago.
func (k *lineKeys) empty() bool {
	return k.lineEmpty() && !k.ended
}

// lineEmpty reports whether nothing typed since the last Enter is left.
func (k *lineKeys) lineEmpty() bool {
	return k.chars == 0 && k.unknown == whyNone && k.esc == escNone && !k.quote && !k.paste
}

// endLine records an Enter or an interrupt: the line went to whoever
// reads it, or was discarded.
func (k *lineKeys) endLine() {
	*k = lineKeys{ended: true}
}

// forget forgets the keys: they are gone from the line.
func (k *lineKeys) forget() {
	*k = lineKeys{}
}

// feed follows keys p written with target to.
func (k *lineKeys) feed(p []byte, to keyTarget) {
	for _, b := range p {
		k.key(b, to)
	}
}

// key follows one byte.
func (k *lineKeys) key(b byte, to keyTarget) {
	switch {
	case k.paste:
		k.pasted(b)
	case k.quote:
		k.quote = false
		k.other(whyKeys)
	case k.esc == escStart:
		switch b {
		case '[':
			k.esc, k.csi = escCSI, k.csi[:0]
		case 'O':
			k.esc = escSS3
		case 0x1b: // Escape, then another: Alt-Escape or a new sequence
			k.other(whyKeys)
		default: // Alt-key
			k.esc = escNone
			k.other(whyKeys)
		}
	case k.esc == escSS3:
		k.esc = escNone
		k.other(whyKeys)
	case k.esc == escCSI:
		switch {
		case b >= 0x20 && b <= 0x3f:
			k.csi = append(k.csi, b)
		case b >= 0x40 && b <= 0x7e:
			k.esc = escNone
			if b == '~' && string(k.csi) == "200" {
				k.paste, k.pasteHit = true, 0
				k.other(whyPaste)
				return
			}
			k.other(whyKeys)
		default: // not a sequence after all
			k.esc = escNone
			k.other(whyKeys)
			k.key(b, to)
			return
		}
	default:
		k.plain(b, to)
		return
	}
	if to.shell {
		k.shell = true
	}
}

// plain follows a byte outside any sequence.
func (k *lineKeys) plain(b byte, to keyTarget) {
	m := to.modes
	switch {
	case b == '\n' || b == '\r' && (!m.Canonical || m.CRIsNewline):
		// Enter: the line went to whoever reads it.
		k.endLine()
		return
	case m.Signals && m.Intr != 0 && b == m.Intr:
		// Ctrl-C: the line discipline discards the line being typed and
		// interrupts; shells discard their line on it.
		k.endLine()
		return
	case b == 0x7f || b == 0x08:
		switch {
		case k.unknown != whyNone || k.nonASCII:
			k.other(whyKeys)
		case k.chars > 0:
			k.chars--
		}
	case b == 0x1b:
		k.esc = escStart
	case b == 0x16: // Ctrl-V: quote the next key
		k.quote = true
		k.other(whyKeys)
	case b < 0x20:
		k.other(whyKeys)
	case b < 0x80:
		k.chars++
	case b >= 0xc0: // the first byte of a character of several
		k.chars++
		k.nonASCII = true
	default: // a continuation byte
		k.nonASCII = true
	}
	if to.shell {
		k.shell = true
	}
}

// pasted follows a byte inside a bracketed paste: text, Enter included,
// until pasteEnd.
func (k *lineKeys) pasted(b byte) {
	if b == pasteEnd[k.pasteHit] {
		k.pasteHit++
		if k.pasteHit == len(pasteEnd) {
			k.paste, k.pasteHit = false, 0
		}
		return
	}
	k.chars += k.pasteHit // what looked like the end was pasted text
	k.pasteHit = 0
	if b == pasteEnd[0] {
		k.pasteHit = 1
		return
	}
	k.chars++
}

// other records a key whose effect on the line is not followed.
func (k *lineKeys) other(why keysWhy) {
	if k.unknown == whyNone || why == whyPaste {
		k.unknown = why
	}
}
