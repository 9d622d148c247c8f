package main

import (
	"bytes"
	"os"
	"strings"
)

// Desktop notification escapes. terminald sends a notification (a new
// permission sheet, an agent waiting or finished: config.json's
// attention) as OSC 777 (ESC ] 777 ; notify ; title ; body BEL), its text
// already made safe (terminald/attach/attention.go). attach passes it on
// in the form the outer terminal takes, and drops it for a terminal that
// announced neither: an unknown OSC is ignored by xterm, but another
// terminal might print it.
//
// Which terminal it is comes from its XTVERSION answer (the probe,
// attach_probe.go); when it gave none, from TERM_PROGRAM and TERM, which
// the terminal sets. PHANTOM_NOTIFY=osc9, osc777 or off decides instead.

// notifyForm is the notification escape a terminal takes.
type notifyForm int

const (
	notifyNone   notifyForm = iota // none announced: notifications are dropped
	notifyOSC9                     // ESC ] 9 ; text BEL (iTerm2, kitty, WezTerm, Ghostty, foot)
	notifyOSC777                   // ESC ] 777 ; notify ; title ; body BEL (rxvt, foot, Ghostty, WezTerm)
)

// notifyEnv is what the environment says of the terminal.
type notifyEnv struct {
	override    string // PHANTOM_NOTIFY
	termProgram string // TERM_PROGRAM
	term        string // TERM
}

func notifyEnvFromOS() notifyEnv {
	return notifyEnv{override: os.Getenv("PHANTOM_NOTIFY"), termProgram: os.Getenv("TERM_PROGRAM"), term: os.Getenv("TERM")}
}

// knownNotify maps a terminal's name (XTVERSION's first word, or
// TERM_PROGRAM, lower case) to the escape it takes. OSC 777 carries a
// title, so it is the choice where both work. A terminal not listed
// (xterm, tmux, screen, Alacritty, VS Code, Apple's Terminal, Konsole)
// gets none.
var knownNotify = map[string]notifyForm{
	"iterm2":    notifyOSC9,
	"iterm.app": notifyOSC9,
	"kitty":     notifyOSC9,
	"wezterm":   notifyOSC777,
	"ghostty":   notifyOSC777,
	"foot":      notifyOSC777,
	"urxvt":     notifyOSC777,
	"rxvt":      notifyOSC777,
}

// knownTerm maps a TERM value's start to the escape its terminal takes.
var knownTerm = []struct {
	prefix string
	form   notifyForm
}{
	{"xterm-kitty", notifyOSC9},
	{"xterm-ghostty", notifyOSC777},
	{"wezterm", notifyOSC777},
	{"foot", notifyOSC777},
	{"rxvt-unicode", notifyOSC777},
}

// pickNotify chooses the escape from the XTVERSION answer (e.g.
// "WezTerm 20240203-110809-5046fc22", "kitty(0.32.2)", "XTerm(388)",
// "tmux 3.3a"; "" when the terminal gave none) and the environment.
func pickNotify(version string, env notifyEnv) notifyForm {
	switch strings.ToLower(env.override) {
	case "osc9":
		return notifyOSC9
	case "osc777":
		return notifyOSC777
	case "off", "0", "no", "false", "none":
		return notifyNone
	}
	if version != "" {
		// A terminal that answered said what it is: the environment may
		// be another's (attach inside tmux inside iTerm2 has iTerm2's
		// TERM_PROGRAM only if tmux left it).
		name := strings.ToLower(version)
		if i := strings.IndexAny(name, " ("); i >= 0 {
			name = name[:i]
		}
		return knownNotify[name]
	}
	if f, ok := knownNotify[strings.ToLower(env.termProgram)]; ok {
		return f
	}
	if env.termProgram != "" {
		return notifyNone // a known program that takes none (tmux, vscode)
	}
	for _, k := range knownTerm {
		if strings.HasPrefix(env.term, k.prefix) {
			return k.form
		}
	}
	return notifyNone
}

// osc777Start starts the notification escape in terminald's frames.
var osc777Start = []byte("\x1b]777;notify;")

// rewriteNotify puts every notification escape of frame b in form f:
// dropped, kept, or made OSC 9 ("title: body"). terminald ends each with
// BEL and keeps BEL and ESC out of its text, so one ends at the next BEL.
// No OSC 777 is left for a terminal that does not take it, not even one
// that the removal of another would splice together.
func rewriteNotify(b []byte, f notifyForm) []byte {
	if f == notifyOSC777 {
		return b
	}
	for bytes.Contains(b, osc777Start) {
		b = rewriteOnce(b, f)
	}
	return b
}

// rewriteOnce is one pass of rewriteNotify; each pass shortens b.
func rewriteOnce(b []byte, f notifyForm) []byte {
	var out []byte
	for {
		i := bytes.Index(b, osc777Start)
		if i < 0 {
			return append(out, b...)
		}
		out = append(out, b[:i]...)
		rest := b[i+len(osc777Start):]
		j := bytes.IndexByte(rest, '\a')
		if j < 0 {
			return out // cut: never pass half an escape
		}
		if f == notifyOSC9 {
			title, body, _ := bytes.Cut(rest[:j], []byte(";"))
			out = append(out, "\x1b]9;"...)
			out = append(out, title...)
			if len(body) > 0 {
				out = append(append(out, ": "...), body...)
			}
			out = append(out, '\a')
		}
		b = rest[j+1:]
	}
}
