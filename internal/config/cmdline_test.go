package config

import (
	"slices"
	"strings"
	"testing"
)

// TestParseCommandLine checks what the command prompt and the bindings
// take: names of the table, quoting, each command's arguments, and errors
// that name the command or word at fault.
func TestParseCommandLine(t *testing.T) {
	tests := []struct {
		line string
		want CommandLine
		err  string // a part of the error; "" for none
	}{
		{"next-tab", CommandLine{Name: "next-tab", Args: []string{}}, ""},
		{"  rename-tab   build  ", CommandLine{Name: "rename-tab", Args: []string{"build"}}, ""},
		{"rename-tab my build", CommandLine{Name: "rename-tab", Args: []string{"my", "build"}}, ""},
		{`rename-tab "my build"`, CommandLine{Name: "rename-tab", Args: []string{"my build"}}, ""},
		{`rename-tab 'it''s'`, CommandLine{Name: "rename-tab", Args: []string{"its"}}, ""},
		{`rename-tab a\ b`, CommandLine{Name: "rename-tab", Args: []string{"a b"}}, ""},
		{`rename-tab "a\"b"`, CommandLine{Name: "rename-tab", Args: []string{`a"b`}}, ""},
		{"select-tab 12", CommandLine{Name: "select-tab", Args: []string{"12"}}, ""},
		{"select-tab", CommandLine{Name: "select-tab", Args: []string{}}, ""},
		{"new-tab /tmp", CommandLine{Name: "new-tab", Args: []string{"/tmp"}}, ""},
		{"resize-left 5", CommandLine{Name: "resize-left", Args: []string{"5"}}, ""},
		{"send-keys 'make test' Enter", CommandLine{Name: "send-keys", Args: []string{"make test", "Enter"}}, ""},
		{"last-tab", CommandLine{Name: "last-tab", Args: []string{}}, ""},
		{"rename-session ci build", CommandLine{Name: "rename-session", Args: []string{"ci", "build"}}, ""},
		{"last-session x", CommandLine{}, `last-session takes no arguments, got "x"`},
		{"switch-client -l", CommandLine{}, `that is tmux's; here it is last-session (-l)`},
		{"swap-pane -D", CommandLine{}, `here it is swap-pane-up (-U) or swap-pane-down (-D)`},
		{"display-panes", CommandLine{}, `prefix q leaves copy mode`},
		{"", CommandLine{}, "empty command line"},
		{"   ", CommandLine{}, "empty command line"},
		{"renam-tab build", CommandLine{}, `unknown command "renam-tab" (did you mean "rename-tab"?)`},
		{"copy-mode-p", CommandLine{}, `did you mean "copy-mode"?`},
		{"frobnicate", CommandLine{}, `unknown command "frobnicate"; prefix ? lists`},
		{"rename-window build", CommandLine{}, `unknown command "rename-window": that is tmux's; here it is rename-tab`},
		{"next-tab 2", CommandLine{}, `next-tab takes no arguments, got "2"`},
		{"select-tab two", CommandLine{}, `select-tab [N]: "two" is not a number`},
		{"select-tab 0", CommandLine{}, `"0" is not a number from 1`},
		{"select-tab 1 2", CommandLine{}, `select-tab takes [N], got "1 2"`},
		{"resize-left -3", CommandLine{}, `resize-left [CELLS]: "-3" is not a number`},
		{"send-keys", CommandLine{}, "send-keys needs KEY..."},
		{"send-keys C-Foo", CommandLine{}, `"C-Foo", is not a key name`},
		{`rename-tab "open`, CommandLine{}, `the " at column 12 is not closed`},
		{`rename-tab 'open`, CommandLine{}, `the ' at column 12 is not closed`},
		{`rename-tab end\`, CommandLine{}, `a \ at the end`},
		{"rename-tab \xff", CommandLine{}, "not valid UTF-8"},
		{strings.Repeat("x", maxLine+1), CommandLine{}, "at most 4096"},
	}
	for _, tt := range tests {
		got, err := ParseCommandLine(tt.line)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("ParseCommandLine(%q): %v", tt.line, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseCommandLine(%q) = %v, %v; want an error with %q", tt.line, got, err, tt.err)
		case tt.err == "" && (got.Name != tt.want.Name || !slices.Equal(got.Args, tt.want.Args)):
			t.Errorf("ParseCommandLine(%q) = %#v, want %#v", tt.line, got, tt.want)
		}
	}
}

// TestCompleteCommand checks Tab in the command prompt.
func TestCompleteCommand(t *testing.T) {
	tests := []struct {
		text, want string
		matches    int
	}{
		{"renam", "rename-", 2},
		{"rename-t", "rename-tab ", 1},
		{"rename-s", "rename-session ", 1},
		{"last", "last-", 3},
		{"last-p", "last-pane ", 1},
		{"swap", "swap-pane-", 2},
		{"resize-", "resize-", 4},
		{"sel", "select-tab", 10},
		{"zzz", "zzz", 0},
		{"rename-tab bu", "rename-tab bu", 0},
	}
	for _, tt := range tests {
		got, m := CompleteCommand(tt.text)
		if got != tt.want || len(m) != tt.matches {
			t.Errorf("CompleteCommand(%q) = %q, %d matches (%q); want %q, %d", tt.text, got, len(m), m, tt.want, tt.matches)
		}
	}
}

// TestBindingsToCommandLines checks that "keys" may bind a command line
// with arguments, that a bad one is refused naming the key and the
// command, and that the key list can show such bindings.
func TestBindingsToCommandLines(t *testing.T) {
	tests := []struct {
		keys map[string]string
		err  string
	}{
		{map[string]string{"M": "rename-tab build", "|": "split-right"}, ""},
		{map[string]string{"K": "send-keys 'make test' Enter"}, ""},
		{map[string]string{"M": "renam-tab build"}, `keys: "M" is bound to "renam-tab build": unknown command "renam-tab" (did you mean "rename-tab"?)`},
		{map[string]string{"M": "next-tab 3"}, `keys: "M" is bound to "next-tab 3": next-tab takes no arguments`},
		{map[string]string{"M": "resize-left x"}, `keys: "M" is bound to "resize-left x": resize-left [CELLS]: "x" is not a number`},
		{map[string]string{"M": "qqqqqqqqqq"}, `the commands are next-tab, previous-tab`},
	}
	for _, tt := range tests {
		err := checkKeys(tt.keys, DefaultPrefix)
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("checkKeys(%v) = %v, want %q", tt.keys, err, tt.err)
		}
	}
	b := Config{Keys: map[string]string{"M": "rename-tab build", "|": "split-right"}}.Bindings()
	if line, _ := b.Command("M"); line != "rename-tab build" {
		t.Errorf("Command(M) = %q", line)
	}
	if got := b.WithArgs(); len(got) != 1 || got[0] != [2]string{"M", "rename-tab build"} {
		t.Errorf("WithArgs() = %q", got)
	}
}

// TestRepeatTime checks repeat_time's default, off and bounds.
func TestRepeatTime(t *testing.T) {
	tests := []struct {
		json string
		want int
		err  string
	}{
		{`{}`, DefaultRepeatTime, ""},
		{`{"repeat_time": 0}`, 0, ""},
		{`{"repeat_time": 800}`, 800, ""},
		{`{"repeat_time": -1}`, 0, "repeat_time must be from 0 (off) to 10000 milliseconds, got -1"},
		{`{"repeat_time": "fast"}`, 0, "repeat_time"},
	}
	for _, tt := range tests {
		c, err := Parse("config.json", []byte(tt.json))
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Parse(%s) = %v, want an error with %q", tt.json, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("Parse(%s): %v", tt.json, err)
		case tt.err == "" && c.Repeat() != tt.want:
			t.Errorf("Parse(%s).Repeat() = %d, want %d", tt.json, c.Repeat(), tt.want)
		}
	}
}

// FuzzParseCommandLine checks that the parser never panics, that what it
// takes names a command with arguments it accepts, and that String
// writes a line it reads back the same.
func FuzzParseCommandLine(f *testing.F) {
	for _, s := range []string{"rename-tab build", `rename-tab "a b"`, "select-tab 3", "send-keys 'ls -l' Enter",
		`x\`, `"`, "'", "resize-left 99999", "new-tab ~/src", "next-tab\t", "rename-tab \"\\\"\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, err := ParseCommandLine(line)
		if err != nil {
			if err.Error() == "" {
				t.Errorf("ParseCommandLine(%q): an empty error", line)
			}
			return
		}
		if !slices.Contains(CommandNames(), l.Name) {
			t.Errorf("ParseCommandLine(%q) = %q, no command", line, l.Name)
		}
		again, err := ParseCommandLine(l.String())
		if err != nil || again.Name != l.Name || !slices.Equal(again.Args, l.Args) {
			t.Errorf("ParseCommandLine(%q) = %#v; its String %q reads back as %#v, %v", line, l, l.String(), again, err)
		}
	})
}
