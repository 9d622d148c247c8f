package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tmux's habits in `phantom attach`, through a real outer terminal:
// the command prompt, key bindings to command lines, prefix l, prefix
// PgUp, repeatable resize, copy mode's w b e V C-v, the paste buffers.

// shownTab is the number of the tab the status line marks shown ("2"
// for " 2:bash* "), "" when none is.
func shownTab(status string) string {
	for _, f := range strings.Fields(status) {
		if i := strings.Index(f, ":"); i > 0 && strings.Contains(f, "*") {
			return f[:i]
		}
	}
	return ""
}

// waitStatus waits for cond on the status line.
func (o *outer) waitStatus(what string, cond func(status string) bool) {
	o.t.Helper()
	eventually(o.t, what, func() (bool, string) {
		st := o.status()
		return cond(st), "the status line: " + st + "\nthe screen:\n" + o.screen()
	})
}

// TestAttachCommandPrompt: prefix : runs a command by name with an
// argument, Tab completes the name, Up brings the last line back, and a
// misspelt command says which it meant.
func TestAttachCommandPrompt(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 24, nil)
	o.waitStatus("the status line", func(s string) bool { return shownTab(s) == "1" })
	o.prefix(":")
	o.literal("rename-tab build")
	o.keys("Enter")
	o.waitStatus("the renamed tab", func(s string) bool { return strings.Contains(s, "1:build*") })

	o.prefix(":")
	o.literal("renam")
	o.keys("Tab") // rename-tab and rename-session: their common start
	o.waitStatus("the common start", func(s string) bool { return strings.TrimSpace(s) == ":rename-" })
	o.literal("t")
	o.keys("Tab")
	o.waitStatus("the name completed", func(s string) bool { return strings.TrimSpace(s) == ":rename-tab" })
	o.keys("C-u", "Up")
	o.waitStatus("the history", func(s string) bool { return strings.TrimSpace(s) == ":rename-tab build" })
	o.keys("C-u")
	o.literal("renam-tab x")
	o.keys("Enter")
	o.waitStatus("the unknown command", func(s string) bool {
		return strings.Contains(s, `unknown command "renam-tab" (did you mean "rename-tab"?)`)
	})
	o.prefix(":")
	o.literal("select-tab two")
	o.keys("Enter")
	o.waitStatus("the bad argument", func(s string) bool { return strings.Contains(s, `select-tab [N]: "two" is not a number`) })
	o.prefix(":")
	o.literal("send-keys 'echo prompt-$((6*7))' Enter")
	o.keys("Enter")
	o.waitText("prompt-42")
}

// TestAttachBoundCommandLine: config.json binds a key to a command line
// with an argument, the key runs it; a bad binding is refused by config
// check naming the key and the command.
func TestAttachBoundCommandLine(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 24, nil)
	o.waitStatus("the status line", func(s string) bool { return shownTab(s) == "1" })
	writeSettings(t, in.env.Layout.Config, `{"shell": "/bin/bash", "keys": {"M": "rename-tab from-key", "|": "split-right"}}`)
	o.waitStatus("the settings applied", func(s string) bool { return strings.Contains(s, "applied") })
	o.prefix("M")
	o.waitStatus("the renamed tab", func(s string) bool { return strings.Contains(s, "1:from-key*") })
	o.prefix("|")
	o.waitStatus("a split: entry 1 of two panes", func(s string) bool { return strings.Contains(s, "[2]*") })

	bad := filepath.Join(in.env.Home, "bad.json")
	writeFile(t, bad, `{"keys": {"M": "renam-tab build"}}`)
	r := phantom(t, in.env, "config", "check", bad)
	if r.code != 1 || !strings.Contains(r.stderr, `keys: "M" is bound to "renam-tab build": unknown command "renam-tab" (did you mean "rename-tab"?)`) {
		t.Errorf("config check of a misspelt command: %v", r)
	}
	writeFile(t, bad, `{"keys": {"N": "resize-left many"}}`)
	if r := phantom(t, in.env, "config", "check", bad); r.code != 1 || !strings.Contains(r.stderr, `keys: "N" is bound to "resize-left many": resize-left [CELLS]: "many" is not a number`) {
		t.Errorf("config check of a bad argument: %v", r)
	}
}

// TestAttachLastTab: prefix l goes back to the tab shown before, and
// again to the one before that.
func TestAttachLastTab(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 24, nil)
	o.waitStatus("the status line", func(s string) bool { return shownTab(s) == "1" })
	for _, n := range []string{"2", "3"} {
		o.prefix("c")
		o.waitStatus("tab "+n, func(s string) bool { return shownTab(s) == n })
	}
	o.prefix("1")
	o.waitStatus("tab 1", func(s string) bool { return shownTab(s) == "1" })
	o.prefix("l")
	o.waitStatus("back to tab 3", func(s string) bool { return shownTab(s) == "3" })
	o.prefix("l")
	o.waitStatus("and to tab 1", func(s string) bool { return shownTab(s) == "1" })
}

// TestAttachCopyPageUp: prefix PgUp enters copy mode a page up, showing
// the scrollback.
func TestAttachCopyPageUp(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 24, nil)
	o.waitStatus("the status line", func(s string) bool { return shownTab(s) == "1" })
	o.literal("clear; seq 1 200")
	o.keys("Enter")
	o.waitFor("200 at the bottom", func(s string) bool { return strings.Contains(s, "\n200\n") })
	o.prefix("PPage")
	o.waitFor("a page up", func(s string) bool {
		lines := strings.Split(s, "\n")
		return lines[0] == "157" && strings.Contains(o.status(), "[scroll")
	})
}

// borderColumn is the column of the first vertical border on row y of
// the outer terminal, -1 when there is none.
func (o *outer) borderColumn(y int) int {
	lines := strings.Split(o.screen(), "\n")
	if y >= len(lines) {
		return -1
	}
	i := strings.IndexRune(lines[y], '│')
	if i < 0 {
		return -1
	}
	return len([]rune(lines[y][:i]))
}

// TestAttachRepeatResize: after one prefix, three C-Left move the border
// three times (tmux's repeat-time); before, the second and third went to
// the tab (bash moved its cursor a word back), so the border moved once.
// A C-Left after another key goes to the tab again.
func TestAttachRepeatResize(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 81, 24, nil)
	o.waitStatus("the status line", func(s string) bool { return shownTab(s) == "1" })
	o.prefix("%")
	o.waitFor("the border at 40", func(string) bool { return o.borderColumn(5) == 40 })
	o.prefix("C-Left", "C-Left", "C-Left")
	o.waitFor("the border three moves left", func(string) bool { return o.borderColumn(5) == 34 })
	o.prefix("C-Right")
	o.waitFor("one move right", func(string) bool { return o.borderColumn(5) == 36 })
	o.keys("a", "C-Right") // a key that does not repeat ends the repeat
	o.prefix("C-Right")
	o.waitFor("only the prefixed move", func(string) bool { return o.borderColumn(5) == 38 })
	for range 3 { // the prefix each time works as before
		o.prefix("C-Left")
	}
	o.waitFor("three prefixed moves", func(string) bool { return o.borderColumn(5) == 32 })
}

// copyLines prints the lines the copy tests select in, at the top of a
// cleared screen, and waits for them.
func (o *outer) copyLines() {
	o.t.Helper()
	o.literal(`clear; printf 'foo.bar baz_qux  end\nsecond line here\nthird-x y\n'`)
	o.keys("Enter")
	o.waitFor("the lines", func(s string) bool {
		return strings.HasPrefix(s, "foo.bar baz_qux  end\nsecond line here\nthird-x y\n")
	})
}

// catA runs cat -A on a cleared screen without the terminal's echo (so
// that the screen shows cat's output alone), and waits until the shell
// ran the line (its bracketed paste off: a paste goes to cat as it is).
func (o *outer) catA() {
	o.t.Helper()
	o.literal("clear; stty -echo; echo cat-ready; cat -A; stty echo")
	o.keys("Enter")
	o.waitFor("cat running", func(s string) bool { return strings.HasPrefix(s, "cat-ready\n") })
}

// TestAttachCopyWordsAndShapes: in copy mode w, b, e move by words, V
// selects lines and C-v a rectangle, as tmux's vi copy mode does; each
// copy is a paste buffer (prefix = lists them), prefix ] pastes the
// newest into cat, and prefix = pastes an older one. A second client
// shares the buffers.
func TestAttachCopyWordsAndShapes(t *testing.T) {
	in := startPhantom(t)
	o := in.attachOuter(t, 80, 24, nil)
	o.waitStatus("the status line", func(s string) bool { return shownTab(s) == "1" })
	o.copyLines()
	copies := []struct {
		keys []string // after prefix [ and k k k 0, which put the cursor on "foo"
		want string   // the buffer list's line
	}{
		{[]string{"w", "w", "v", "e"}, "buffer0: 3 characters: bar"},
		{[]string{"$", "b", "v", "e"}, "buffer1: 3 characters: end"},
		{[]string{"w", "w", "w", "b", "v", "w", "e"}, "buffer2: 11 characters: bar baz_qux"},
		{[]string{"w", "w", "C-v", "j", "j", "l", "l"}, "buffer3: 11 characters: bar↵nd ↵d-x"},
		{[]string{"V", "j"}, "buffer4: 38 characters: foo.bar baz_qux  end↵second line here↵"},
	}
	for _, cp := range copies {
		o.prefix("[")
		o.waitStatus("copy mode", func(s string) bool { return strings.Contains(s, "[scroll") })
		o.keys(append([]string{"k", "k", "k", "0"}, cp.keys...)...)
		o.keys("y")
		o.waitStatus("copied", func(s string) bool { return strings.Contains(s, "copied") })
	}
	o.prefix("=")
	o.waitText("paste buffers")
	for _, cp := range copies {
		o.waitText(cp.want)
	}
	o.keys("Escape")

	// prefix ] pastes the newest (the two lines) into cat -A, which
	// shows each line's end as $.
	o.catA()
	o.prefix("]")
	o.waitText("foo.bar baz_qux  end$\nsecond line here$")
	o.keys("C-d")

	// prefix = pastes an older one: buffer3, the rectangle, into cat -A.
	o.catA()
	o.prefix("=")
	o.waitText("buffer3")
	o.keys("j", "Enter")
	o.keys("Enter")
	o.waitText("bar$\nnd $\nd-x$")
	o.keys("C-d")

	// A second client lists the same buffers; d deletes one for both.
	o2 := in.attachOuter(t, 80, 24, nil)
	o2.waitStatus("the second client", func(s string) bool { return shownTab(s) == "1" })
	o2.prefix("=")
	o2.waitText("buffer4: 38 characters")
	o2.keys("d")
	o2.waitFor("buffer4 deleted", func(s string) bool { return !strings.Contains(s, "buffer4") && strings.Contains(s, "buffer3") })
	o2.keys("Escape")
	o.prefix("=")
	o.waitFor("buffer4 gone for the first client too", func(s string) bool {
		return strings.Contains(s, "buffer3") && !strings.Contains(s, "buffer4")
	})
	o.keys("Escape")
}

// writeFile writes body to path.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
