package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/phantom-dev/phantom/internal/keys"
)

// CommandLine is a prefix command with its arguments, as attach's command
// prompt (prefix :) and config.json's "keys" write it: "rename-tab build",
// "resize-left 5", "send-keys 'make test' Enter".
type CommandLine struct {
	// Name is a command of the table (Commands).
	Name string
	// Args are its arguments, unquoted; ParseCommandLine checked them
	// against what the command takes.
	Args []string
}

// argSpec is what a command takes after its name.
type argSpec struct {
	usage    string // the arguments, as an error message shows them
	min, max int    // how many; max < 0: any number
	// check, when set, refuses bad arguments with a reason.
	check func(args []string) error
}

// commandArgs are the commands that take arguments; every other command
// takes none. A command run without its optional argument does what its
// key does (rename-tab and select-tab open their prompt).
var commandArgs = map[string]argSpec{
	"rename-tab":     {"[NAME]", 0, -1, nil},
	"rename-session": {"[NAME]", 0, -1, nil},
	"select-tab":     {"[N]", 0, 1, checkCount},
	"new-tab":        {"[DIR]", 0, 1, nil},
	"resize-up":      {"[CELLS]", 0, 1, checkCount},
	"resize-down":    {"[CELLS]", 0, 1, checkCount},
	"resize-left":    {"[CELLS]", 0, 1, checkCount},
	"resize-right":   {"[CELLS]", 0, 1, checkCount},
	"send-keys":      {"KEY...", 1, -1, checkKeyNames},
}

// MaxCount bounds a number argument (a tab's number, cells to resize by).
const MaxCount = 10_000

// checkCount takes one whole number from 1 to MaxCount.
func checkCount(args []string) error {
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 || n > MaxCount {
		return fmt.Errorf("%q is not a number from 1 to %d", args[0], MaxCount)
	}
	return nil
}

// checkKeyNames takes what `phantom send` takes: key names and text.
func checkKeyNames(args []string) error {
	_, err := keys.Parse(args, false)
	return err
}

// Count is a number argument ParseCommandLine checked, or def when the
// line has none.
func (l CommandLine) Count(def int) int {
	if len(l.Args) == 0 {
		return def
	}
	n, err := strconv.Atoi(l.Args[0])
	if err != nil {
		return def
	}
	return n
}

// String writes the line back as ParseCommandLine reads it, quoting the
// arguments that need it.
func (l CommandLine) String() string {
	words := []string{l.Name}
	for _, a := range l.Args {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			a = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// maxLine bounds a command line, so that a binding or a prompt cannot
// hold megabytes.
const maxLine = 4096

// ParseCommandLine reads a command line: words split by blanks, a word in
// "double" quotes (with \ escapes) or 'single' quotes keeping its blanks,
// a \ outside quotes keeping the next character. The first word names a
// command of the table; the others are its arguments. Every error names
// the line, the word and what to write instead (the nearest command for
// a misspelt one).
func ParseCommandLine(line string) (CommandLine, error) {
	if len(line) > maxLine {
		return CommandLine{}, fmt.Errorf("command line of %d bytes: at most %d", len(line), maxLine)
	}
	if !utf8.ValidString(line) {
		return CommandLine{}, fmt.Errorf("command line %q is not valid UTF-8", line)
	}
	words, err := splitWords(line)
	if err != nil {
		return CommandLine{}, fmt.Errorf("command line %q: %w", line, err)
	}
	if len(words) == 0 {
		return CommandLine{}, fmt.Errorf("empty command line: write a command, such as %q", "rename-tab build")
	}
	name := words[0]
	if !slices.Contains(CommandNames(), name) {
		return CommandLine{}, unknownCommand(name)
	}
	l := CommandLine{Name: name, Args: words[1:]}
	spec, ok := commandArgs[name]
	switch {
	case !ok && len(l.Args) > 0:
		return CommandLine{}, fmt.Errorf("%s takes no arguments, got %q", name, strings.Join(l.Args, " "))
	case !ok:
		return l, nil
	case len(l.Args) < spec.min:
		return CommandLine{}, fmt.Errorf("%s needs %s", name, spec.usage)
	case spec.max >= 0 && len(l.Args) > spec.max:
		return CommandLine{}, fmt.Errorf("%s takes %s, got %q", name, spec.usage, strings.Join(l.Args, " "))
	}
	if spec.check != nil && len(l.Args) > 0 {
		if err := spec.check(l.Args); err != nil {
			return CommandLine{}, fmt.Errorf("%s %s: %w", name, spec.usage, err)
		}
	}
	return l, nil
}

// tmuxNames are tmux's names for commands of the table, for the message
// of a tmux user who typed them: one vocabulary runs, the other is
// pointed at.
var tmuxNames = map[string]string{
	"new-window": "new-tab", "rename-window": "rename-tab", "last-window": "last-tab",
	"select-window": "select-tab", "choose-window": "choose-tab", "kill-window": "close-tab",
	"kill-pane": "close-tab", "split-window": "split-right or split-below",
	"select-pane":  "pane-up, pane-down, pane-left or pane-right",
	"resize-pane":  "resize-up, resize-down, resize-left or resize-right (or zoom)",
	"paste-buffer": "paste", "list-buffers": "choose-buffer", "detach-client": "detach",
	"list-keys": "list-keys", "switch-client": "last-session (-l), previous-window (-p) or next-window (-n)",
	"swap-pane": "swap-pane-up (-U) or swap-pane-down (-D)", "display-panes": "the tree of prefix w, which numbers the panes (prefix q leaves copy mode)",
}

// unknownCommand says name is no command, with the nearest one.
func unknownCommand(name string) error {
	if ours, ok := tmuxNames[name]; ok {
		return fmt.Errorf("unknown command %q: that is tmux's; here it is %s", name, ours)
	}
	hint := suggest(name, CommandNames())
	if hint == "" {
		// A start of a name is a command the user began to write.
		for _, c := range CommandNames() {
			if name != "" && strings.HasPrefix(c, name) {
				hint = fmt.Sprintf(" (did you mean %q?)", c)
				break
			}
		}
	}
	if hint == "" {
		hint = "; prefix ? lists the commands with their keys"
	}
	return fmt.Errorf("unknown command %q%s", name, hint)
}

// splitWords splits line into words as ParseCommandLine describes.
func splitWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\\':
			if i+1 == len(line) {
				return nil, fmt.Errorf("a \\ at the end escapes nothing")
			}
			i++
			w.WriteByte(line[i])
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("the ' at column %d is not closed", i+1)
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				w.WriteByte(line[j])
			}
			if j == len(line) {
				return nil, fmt.Errorf("the \" at column %d is not closed", i+1)
			}
			i = j
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// CompleteCommand completes the command name the prompt's text starts
// with: the longest text every matching name starts with (with a space
// after a single match), and the names that match. Text past the name
// is not completed.
func CompleteCommand(text string) (string, []string) {
	if strings.ContainsAny(text, " \t") {
		return text, nil
	}
	var match []string
	for _, n := range CommandNames() {
		if strings.HasPrefix(n, text) {
			match = append(match, n)
		}
	}
	switch len(match) {
	case 0:
		return text, nil
	case 1:
		return match[0] + " ", match
	}
	common := match[0]
	for _, m := range match[1:] {
		for !strings.HasPrefix(m, common) {
			common = common[:len(common)-1]
		}
	}
	return common, match
}

// repeatable are the commands that, like tmux's `bind -r`, repeat without
// the prefix within the repeat time: tmux marks resize-pane so, and not
// select-pane.
var repeatable = map[string]bool{"resize-up": true, "resize-down": true, "resize-left": true, "resize-right": true}

// Repeatable reports whether command name repeats without the prefix.
func Repeatable(name string) bool { return repeatable[name] }
