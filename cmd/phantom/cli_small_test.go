package main

// The command line's small items of issue 25, end to end through the
// binary: config check's first unknown field, up's message, status's exit
// status while down, bare positions with several windows, group names in
// ls.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/config"
	"github.com/phantom-dev/phantom/internal/testenv"
)

// TestConfigCheckFileOrder: of two unknown fields, config check names the
// first in the file, where the alphabet would pick the other.
func TestConfigCheckFileOrder(t *testing.T) {
	env := testenv.New(t)
	if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ body, want, notWant string }{
		{"{\n  \"zeta\": 1,\n  \"alpha\": 2\n}", `line 2, column 3: unknown field "zeta"`, `"alpha"`},
		{`{"status": {"style": {"zz": "red"}}, "aa": 1}`, `unknown field "zz" in status.style`, `"aa"`},
	} {
		writeSettings(t, env.Layout.Config, tt.body)
		r := phantom(t, env, "config", "check")
		if r.code != exitFailure || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, tt.notWant) {
			t.Errorf("config check of %s: want exit 1 naming %q, not %q:\n%v", tt.body, tt.want, tt.notWant, r)
		}
	}
}

// TestPrefixWords: up's message names the prefix as config.json sets it.
func TestPrefixWords(t *testing.T) {
	for _, tt := range []struct{ prefix, want string }{
		{"", `Ctrl-\`}, {`C-\`, `Ctrl-\`}, {"C-a", "Ctrl-a"}, {"^B", "Ctrl-b"}, {"`", "`"},
	} {
		if got := prefixWords(config.Config{Prefix: tt.prefix}); got != tt.want {
			t.Errorf("prefixWords(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

// TestUpMessageAndStatusDown: phantom status while down exits 3 (text and
// JSON, which still says running false); up names the configured prefix
// and points at phantom mcp install; status then exits 0.
func TestUpMessageAndStatusDown(t *testing.T) {
	env := testenv.New(t)
	r := phantom(t, env, "status")
	if r.code != exitNotRunning || !strings.Contains(r.stderr, "Phantom is not running") || !strings.Contains(r.stderr, "phantom up") {
		t.Errorf("phantom status while down: want exit 3, Phantom is not running:\n%v", r)
	}
	r = phantom(t, env, "status", "--json")
	var st struct {
		Running bool `json:"running"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Running || r.code != exitNotRunning {
		t.Errorf("phantom status --json while down: want running false and exit 3:\n%v", r)
	}

	if err := os.MkdirAll(env.Layout.Config, 0o700); err != nil {
		t.Fatal(err)
	}
	writeSettings(t, env.Layout.Config, `{"prefix": "C-a", "shell": "/bin/bash"}`)
	t.Cleanup(func() { phantom(t, env, "down") })
	out := mustPhantom(t, env, "up")
	for _, want := range []string{"phantom attach (Ctrl-a d detaches)", "phantom mcp install"} {
		if !strings.Contains(out, want) {
			t.Errorf("phantom up with prefix C-a printed %q, want %q in it", out, want)
		}
	}
	for _, bad := range []string{`Ctrl-\`, "+mcp-server"} {
		if strings.Contains(out, bad) {
			t.Errorf("phantom up with prefix C-a printed %q, which names %q", out, bad)
		}
	}
	if r := phantom(t, env, "status"); r.code != 0 {
		t.Errorf("phantom status while up:\n%v", r)
	}
}

// TestBarePositionsAcrossWindows runs the README's examples in its order
// from outside any tab, with an empty second window: a bare position
// resolves in the one window that has it; one that several windows have
// is refused, naming each; one that none has is not found. ls shows the
// group's name.
func TestBarePositionsAcrossWindows(t *testing.T) {
	env, _ := up(t)
	mustPhantom(t, env, "new", "--name", "build", "--", "sleep", "1000")
	mustPhantom(t, env, "new", "--", "sleep", "1000")
	web := filepath.Join(env.Home, "web")
	if err := os.Mkdir(web, 0o700); err != nil {
		t.Fatal(err)
	}
	// The README's lines, in its order (from "phantom rename" on).
	for _, line := range [][]string{
		{"rename", "2", "api"}, {"focus", "api"},
		{"group", "new", "backend"}, {"group", "ls"},
		{"new", "--dir", web, "--window", "main", "--group", "backend"},
		{"window", "new", "build"}, {"window", "ls"}, {"window", "rename", "build", "ci"},
		{"group", "rename", "backend", "api"},
		{"group", "move", "3", "api"}, // window ci is empty: not ambiguous
	} {
		mustPhantom(t, env, line...)
	}
	ls := mustPhantom(t, env, "ls")
	var row3 string
	for _, l := range strings.Split(ls, "\n") {
		if strings.Contains(l, "main:3") {
			row3 = l
		}
	}
	if !strings.Contains(row3, " api ") || strings.Contains(row3, " g1 ") {
		t.Errorf("phantom ls: tab main:3 should show group api by name:\n%s", ls)
	}

	// A tab in window ci: position 1 is now in both windows.
	mustPhantom(t, env, "new", "--window", "ci", "--", "sleep", "1000")
	r := phantom(t, env, "rename", "1", "x")
	if r.code != exitUsage || !strings.Contains(r.stderr, "main:1 or ci:1") {
		t.Errorf("phantom rename 1 with two windows having a tab 1: want exit 2 naming main:1 or ci:1:\n%v", r)
	}
	// Position 4 only main has.
	mustPhantom(t, env, "rename", "4", "web")
	if r := phantom(t, env, "rename", "9", "x"); r.code != exitNotFound || !strings.Contains(r.stderr, "no window has a tab 9") {
		t.Errorf("phantom rename 9: want exit 4, no window has a tab 9:\n%v", r)
	}
}
