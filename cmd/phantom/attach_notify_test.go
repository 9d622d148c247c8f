package main

import (
	"bytes"
	"testing"
)

// TestPickNotify checks which notification escape each terminal gets:
// XTVERSION first, then TERM_PROGRAM, then TERM; PHANTOM_NOTIFY over all.
func TestPickNotify(t *testing.T) {
	tests := []struct {
		name    string
		version string
		env     notifyEnv
		want    notifyForm
	}{
		{"nothing known", "", notifyEnv{}, notifyNone},
		{"xterm answers", "XTerm(388)", notifyEnv{term: "xterm-256color"}, notifyNone},
		{"tmux answers, whatever the environment", "tmux 3.3a", notifyEnv{termProgram: "iTerm.app"}, notifyNone},
		{"WezTerm answers", "WezTerm 20240203-110809-5046fc22", notifyEnv{}, notifyOSC777},
		{"kitty answers", "kitty(0.32.2)", notifyEnv{}, notifyOSC9},
		{"foot answers", "foot(1.16.2)", notifyEnv{}, notifyOSC777},
		{"ghostty answers", "ghostty 1.1.0", notifyEnv{}, notifyOSC777},
		{"iTerm2 answers", "iTerm2 3.5.0", notifyEnv{}, notifyOSC9},
		{"an unknown terminal answers", "Contour 0.4", notifyEnv{termProgram: "WezTerm"}, notifyNone},
		{"TERM_PROGRAM iTerm", "", notifyEnv{termProgram: "iTerm.app"}, notifyOSC9},
		{"TERM_PROGRAM WezTerm", "", notifyEnv{termProgram: "WezTerm"}, notifyOSC777},
		{"TERM_PROGRAM tmux over TERM", "", notifyEnv{termProgram: "tmux", term: "xterm-kitty"}, notifyNone},
		{"TERM kitty", "", notifyEnv{term: "xterm-kitty"}, notifyOSC9},
		{"TERM rxvt-unicode", "", notifyEnv{term: "rxvt-unicode-256color"}, notifyOSC777},
		{"TERM xterm", "", notifyEnv{term: "xterm-256color"}, notifyNone},
		{"override osc9", "XTerm(388)", notifyEnv{override: "osc9"}, notifyOSC9},
		{"override osc777", "", notifyEnv{override: "OSC777"}, notifyOSC777},
		{"override off", "WezTerm 1", notifyEnv{override: "off"}, notifyNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickNotify(tt.version, tt.env); got != tt.want {
				t.Errorf("pickNotify(%q, %+v) = %v, want %v", tt.version, tt.env, got, tt.want)
			}
		})
	}
}

// TestRewriteNotify checks what reaches the terminal of each form.
func TestRewriteNotify(t *testing.T) {
	const n = "\x1b]777;notify;Phantom: claude waits for input;tab t2: api\a"
	tests := []struct {
		name, in string
		form     notifyForm
		want     string
	}{
		{"none: dropped", "a\a" + n + "b", notifyNone, "a\ab"},
		{"osc777: kept", "a" + n, notifyOSC777, "a" + n},
		{"osc9: title and body", "a" + n + "b", notifyOSC9, "a\x1b]9;Phantom: claude waits for input: tab t2: api\ab"},
		{"osc9: no body", "\x1b]777;notify;T;\a", notifyOSC9, "\x1b]9;T\a"},
		{"two", n + n, notifyNone, ""},
		{"spliced by a removal: dropped too", "\x1b]777;" + n + "notify;x\a", notifyNone, ""},
		{"cut short: dropped", "a\x1b]777;notify;T;b", notifyOSC9, "a"},
		{"other OSCs untouched", "\x1b]52;c;eA==\a", notifyNone, "\x1b]52;c;eA==\a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(rewriteNotify([]byte(tt.in), tt.form)); got != tt.want {
				t.Errorf("rewriteNotify(%q, %v) = %q, want %q", tt.in, tt.form, got, tt.want)
			}
		})
	}
}

// FuzzRewriteNotify: whatever the frame, no OSC 777 survives for a
// terminal that takes none or OSC 9, and nothing is invented.
func FuzzRewriteNotify(f *testing.F) {
	for _, s := range []string{"\x1b]777;notify;a;b\a", "x\x1b]777;notify;", "\x1b]777;notify;\x1b]777;notify;a\a", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		none := rewriteNotify(bytes.Clone(b), notifyNone)
		if bytes.Contains(none, osc777Start) {
			t.Fatalf("rewriteNotify(%q, none) = %q: an OSC 777 remains", b, none)
		}
		if nine := rewriteNotify(bytes.Clone(b), notifyOSC9); bytes.Contains(nine, osc777Start) {
			t.Fatalf("rewriteNotify(%q, osc9) = %q: an OSC 777 remains", b, nine)
		}
		if len(none) > len(b) {
			t.Fatalf("rewriteNotify(%q, none) = %q: longer than the frame", b, none)
		}
		if got := rewriteNotify(bytes.Clone(b), notifyOSC777); !bytes.Equal(got, b) {
			t.Fatalf("rewriteNotify(%q, osc777) changed the frame: %q", b, got)
		}
	})
}
