// Package keys is the one key parser of Phantom: it turns what `phantom
// send` and the send_keys tool take — a list of key names (Enter, C-c, Up,
// F5, …, as tmux spells them) and text — into the bytes a terminal's
// keyboard sends, and spells such bytes back for the human (Spell), on
// permission sheets and in the audit log.
//
// Each argument is a key name, or text typed as it is when it is not one;
// nothing is put between arguments, so ["make test", "Enter"] types the
// line and presses Enter. An argument shaped like a key name that names
// no key (C-Foo, F13, Ctrl-C) is an error naming it, never typed as text
// by surprise: to type such text, pass literal.
package keys

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxBytes bounds what one call types: the bytes all its keys make.
const MaxBytes = 64 << 10

// Names lists the key names for messages and help texts.
const Names = "Enter Tab BTab Escape Space BSpace Up Down Left Right Home End PageUp (PPage, PgUp) " +
	"PageDown (NPage, PgDn) Insert (IC) Delete (DC) F1..F12; C-x (Ctrl), M-x (Alt), S-x (Shift), " +
	"combined as C-M-x; ^x is C-x"

// Parse turns keys into the bytes to type. With literal every argument is
// text, none a key name. An argument that is not valid UTF-8, a key name
// that names no key, nothing to type at all, or more than MaxBytes is an
// error saying which argument and why.
func Parse(keys []string, literal bool) ([]byte, error) {
	var out []byte
	for i, a := range keys {
		if len(out) > MaxBytes {
			return nil, fmt.Errorf("the keys make more than %d bytes (before key %d): send them in several calls", MaxBytes, i+1)
		}
		if !literal {
			if k, ok := Named(a); ok {
				out = append(out, k...)
				continue
			}
			if why := badName(a); why != "" {
				return nil, fmt.Errorf("key %d, %q, is not a key name: %s. Key names are %s. To type it as text, "+
					"pass literal (every key is then text), or split it so that no part looks like a key name", i+1, a, why, Names)
			}
		}
		if !utf8.ValidString(a) {
			return nil, fmt.Errorf("key %d, %q, is not valid UTF-8 text", i+1, a)
		}
		out = append(out, a...)
	}
	if len(out) > MaxBytes {
		return nil, fmt.Errorf("the keys make more than %d bytes: send them in several calls", MaxBytes)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to type: give text or key names, such as [\"ls\", \"Enter\"] or [\"C-c\"]")
	}
	return out, nil
}

// Modifier bits, as xterm numbers them in CSI 1;<1+bits>X.
const (
	modShift = 1
	modMeta  = 2
	modCtrl  = 4
)

// namedKeys are the keys without a character, by lower-case name. A key
// of the cursor kind ("\x1b[A", final byte A) takes modifiers as
// "\x1b[1;5A", one of the tilde kind ("\x1b[3~") as "\x1b[3;5~".
var namedKeys = map[string]string{
	"enter": "\r", "tab": "\t", "btab": "\x1b[Z", "escape": "\x1b", "space": " ", "bspace": "\x7f",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D", "home": "\x1b[H", "end": "\x1b[F",
	"insert": "\x1b[2~", "ic": "\x1b[2~", "delete": "\x1b[3~", "dc": "\x1b[3~",
	"pageup": "\x1b[5~", "ppage": "\x1b[5~", "pgup": "\x1b[5~", "pagedown": "\x1b[6~", "npage": "\x1b[6~", "pgdn": "\x1b[6~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// Named returns what key name s types; ok is false when s is not a key
// name (Parse then types it as text, or refuses it when it looks like
// one: see badName).
func Named(s string) ([]byte, bool) {
	mods, base := modifiers(s)
	if seq, ok := namedKeys[strings.ToLower(base)]; ok {
		return withMods(seq, mods)
	}
	r, size := utf8.DecodeRuneInString(base)
	if size != len(base) || r == utf8.RuneError {
		return nil, false
	}
	if mods == 0 {
		return []byte(base), true
	}
	b := base
	if mods&modShift != 0 {
		b = strings.ToUpper(b)
	}
	if mods&modCtrl != 0 {
		c, ok := ctrlOf(r)
		if !ok {
			return nil, false
		}
		b = string(c)
	}
	if mods&modMeta != 0 {
		b = "\x1b" + b
	}
	return []byte(b), true
}

// modifiers strips s's modifier prefixes (C-, M-, S-, any case, and ^ of
// a two-character ^x) and returns their bits and what follows.
func modifiers(s string) (mods int, base string) {
	base = s
	for {
		switch {
		case len(base) > 2 && base[1] == '-' && strings.ContainsRune("CcMmSs", rune(base[0])):
			mods |= map[byte]int{'c': modCtrl, 'm': modMeta, 's': modShift}[base[0]|0x20]
			base = base[2:]
			continue
		case len(base) == 2 && base[0] == '^':
			mods |= modCtrl
			base = base[1:]
			continue
		}
		return mods, base
	}
}

var (
	// fKey is a function key's shape: F and a number.
	fKey = regexp.MustCompile(`^[Ff][0-9]{1,3}$`)
	// wordMods are modifiers spelled as words, as people write them
	// (Ctrl-C, alt+x), which tmux does not know.
	wordMods = regexp.MustCompile(`(?i)^(ctrl|control|alt|meta|option|shift|cmd|super)[-+](\S+)$`)
)

// badName says why s, which names no key, looks too much like a key name
// to be typed as text: modifiers before something that is no key, a
// function key past F12, a modifier spelled as a word. "" when s is text.
func badName(s string) string {
	if strings.ContainsAny(s, " \t\r\n") || !utf8.ValidString(s) {
		return ""
	}
	if m := wordMods.FindStringSubmatch(s); m != nil {
		short := map[string]string{"ctrl": "C-", "control": "C-", "alt": "M-", "meta": "M-", "option": "M-", "shift": "S-"}[strings.ToLower(m[1])]
		if short == "" {
			return "there is no " + m[1] + " key in a terminal"
		}
		return "modifiers are written " + short + " (try " + short + m[2] + ")"
	}
	if fKey.MatchString(s) {
		return "function keys are F1 to F12"
	}
	mods, base := modifiers(s)
	if mods == 0 || s[0] == '^' {
		return ""
	}
	if base == "" || base == s {
		return ""
	}
	return fmt.Sprintf("after the modifiers comes one character or a key name, and %q is neither (or takes no such modifier)", base)
}

// ctrlOf is the control character Ctrl-r types.
func ctrlOf(r rune) (byte, bool) {
	switch {
	case r >= 'a' && r <= 'z':
		return byte(r - 'a' + 1), true
	case r >= '@' && r <= '_': // A-Z [ \ ] ^ _ and @
		return byte(r - '@'), true
	case r == ' ' || r == '2':
		return 0, true
	case r == '?':
		return 0x7f, true
	}
	return 0, false
}

// withMods is a named key's sequence with modifiers.
func withMods(seq string, mods int) ([]byte, bool) {
	if mods == 0 {
		return []byte(seq), true
	}
	switch {
	case strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "~"): // \x1b[3~ → \x1b[3;5~
		return []byte(fmt.Sprintf("%s;%d~", seq[:len(seq)-1], 1+mods)), true
	case len(seq) == 3 && (seq[:2] == "\x1b[" || seq[:2] == "\x1bO") && seq != "\x1b[Z": // cursor keys, F1-F4
		return []byte(fmt.Sprintf("\x1b[1;%d%c", 1+mods, seq[2])), true
	case seq == "\t" && mods == modShift:
		return []byte("\x1b[Z"), true
	case seq == " " && mods == modCtrl:
		return []byte{0}, true
	case mods == modMeta: // Alt: Escape first, as terminals send it
		return []byte("\x1b" + seq), true
	}
	return nil, false
}
