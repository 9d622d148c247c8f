package main

// phantom send: tmux's send-keys. Each argument is a key name (Enter,
// C-c, Up, …) or, when it is not one, text typed as it is; nothing is
// put between arguments, so `phantom send t1 "make test" Enter` types the
// line and presses Enter.

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

func sendCmd() *cobra.Command {
	var literal bool
	cmd := &cobra.Command{
		Use:   "send TAB KEYS...",
		Short: "Type text and keys into a tab (like tmux send-keys)",
		Long: `send types into TAB what the human's keyboard would: each argument is a
key name, or text typed as it is when it is not one. Nothing is added
between arguments. Key names, as tmux spells them:
  Enter Tab BTab Escape Space BSpace Up Down Left Right Home End
  PageUp (PPage) PageDown (NPage) Insert (IC) Delete (DC) F1..F12
  C-x (Ctrl), M-x (Alt), S-x (Shift), combined as C-M-x; ^x is C-x.
--literal (-l) types every argument as text. Unlike run, send types into
a busy tab too (C-c stops what runs). From inside a Phantom tab it needs
the human's permission, as run_command does.`,
		Example: `  phantom send 2 "make test" Enter
  phantom send main:build C-c
  phantom send -l t3 Enter        # types the word Enter`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			keys, err := parseKeys(args[1:], literal)
			if err != nil {
				return err
			}
			return withTargets(args[0], func(ctx context.Context, tc terminalv1.TerminalServiceClient, r *targets, tab string) error {
				defer waitNotice(func() string { return "typing into tab " + r.Describe(tab) })()
				_, err := tc.SendKeys(ctx, &terminalv1.SendKeysRequest{TerminalId: tab, Keys: keys})
				return err
			})
		},
	}
	cmd.Flags().BoolVarP(&literal, "literal", "l", false, "type every argument as text, none as a key name")
	return cmd
}

// parseKeys turns send's arguments into the bytes to type.
func parseKeys(args []string, literal bool) ([]byte, error) {
	var out []byte
	for _, a := range args {
		if !literal {
			if k, ok := keyBytes(a); ok {
				out = append(out, k...)
				continue
			}
		}
		if !utf8.ValidString(a) {
			return nil, usageError(fmt.Sprintf("%q is not valid UTF-8 text", a), "")
		}
		out = append(out, a...)
	}
	if len(out) == 0 {
		return nil, usageError("nothing to type", "give text or key names, e.g. phantom send TAB \"ls\" Enter")
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

// keyBytes returns what key name s types; ok is false when s is not a
// key name (send then types it as text).
func keyBytes(s string) ([]byte, bool) {
	mods, base := 0, s
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
		break
	}
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
