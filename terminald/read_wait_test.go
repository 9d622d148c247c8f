package terminald

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestReadOutputWaitHonoursLines: a wait_for read without a cursor
// returns at most `lines` lines, and the newest ones, like a read
// without wait_for: after a match from the matching line on, after idle
// or a timeout the last lines of what was printed during the wait (30,000
// lines here, far more than one page), with an older_cursor and a note
// for the rest. With a cursor the read pages forward from it, at most
// `lines` lines, with more and next_cursor.
func TestReadOutputWaitHonoursLines(t *testing.T) {
	in := start(t, "/usr/bin/bash")
	id := in.create(t, &terminalv1.CreateTerminalRequest{}).GetId()
	in.waitIdle(t, id)
	tests := []struct {
		name, cmd, waitFor string
		lines              int32
		cursor             bool
		want               []string // the last lines of the response
		wantN              int      // how many lines, when not len(want)
		older, more        bool
	}{
		{name: "idle after 30,000 lines", cmd: "seq 1 30000", waitFor: "idle", lines: 2, want: []string{"30000"}, wantN: 2, older: true},
		{name: "match, then lines from it on", cmd: "sleep 0.3; seq 1 30000", waitFor: "^1000$", lines: 2, want: []string{"1000", "1001"}, more: true},
		{name: "timeout after 30,000 lines", cmd: "seq 1 30000", waitFor: "^no such line$", lines: 3, want: []string{"29999", "30000"}, wantN: 3, older: true},
		{name: "cursor pages forward", cmd: "seq 1 30000", waitFor: "idle", lines: 2, cursor: true, want: []string{"1"}, wantN: 2, more: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in.waitIdle(t, id)
			before, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.c.RunCommand(ctx(t), &terminalv1.RunCommandRequest{TerminalId: id, Command: tc.cmd}); err != nil {
				t.Fatal(err)
			}
			req := &terminalv1.ReadOutputRequest{TerminalId: id, WaitFor: tc.waitFor, Lines: proto.Int32(tc.lines), WaitSeconds: proto.Int32(4)}
			if tc.cursor {
				req.Cursor = before.GetNextCursor()
			}
			resp, err := in.c.ReadOutput(ctx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			got := resp.GetLines()
			n := tc.wantN
			if n == 0 {
				n = len(tc.want)
			}
			if tc.cursor {
				// The page starts after the cursor: the command line
				// typed at the prompt, then the output.
				got = got[1:]
				n--
			}
			if len(got) != n || !hasLines(got, tc.want) {
				t.Errorf("lines %q, want %d ending %q (note %q)", resp.GetLines(), n, tc.want, resp.GetNote())
			}
			if (resp.GetOlderCursor() != "") != tc.older || resp.GetMore() != tc.more || resp.GetNote() == "" {
				t.Errorf("older_cursor %q, more %v, note %q; want older %v, more %v and a note", resp.GetOlderCursor(), resp.GetMore(), resp.GetNote(), tc.older, tc.more)
			}
		})
	}
}

// hasLines reports whether want appears in got, in order, one after the
// other.
func hasLines(got, want []string) bool {
	return strings.Contains("\n"+strings.Join(got, "\n")+"\n", "\n"+strings.Join(want, "\n")+"\n")
}
