package workspace

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/terminald/pty"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// Terminal modes as shells and programs set them.
var (
	rawModes    = pty.Modes{Signals: true, Intr: 3}                                     // readline, zle, fish, less
	cookedModes = pty.Modes{Canonical: true, Signals: true, CRIsNewline: true, Intr: 3} // sh, a running command
)

// TestLineKeys: what typed keys leave on the line, written in one piece
// and split at every byte (keys arrive in any chunks).
func TestLineKeys(t *testing.T) {
	shell := keyTarget{shell: true, modes: rawModes}
	tests := []struct {
		name    string
		keys    string
		to      keyTarget
		empty   bool
		chars   int
		unknown keysWhy
	}{
		{"nothing", "", shell, true, 0, whyNone},
		{"half-typed", "rm -rf /tmp/scratch", shell, false, 19, whyNone},
		{"entered", "ls -l\r", shell, true, 0, whyNone},
		{"Ctrl-J enters too", "ls\n", shell, true, 0, whyNone},
		{"typed after Enter", "ls\rmake", shell, false, 4, whyNone},
		{"erased with Backspace", "ls\x7f\x7f", shell, true, 0, whyNone},
		{"erased with Ctrl-H", "ab\x08", shell, false, 1, whyNone},
		{"Backspace on an empty line", "\x7f\x7f", shell, true, 0, whyNone},
		{"Ctrl-C discards the line", "rm -rf x\x03", shell, true, 0, whyNone},
		{"Ctrl-C that does not interrupt", "rm\x03", keyTarget{shell: true, modes: pty.Modes{Intr: 3}}, false, 2, whyKeys},
		{"Up recalls history", "\x1b[A", shell, false, 0, whyKeys},
		{"Up, then Backspace", "\x1b[A\x7f", shell, false, 0, whyKeys},
		{"application-mode Up", "\x1bOA", shell, false, 0, whyKeys},
		{"Tab completes", "ech\t", shell, false, 3, whyKeys},
		{"Ctrl-U", "secret\x15", shell, false, 6, whyKeys},
		{"Ctrl-R searches", "\x12make", shell, false, 4, whyKeys},
		{"Alt-.", "\x1b.", shell, false, 0, whyKeys},
		{"a lone Escape", "\x1b", shell, false, 0, whyNone},
		{"Ctrl-V quotes Enter", "echo \x16\r", shell, false, 5, whyKeys},
		{"a character of several bytes, erased", "é\x7f", shell, false, 1, whyKeys},
		{"bracketed paste", "\x1b[200~one\rtwo\x1b[201~", shell, false, 7, whyPaste},
		{"bracketed paste, then Enter", "\x1b[200~ls\x1b[201~\r", shell, true, 0, whyNone},
		{"an unfinished paste", "\x1b[200~ls\r", shell, false, 3, whyPaste},
		{"a paste holding ESC", "\x1b[200~a\x1b[b\x1b[201~", shell, false, 4, whyPaste},
		{"canonical mode: CR is Enter", "make\r", keyTarget{shell: true, modes: cookedModes}, true, 0, whyNone},
		{"canonical mode without ICRNL: CR is a character", "make\r", keyTarget{shell: true, modes: pty.Modes{Canonical: true}}, false, 4, whyKeys},
		{"a broken sequence", "\x1b[1\x01x", shell, false, 1, whyKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for cut := 0; cut <= len(tt.keys); cut++ {
				var k lineKeys
				k.feed([]byte(tt.keys[:cut]), tt.to)
				k.feed([]byte(tt.keys[cut:]), tt.to)
				if k.lineEmpty() != tt.empty || k.chars != tt.chars || k.unknown != tt.unknown {
					t.Fatalf("split at %d: empty %v, %d chars, unknown %d; want %v, %d, %d",
						cut, k.lineEmpty(), k.chars, k.unknown, tt.empty, tt.chars, tt.unknown)
				}
				if ended := strings.ContainsAny(tt.keys, "\r\n\x03"); tt.empty && k.ended != ended {
					t.Fatalf("split at %d: ended %v, want %v", cut, k.ended, ended)
				}
				if !tt.empty && !k.shell {
					t.Fatalf("split at %d: keys typed into the shell not marked so", cut)
				}
			}
		})
	}
}

// TestLineKeysProgram: keys typed into a full-screen program are marked
// as the program's, unless some went to the shell since the last Enter.
func TestLineKeysProgram(t *testing.T) {
	program := keyTarget{modes: rawModes}
	var k lineKeys
	k.feed([]byte("jjq"), program)
	if k.empty() || k.shell {
		t.Fatalf("keys into less: empty %v, shell %v", k.empty(), k.shell)
	}
	k.feed([]byte("x"), keyTarget{shell: true, modes: rawModes})
	if !k.shell {
		t.Fatal("a key into the shell's line after them is not marked")
	}
	k.feed([]byte("\r"), program)
	if !k.lineEmpty() || k.shell || !k.ended {
		t.Fatal("Enter did not end the line")
	}
}

// TestLineCheck: when run_command may type, from the keys followed and
// what the screen and the kernel show; refusals never quote the line.
func TestLineCheck(t *testing.T) {
	typed := func(s string, to keyTarget) lineKeys {
		var k lineKeys
		k.feed([]byte(s), to)
		k.at = time.Now()
		return k
	}
	shell := keyTarget{shell: true, modes: rawModes}
	program := keyTarget{modes: rawModes}
	secret := "hunter2-secret"
	// settled is a tab at its prompt after keys into a program: all quiet.
	settled := func(k lineKeys) lineView {
		return lineView{keys: k, marks: true, prompts: k.prompts + 1, promptAt: screen.Pos{Seq: 9}, quiet: time.Second}
	}
	// atPrompt: keys typed at the prompt that ends at promptAt.
	atPrompt := func(k lineKeys, at screen.Pos) lineKeys {
		k.promptAt, k.havePrompt = at, true
		return k
	}
	tests := []struct {
		name   string
		v      lineView
		ok     bool
		forget bool
		says   string
	}{
		{"an empty prompt", lineView{marks: true}, true, false, ""},
		{"no integration, nothing typed", lineView{}, true, false, ""},
		{"text typed, not echoed yet", lineView{keys: typed(secret, shell), marks: true}, false, false, "holds 14 characters typed there but not entered"},
		{"text typed, no integration", lineView{keys: typed(secret, shell)}, false, false, "holds 14 characters"},
		{"text on screen after the prompt", lineView{marks: true, shown: secret}, false, false, "shows 14 characters after its prompt"},
		{"a continuation line", lineView{marks: true, shown: "echo 'x\n> "}, false, false, "continued on the next line"},
		{"a right prompt after the cursor", lineView{marks: true, rest: "        10:42"}, true, false, ""},
		{"history recall", lineView{keys: typed("\x1b[A", shell), marks: true, shown: secret}, false, false, "arrows, Tab"},
		{"a paste", lineView{keys: typed("\x1b[200~"+secret+"\x1b[201~", shell), marks: true}, false, false, "pasted"},
		{"the prompt's place lost", lineView{marks: true, lost: true}, false, false, "cannot see its command line"},
		{"more text than a read", lineView{marks: true, more: true}, false, false, "more than a screenful"},
		{"keys into less, settled", settled(typed("jjq", program)), true, true, ""},
		{"keys into less, not quiet yet", func() lineView { v := settled(typed("q", program)); v.quiet = 0; return v }(), false, false, "try again in a moment"},
		{"keys into less, some unread", func() lineView { v := settled(typed("q", program)); v.unread = 3; return v }(), false, false, "try again in a moment"},
		{"keys into less, output unread", func() lineView { v := settled(typed("q", program)); v.unrendered = 9; return v }(), false, false, ""},
		{"keys into less, no prompt since", func() lineView { v := settled(typed("q", program)); v.prompts = v.keys.prompts; return v }(), false, false, ""},
		{"keys into less, text after the prompt", func() lineView { v := settled(typed("q", program)); v.rest = "abc"; return v }(), false, false, ""},
		{"keys into less, canonical", func() lineView { v := settled(typed("q", program)); v.canonical = true; return v }(), false, false, ""},
		{"keys into less, no integration", func() lineView { v := settled(typed("q", program)); v.marks = false; return v }(), false, false, ""},
		{"a line erased with Ctrl-U, settled", settled(atPrompt(typed(secret+"\x15", shell), screen.Pos{Seq: 9})), true, true, ""},
		{"a line erased with Ctrl-U, just now", func() lineView {
			v := settled(atPrompt(typed(secret+"\x15", shell), screen.Pos{Seq: 9}))
			v.quiet = 0
			return v
		}(), false, false, "try again in a moment"},
		{"text typed, echoed", func() lineView { v := settled(typed(secret, shell)); v.shown = secret; return v }(), false, false, "holds 14 characters"},
		{"text typed, a forged prompt after it", settled(typed(secret, shell)), false, false, "holds 14 characters"},
		{"a line erased with Ctrl-U, another prompt", settled(atPrompt(typed(secret+"\x15", shell), screen.Pos{Seq: 9, Off: 2})), false, false, "arrows, Tab"},
		{"text typed after the cursor (Home)", func() lineView { v := settled(typed(secret+"\x1b[H", shell)); v.rest = secret; return v }(), false, false, "arrows, Tab"},
		{"restarted, settled", settled(lineKeys{unknown: whyRestored}), true, true, ""},
		{"a line entered moments ago", lineView{keys: typed("vim\r", shell), marks: true}, false, false, "entered or interrupted there moments ago"},
		{"a line entered, not read yet", lineView{keys: typed("vim\r", shell), unread: 4, quiet: time.Second}, false, false, "moments ago"},
		{"a line entered, settled, no integration", lineView{keys: typed("vim\r", shell), quiet: time.Second}, true, true, ""},
		{"interrupted, settled", lineView{keys: typed("x\x03", shell), marks: true, quiet: time.Second}, true, true, ""},
		{"restarted, no integration", lineView{keys: lineKeys{unknown: whyRestored}}, false, false, "before terminald restarted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forget, err := tt.v.check("t1")
			if (err == nil) != tt.ok || forget != tt.forget {
				t.Fatalf("check = %v, %v; want ok %v, forget %v", forget, err, tt.ok, tt.forget)
			}
			if err == nil {
				return
			}
			msg := err.Error()
			if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(msg, tt.says) ||
				!strings.Contains(msg, "tab t1") || !strings.Contains(msg, "create_terminal") {
				t.Errorf("refusal %q: want FailedPrecondition naming the tab, saying %q and create_terminal", msg, tt.says)
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("the refusal quotes the line: %q", msg)
			}
		})
	}
}
