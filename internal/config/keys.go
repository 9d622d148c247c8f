package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Command is one thing a prefix key does in `phantom attach`. The table of
// commands (Commands) is the one source of truth: attach dispatches by
// name, its key list (prefix ?) is drawn from it, and config.json's "keys"
// are checked against it.
type Command struct {
	// Name is what config.json's "keys" binds, e.g. "new-tab".
	Name string
	// Keys are the default keys, as config.json writes them.
	Keys []string
	// Help says what the command does, for the key list. Commands with the
	// same Help share one line of it (the nine select-tab-N, the arrows),
	// where the first of them is. At most 28 characters, so that the list
	// fits an 80x24 terminal in two columns (the README says the rest).
	Help string
}

// Unbind is the command name that takes a key's default binding away.
const Unbind = "none"

// commands lists every prefix command in the order of the key list.
var commands = []Command{
	{"next-tab", []string{"n"}, "next / previous entry"},
	{"previous-tab", []string{"p"}, "next / previous entry"},
	{"select-tab-1", []string{"1"}, "entry by number"},
	{"select-tab-2", []string{"2"}, "entry by number"},
	{"select-tab-3", []string{"3"}, "entry by number"},
	{"select-tab-4", []string{"4"}, "entry by number"},
	{"select-tab-5", []string{"5"}, "entry by number"},
	{"select-tab-6", []string{"6"}, "entry by number"},
	{"select-tab-7", []string{"7"}, "entry by number"},
	{"select-tab-8", []string{"8"}, "entry by number"},
	{"select-tab-9", []string{"9"}, "entry by number"},
	{"select-tab", []string{"'"}, "type an entry number, Enter"},
	{"choose-tree", []string{"w"}, "tree of windows and tabs"},
	// choose-tab is choose-tree's old name, kept for config.json files
	// that bind it; the tree replaced the list of one window's tabs.
	{"choose-tab", nil, "tree of windows and tabs"},
	{"previous-window", []string{"("}, "previous / next window"},
	{"next-window", []string{")"}, "previous / next window"},
	{"close-window", []string{"&"}, "close window and tabs (y/n)"},
	{"move-tab", []string{"."}, "move tab to another window"},
	{"new-tab", []string{"c"}, "new tab in this directory"},
	{"split-right", []string{"%"}, "split: new tab right / below"},
	{"split-below", []string{`"`}, "split: new tab right / below"},
	{"pane-up", []string{"Up"}, "pane that way / next pane"},
	{"pane-down", []string{"Down"}, "pane that way / next pane"},
	{"pane-left", []string{"Left"}, "pane that way / next pane"},
	{"pane-right", []string{"Right"}, "pane that way / next pane"},
	{"next-pane", []string{"o"}, "pane that way / next pane"},
	{"swap-pane-up", []string{"{"}, "swap pane with prev / next"},
	{"swap-pane-down", []string{"}"}, "swap pane with prev / next"},
	{"resize-up", []string{"C-Up"}, "move the pane's border"},
	{"resize-down", []string{"C-Down"}, "move the pane's border"},
	{"resize-left", []string{"C-Left"}, "move the pane's border"},
	{"resize-right", []string{"C-Right"}, "move the pane's border"},
	{"zoom", []string{"z"}, "zoom / unzoom the pane"},
	{"break-pane", []string{"!"}, "pane out into its own entry"},
	{"close-tab", []string{"x"}, "close the tab (asks y/n)"},
	{"rename-tab", []string{","}, "rename the tab / window"},
	// rename-session is tmux's name for what it renames: the Phantom
	// window (tmux's session); tmux's rename-window names an entry,
	// which here is its focused tab (rename-tab).
	{"rename-session", []string{"$"}, "rename the tab / window"},
	{"copy-mode", []string{"["}, "copy mode: scroll, search"},
	{"paste", []string{"]"}, "paste newest / choose a copy"},
	{"leave-copy-mode", []string{"q"}, "leave copy mode (or q alone)"},
	{"sheet", []string{"s"}, "the waiting permission sheet"},
	{"grants", []string{"g"}, "grants and recent decisions"},
	{"accept-focus", []string{"f"}, "show the tab a notice names"},
	{"detach", []string{"d"}, "detach (tabs keep running)"},
	{"list-keys", []string{"?"}, "this list"},
	// tmux's habits (issue 25): the command prompt, the last tab, copy
	// mode a page up, the paste buffers.
	{"command-prompt", []string{":"}, "prompt: any command by name"},
	{"last-tab", []string{"l"}, "last tab / pane / window"},
	// last-pane is tmux's (the entry's pane focused before); last-session
	// is tmux's switch-client -l (the window this client showed before),
	// not tmux's last-window, which is an entry's (last-tab).
	{"last-pane", []string{";"}, "last tab / pane / window"},
	{"last-session", []string{"L"}, "last tab / pane / window"},
	{"copy-mode-page-up", []string{"PPage"}, "copy mode: scroll, search"},
	{"choose-buffer", []string{"="}, "paste newest / choose a copy"},
	{"send-keys", nil, "type keys into the tab"},
}

// Commands returns the prefix commands in the order of the key list.
func Commands() []Command { return slices.Clone(commands) }

// CommandNames lists the names "keys" may bind, in the key list's order.
func CommandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.Name
	}
	return names
}

// namedKeys are the keys written by name rather than as the character
// they type, with the bytes a terminal sends for them.
var namedKeys = map[string]string{
	"Space":   " ",
	"Enter":   "\r",
	"Tab":     "\t",
	"BSpace":  "\x7f",
	"Up":      "\x1b[A",
	"Down":    "\x1b[B",
	"Right":   "\x1b[C",
	"Left":    "\x1b[D",
	"C-Up":    "\x1b[1;5A",
	"C-Down":  "\x1b[1;5B",
	"C-Right": "\x1b[1;5C",
	"C-Left":  "\x1b[1;5D",
	"PPage":   "\x1b[5~",
	"NPage":   "\x1b[6~",
}

// keyAliases are other names tmux takes for named keys.
var keyAliases = map[string]string{"PageUp": "PPage", "PgUp": "PPage", "PageDown": "NPage", "PgDn": "NPage"}

// ParseKey reads a key as config.json writes it and returns the bytes the
// terminal sends for it: a printable character ("x", "|", "%"), a control
// key ("C-t" or "^T"), or a named key (Up, Down, Left, Right, C-Up, …,
// Space, Enter, Tab, BSpace, PPage, NPage).
func ParseKey(name string) (string, error) {
	if a, ok := keyAliases[name]; ok {
		name = a
	}
	if seq, ok := namedKeys[name]; ok {
		return seq, nil
	}
	if len(name) == 1 && name[0] > ' ' && name[0] < 0x7f {
		return name, nil
	}
	if c, ok, err := parseControl(name); ok {
		if err != nil {
			return "", err
		}
		return string(rune(c)), nil
	}
	return "", fmt.Errorf("unknown key %q: write one character (\"x\", \"|\"), a control key (\"C-t\"), or one of %s",
		name, strings.Join(slices.Sorted(maps.Keys(namedKeys)), ", "))
}

// parseControl reads "C-x" or "^X"; ok is false when name has neither
// form.
func parseControl(name string) (c byte, ok bool, err error) {
	switch {
	case len(name) == 3 && (name[:2] == "C-" || name[:2] == "c-"):
	case len(name) == 2 && name[0] == '^':
	default:
		return 0, false, nil
	}
	c = name[len(name)-1]
	if c >= 'a' && c <= 'z' {
		c -= 'a' - 'A'
	}
	if c < '@' || c > '_' {
		return 0, true, fmt.Errorf("key %q: Ctrl works with a letter or one of @[\\]^_", name)
	}
	return c - '@', true, nil
}

// DefaultPrefix is Ctrl-\ (0x1c), the key that starts a command.
const DefaultPrefix byte = 0x1c

// ParsePrefix reads the prefix key as config.json writes it: "C-\\",
// "C-a", "^B", one character, or "" for DefaultPrefix.
func ParsePrefix(s string) (byte, error) {
	if s == "" {
		return DefaultPrefix, nil
	}
	if c, ok, err := parseControl(s); ok {
		if err != nil {
			return 0, fmt.Errorf("prefix: %w", err)
		}
		return c, nil
	}
	if len(s) == 1 && s[0] > ' ' && s[0] < 0x7f {
		return s[0], nil
	}
	return 0, fmt.Errorf("prefix %q: write a control key as \"C-a\" or \"^A\"", s)
}

// KeyName writes seq (bytes a key sends) as config.json writes the key.
func KeyName(seq string) string {
	for name, s := range namedKeys {
		if s == seq {
			return name
		}
	}
	if len(seq) == 1 && seq[0] < 0x20 {
		c := seq[0] + '@'
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A' // C-t, as people write it
		}
		return "C-" + string(rune(c))
	}
	return seq
}

// Bindings maps the keys typed after the prefix to command lines (a
// command's name, maybe with arguments): the defaults of Commands with
// config.json's "keys" over them.
type Bindings struct {
	bySeq map[string]string
}

// Bindings returns the effective key bindings of c. Load has checked
// every key and command, so nothing can fail here; an entry that does
// not parse (a Config built by hand) is skipped.
func (c Config) Bindings() Bindings {
	b := Bindings{bySeq: map[string]string{}}
	for _, cmd := range commands {
		for _, k := range cmd.Keys {
			seq, _ := ParseKey(k)
			b.bySeq[seq] = cmd.Name
		}
	}
	for key, name := range c.Keys {
		seq, err := ParseKey(key)
		switch {
		case err != nil:
		case name == Unbind:
			delete(b.bySeq, seq)
		default:
			b.bySeq[seq] = name
		}
	}
	return b
}

// Command returns the command line bound to seq: a command's name, or
// (config.json's "keys") a name with arguments for ParseCommandLine.
func (b Bindings) Command(seq string) (string, bool) {
	name, ok := b.bySeq[seq]
	return name, ok
}

// KeysOf returns the names of the keys bound to command name, sorted.
func (b Bindings) KeysOf(name string) []string {
	var keys []string
	for seq, n := range b.bySeq {
		if n == name {
			keys = append(keys, KeyName(seq))
		}
	}
	slices.Sort(keys)
	return keys
}

// WithArgs lists the bindings to command lines with arguments, as key
// name and line, sorted by key: the key list shows them apart, since
// their command's help does not say what they do.
func (b Bindings) WithArgs() [][2]string {
	var out [][2]string
	for seq, line := range b.bySeq {
		if strings.ContainsAny(line, " \t") {
			out = append(out, [2]string{KeyName(seq), line})
		}
	}
	slices.SortFunc(out, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
	return out
}

// checkKeys validates config.json's "keys" against the command table and
// the prefix.
func checkKeys(keys map[string]string, prefix byte) error {
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		name := keys[key]
		seq, err := ParseKey(key)
		if err != nil {
			return fmt.Errorf("keys: %w", err)
		}
		if seq == string(rune(prefix)) {
			return fmt.Errorf("keys: %q is the prefix key, which pressed twice sends itself to the tab; bind another key", key)
		}
		if name == Unbind {
			continue
		}
		if _, err := ParseCommandLine(name); err != nil {
			if strings.HasPrefix(err.Error(), "unknown command") && suggest(firstWord(name), CommandNames()) == "" {
				return fmt.Errorf("keys: %q is bound to %q: %w; the commands are %s, or %q to unbind the key",
					key, name, err, strings.Join(CommandNames(), ", "), Unbind)
			}
			return fmt.Errorf("keys: %q is bound to %q: %w", key, name, err)
		}
	}
	return nil
}

// firstWord is the command name a binding's line starts with.
func firstWord(line string) string {
	if f := strings.Fields(line); len(f) > 0 {
		return f[0]
	}
	return ""
}
