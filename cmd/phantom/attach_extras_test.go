package main

// More of tmux's default keys through a real outer terminal
// (outer_test.go): prefix ; the last pane, prefix { and } swap panes,
// prefix $ renames the window, prefix L the last window.

import (
	"fmt"
	"strings"
	"testing"
)

// focusedIn waits until the focused tab of window win is id.
func (in *instance) focusedIn(t *testing.T, win, id string) {
	t.Helper()
	eventually(t, id+" focused in "+win, func() (bool, string) {
		var got []string
		for _, tm := range in.list(t) {
			if tm.GetFocused() && tm.GetWindowId() == win {
				got = append(got, tm.GetId())
			}
		}
		return len(got) == 1 && got[0] == id, fmt.Sprint(got)
	})
}

// textColumn is the column of the first s on the screen, -1 if none.
func textColumn(screen, s string) int {
	for _, line := range strings.Split(screen, "\n") {
		if i := strings.Index(line, s); i >= 0 {
			return len([]rune(line[:i]))
		}
	}
	return -1
}

// TestAttachExtras: in window main, prefix % splits the editor's entry
// with a shell pane; prefix ; goes back to the editor's pane and again to
// the shell's; prefix { moves the shell's pane left of the editor's (the
// focus with it) and prefix } back; prefix $ renames the window on every
// status line and in `phantom window ls`; after prefix ) to window ci,
// prefix L goes back to the renamed window, and again to ci.
func TestAttachExtras(t *testing.T) {
	in := startPhantom(t)
	editor, _ := windowsWorld(t, in)
	main := in.windowOf(t, editor)
	o := in.attachOuter(t, 120, 30, nil, "editor")
	o.waitText("MAIN-TEXT")
	o.statusEnds("main")

	o.prefix("%")
	var shell string
	eventually(t, "a new pane's tab", func() (bool, string) {
		for _, tm := range in.list(t) {
			if tm.GetFocused() && tm.GetWindowId() == main && tm.GetId() != editor {
				shell = tm.GetId()
			}
		}
		return shell != "", "no other tab focused in " + main
	})
	o.literal("echo SHELL-$((6*7))")
	o.keys("Enter")
	o.waitText("SHELL-42")

	steps := []struct {
		key, focused string
		shellLeft    bool // the shell's pane left of the editor's
	}{
		{";", editor, false},
		{";", shell, false},
		{"{", shell, true},
		{"}", shell, false},
	}
	for _, st := range steps {
		// Typed as bytes: tmux takes a lone ; argument as the end of
		// its send-keys command.
		o.bytes([]byte{0x1c, st.key[0]})
		in.focusedIn(t, main, st.focused)
		o.waitFor(fmt.Sprintf("prefix %s: the shell's pane left = %v", st.key, st.shellLeft), func(s string) bool {
			sc, ec := textColumn(s, "SHELL-42"), textColumn(s, "MAIN-TEXT")
			return sc >= 0 && ec >= 0 && (sc < ec) == st.shellLeft
		})
	}

	o.prefix("$")
	o.waitFor("the rename prompt", func(string) bool { return strings.Contains(o.status(), "rename window "+main+": main") })
	o.keys("C-u")
	o.literal("renamed")
	o.keys("Enter")
	o.statusEnds("renamed")
	if out := mustPhantom(t, in.env, "window", "ls"); !strings.Contains(out, "renamed") {
		t.Errorf("phantom window ls after prefix $:\n%s", out)
	}

	o.prefix(")")
	o.waitText("CI-TEXT")
	o.statusEnds("ci")
	o.prefix("L")
	o.waitText("MAIN-TEXT")
	o.statusEnds("renamed")
	o.prefix("L")
	o.waitText("CI-TEXT")
	o.statusEnds("ci")
}
