package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

func TestPrintPages(t *testing.T) {
	page := func(cut bool, trimmed uint64, lines ...string) *terminalv1.ReadOutputResponse {
		return &terminalv1.ReadOutputResponse{Lines: lines, LastLineCut: cut, TrimmedLines: trimmed}
	}
	tests := []struct {
		name          string
		pages         []*terminalv1.ReadOutputResponse
		out, warnings string
	}{
		{name: "nothing", pages: nil, out: ""},
		{name: "one page", pages: []*terminalv1.ReadOutputResponse{page(false, 0, "a", "", "b")}, out: "a\n\nb\n"},
		{name: "pages", pages: []*terminalv1.ReadOutputResponse{page(false, 0, "a"), page(false, 0, "b", "c")}, out: "a\nb\nc\n"},
		{name: "a line in parts", pages: []*terminalv1.ReadOutputResponse{page(true, 0, "a", "lo"), page(true, 0, "ng"), page(false, 0, " line", "z")},
			out: "a\nlong line\nz\n"},
		{name: "trimmed lines", pages: []*terminalv1.ReadOutputResponse{page(false, 7, "x"), page(false, 7, "y")}, out: "x\ny\n",
			warnings: "phantom read: 7 of the lines asked for were already dropped from the scrollback\n"},
		{name: "full-screen program", pages: []*terminalv1.ReadOutputResponse{{Lines: []string{"row"}, AlternateScreen: true}}, out: "row\n",
			warnings: "phantom read: a full-screen program runs in this tab; these are the rows it shows\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			if err := printPages(&out, &errw, tc.pages); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.out || errw.String() != tc.warnings {
				t.Errorf("printed %q, warned %q; want %q, %q", out.String(), errw.String(), tc.out, tc.warnings)
			}
		})
	}
}

// TestCLIWaitsHonourWait: `phantom read --wait-for X --wait 15` and
// `phantom run --wait 15` wait the 15 seconds asked, not a fixed 10 s
// deadline, and exit 124 when the time runs out, as timeout(1) does.
// (Only a lower bound on the time: machines are noisy.)
func TestCLIWaitsHonourWait(t *testing.T) {
	env, tab := shellUp(t, "/usr/bin/bash")
	other := strings.TrimSpace(mustPhantom(t, env, "new", "--name", "runs"))
	runTabIdle(t, env, other)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"read --wait-for", []string{"read", tab, "--wait-for", "^never printed$", "--wait", "15"}},
		{"run --wait", []string{"run", other, "--wait=15", "--", "sleep 40"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			r := phantom(t, env, tc.args...)
			took := time.Since(began)
			if r.code != 124 {
				t.Errorf("phantom %s: %v\nwant exit 124 when the wait runs out", strings.Join(tc.args, " "), r)
			}
			if took < 12*time.Second {
				t.Errorf("phantom %s gave up after %s, before the 15 s asked", strings.Join(tc.args, " "), took)
			}
		})
	}
}
