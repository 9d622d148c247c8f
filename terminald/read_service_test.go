package terminald

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// pageSize is a response's text as max_bytes bounds it.
func pageSize(r *terminalv1.ReadOutputResponse) int {
	n := 0
	for _, l := range r.GetLines() {
		n += len(l) + 1
	}
	return n
}

// readAllOlder reads req's lines page by page through older_cursor and
// returns them oldest first, parts of cut lines joined, checking every
// page against bound.
func (in *instance) readAllOlder(t *testing.T, req *terminalv1.ReadOutputRequest, bound int) (lines []string, pages int) {
	t.Helper()
	var got [][]string
	var cuts []bool
	for {
		resp, err := in.c.ReadOutput(ctx(t), req)
		if err != nil {
			t.Fatalf("ReadOutput(%v): %v", req, err)
		}
		if s := pageSize(resp); s > bound {
			t.Fatalf("page of %d bytes over the bound %d", s, bound)
		}
		pages++
		got = append([][]string{resp.GetLines()}, got...)
		cuts = append([]bool{resp.GetLastLineCut()}, cuts...)
		if resp.GetOlderCursor() == "" {
			break
		}
		req = &terminalv1.ReadOutputRequest{TerminalId: req.GetTerminalId(), Cursor: resp.GetOlderCursor(), MaxBytes: req.MaxBytes}
	}
	for i, page := range got {
		if i > 0 && cuts[i-1] && len(page) > 0 {
			lines[len(lines)-1] += page[0]
			page = page[1:]
		}
		lines = append(lines, page...)
	}
	return lines, pages
}

// tailPart is the last n bytes of s, less the bytes of a character cut.
func tailPart(s string, n int) string {
	s = s[len(s)-n:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

func TestReadOutputPages(t *testing.T) {
	in := start(t, "sh")
	dir := t.TempDir()
	var want []string
	var file strings.Builder
	for i := range 3000 {
		l := fmt.Sprintf("line %04d:%s", i, strings.Repeat("é", i%50))
		want = append(want, l)
		file.WriteString(l + "\n")
	}
	long := strings.Repeat("0123456789日本", 20000) // 320,000 bytes in one line
	want = append(want, long, "END")
	file.WriteString(long + "\nEND\n")
	if err := os.WriteFile(filepath.Join(dir, "out.txt"), []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	tab := in.create(t, &terminalv1.CreateTerminalRequest{Directory: dir, Cols: 100, Command: []string{"sh", "-c", "cat out.txt; exec sleep 1000"}})
	id := tab.GetId()
	in.waitOutput(t, id, "END")

	tests := []struct {
		name                string
		lines, maxBytes     *int32
		wantLines           []string // the whole response, when set
		wantOlder, wantNote bool
		wantCut             bool
	}{
		{name: "default: the last 100 lines, the long one cut to fit", wantLines: []string{tailPart(long, DefaultReadBytes-5), "END"},
			wantOlder: true, wantNote: true},
		{name: "the last line", lines: proto.Int32(1), wantLines: []string{"END"}},
		{name: "lines that fit", lines: proto.Int32(3), maxBytes: proto.Int32(1 << 20), wantLines: []string{want[len(want)-3], long, "END"}},
		{name: "lines that fit a page wait for the next", lines: proto.Int32(3), maxBytes: proto.Int32(1024),
			wantLines: []string{tailPart(long, 1024-5), "END"}, wantOlder: true, wantNote: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Lines: tc.lines, MaxBytes: tc.maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			bound := DefaultReadBytes
			if tc.maxBytes != nil {
				bound = int(*tc.maxBytes)
			}
			if s := pageSize(resp); s > bound {
				t.Errorf("%d bytes, over %d", s, bound)
			}
			got := resp.GetLines()
			if tc.wantLines != nil && strings.Join(got, "\n") != strings.Join(tc.wantLines, "\n") {
				t.Errorf("lines = %d: %.200q…, want %d: %.200q…", len(got), got, len(tc.wantLines), tc.wantLines)
			}
			if (resp.GetOlderCursor() != "") != tc.wantOlder || (resp.GetNote() != "") != tc.wantNote || resp.GetNextCursor() == "" {
				t.Errorf("older_cursor %q, next_cursor %q, note %q", resp.GetOlderCursor(), resp.GetNextCursor(), resp.GetNote())
			}
		})
	}

	// Everything, page by page, at several bounds: nothing lost.
	for _, bound := range []int32{1024, 65536, 1 << 20} {
		got, pages := in.readAllOlder(t, &terminalv1.ReadOutputRequest{TerminalId: id, Lines: proto.Int32(100000), MaxBytes: proto.Int32(bound)}, int(bound))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("bound %d: %d lines in %d pages, want %d lines as written", bound, len(got), pages, len(want))
		}
	}

	// Forward from the oldest line by next_cursor: the same lines.
	first, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Lines: proto.Int32(100000), MaxBytes: proto.Int32(1024)})
	if err != nil {
		t.Fatal(err)
	}
	for first.GetOlderCursor() != "" {
		if first, err = in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Cursor: first.GetOlderCursor(), MaxBytes: proto.Int32(1024)}); err != nil {
			t.Fatal(err)
		}
	}
	got := append([]string(nil), first.GetLines()...)
	for r := first; ; {
		cut := r.GetLastLineCut()
		if r, err = in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Cursor: r.GetNextCursor(), MaxBytes: proto.Int32(1024)}); err != nil {
			t.Fatal(err)
		}
		lines := r.GetLines()
		if cut && len(lines) > 0 {
			if r.GetFirstLineOffset() == 0 {
				t.Fatalf("a cut line continues without its offset: %+v", r)
			}
			got[len(got)-1] += lines[0]
			lines = lines[1:]
		}
		got = append(got, lines...)
		if !r.GetMore() {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("forward: %d lines, want %d as written", len(got), len(want))
	}

	// Cursors are checked.
	other := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"sh", "-c", "exec sleep 1000"}})
	next := first.GetNextCursor()
	parts := strings.Split(next, ".")
	parts[1] = "1" // another run of the tab
	errs := []struct {
		name string
		req  *terminalv1.ReadOutputRequest
		code codes.Code
		msg  string
	}{
		{"garbage", &terminalv1.ReadOutputRequest{TerminalId: id, Cursor: "hello"}, codes.InvalidArgument, "not one read_output returned"},
		{"another tab's", &terminalv1.ReadOutputRequest{TerminalId: other.GetId(), Cursor: next}, codes.InvalidArgument, "is for tab " + id},
		{"an earlier run's", &terminalv1.ReadOutputRequest{TerminalId: id, Cursor: strings.Join(parts, ".")}, codes.FailedPrecondition, "earlier run"},
		{"bound too small", &terminalv1.ReadOutputRequest{TerminalId: id, MaxBytes: proto.Int32(100)}, codes.InvalidArgument, "max_bytes"},
		{"bound too large", &terminalv1.ReadOutputRequest{TerminalId: id, MaxBytes: proto.Int32(2 << 20)}, codes.InvalidArgument, "max_bytes"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := in.c.ReadOutput(ctx(t), tc.req)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestReadOutputAlternateScreen(t *testing.T) {
	in := start(t, "sh")
	tab := in.create(t, &terminalv1.CreateTerminalRequest{Command: []string{"sh", "-c",
		`printf 'history 1\nhistory 2\n\033[?1049h\033[Hfull-screen row\n'; exec sleep 1000`}})
	id := tab.GetId()
	in.waitOutput(t, id, "full-screen row")
	resp, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetAlternateScreen() || strings.Join(resp.GetLines(), "|") != "full-screen row" || !strings.Contains(resp.GetNote(), "full-screen program") {
		t.Fatalf("read of a full-screen program = %v", resp)
	}
	// older_cursor reads the history before it.
	hist, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Cursor: resp.GetOlderCursor()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hist.GetLines(), "|"); got != "history 1|history 2" || hist.GetAlternateScreen() {
		t.Fatalf("history behind the full-screen program = %q (%v)", got, hist)
	}
	// next_cursor continues after the history: nothing new yet.
	next, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Cursor: resp.GetNextCursor()})
	if err != nil || len(next.GetLines()) != 0 || next.GetMore() {
		t.Fatalf("read from next_cursor = %v, %v; want nothing new", next, err)
	}
}
