package main

import (
	"bytes"
	"testing"

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
