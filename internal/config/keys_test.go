package config

import (
	"slices"
	"testing"
)

// TestParseKey checks the key names config.json's "keys" accepts.
func TestParseKey(t *testing.T) {
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"x", "x", true},
		{"|", "|", true},
		{`"`, `"`, true},
		{"C-t", "\x14", true},
		{"c-t", "\x14", true},
		{"^T", "\x14", true},
		{`C-\`, "\x1c", true},
		{"Up", "\x1b[A", true},
		{"C-Left", "\x1b[1;5D", true},
		{"Space", " ", true},
		{"", "", false},
		{" ", "", false},
		{"xy", "", false},
		{"C-1", "", false},
		{"é", "", false},
		{"up", "", false},
	}
	for _, tt := range tests {
		got, err := ParseKey(tt.name)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseKey(%q) = %q, %v; want %q, ok %v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

// TestParsePrefix checks the prefix forms and that bad ones are refused.
func TestParsePrefix(t *testing.T) {
	tests := []struct {
		in   string
		want byte
		ok   bool
	}{
		{"", DefaultPrefix, true},
		{`C-\`, 0x1c, true},
		{"C-a", 0x01, true},
		{"^B", 0x02, true},
		{"`", '`', true},
		{"C-1", 0, false},
		{"Ctrl-a", 0, false},
		{" ", 0, false},
	}
	for _, tt := range tests {
		got, err := ParsePrefix(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePrefix(%q) = %#x, %v; want %#x, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestBindings checks that configured keys add to the defaults, replace
// a key's command, and "none" unbinds.
func TestBindings(t *testing.T) {
	c := Config{Keys: map[string]string{"|": "split-right", "x": "none", "C-t": "new-tab", "c": "close-tab"}}
	b := c.Bindings()
	tests := []struct {
		seq, want string
		ok        bool
	}{
		{"|", "split-right", true},
		{"%", "split-right", true},
		{"x", "", false},
		{"\x14", "new-tab", true},
		{"c", "close-tab", true},
		{"\x1b[A", "pane-up", true},
		{"n", "next-tab", true},
	}
	for _, tt := range tests {
		if got, ok := b.Command(tt.seq); got != tt.want || ok != tt.ok {
			t.Errorf("Command(%q) = %q, %v; want %q, %v", tt.seq, got, ok, tt.want, tt.ok)
		}
	}
	if got, want := b.KeysOf("split-right"), []string{"%", "|"}; !slices.Equal(got, want) {
		t.Errorf("KeysOf(split-right) = %q, want %q", got, want)
	}
	if got := b.KeysOf("close-tab"); !slices.Equal(got, []string{"c"}) {
		t.Errorf("KeysOf(close-tab) = %q", got)
	}
	if got := b.KeysOf("new-tab"); !slices.Equal(got, []string{"C-t"}) {
		t.Errorf("KeysOf(new-tab) = %q", got)
	}
}

// TestDefaultKeysParse checks the command table itself: every default key
// parses, is bound once, and every name is unique.
func TestDefaultKeysParse(t *testing.T) {
	seen, names := map[string]string{}, map[string]bool{}
	for _, c := range Commands() {
		if names[c.Name] || c.Name == Unbind || c.Help == "" {
			t.Errorf("command %q: duplicate, reserved or without help", c.Name)
		}
		names[c.Name] = true
		for _, k := range c.Keys {
			seq, err := ParseKey(k)
			if err != nil {
				t.Errorf("command %q: %v", c.Name, err)
			}
			if prev, dup := seen[seq]; dup {
				t.Errorf("key %q bound to %q and %q", k, prev, c.Name)
			}
			seen[seq] = c.Name
			if KeyName(seq) != k {
				t.Errorf("KeyName(ParseKey(%q)) = %q", k, KeyName(seq))
			}
		}
	}
}

// FuzzParseKey checks that ParseKey never panics and that what it accepts
// is written back by KeyName as a name it accepts again, to the same key.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"x", "C-t", "^T", "Up", "C-Up", "Space", "", "C-", "^", "\x00", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		seq, err := ParseKey(name)
		if err != nil {
			return
		}
		again, err := ParseKey(KeyName(seq))
		if err != nil || again != seq {
			t.Errorf("ParseKey(KeyName(%q)) = %q, %v; want %q", seq, again, err, seq)
		}
	})
}
