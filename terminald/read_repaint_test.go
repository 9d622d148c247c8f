package terminald

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestReadSinceAcrossPromptRedraw: a program draws a prompt with OSC 133
// marks, erases it ("\r\e[K", as bash does on SIGWINCH) and, a moment
// later, draws it again. Reads caught in between — one from a cursor
// taken before, one without a cursor — hand out cursors from which the
// redrawn prompt is not new output; text printed after it is.
func TestReadSinceAcrossPromptRedraw(t *testing.T) {
	in := start(t, "sh")
	dir := t.TempDir()
	wait := func(f string) string { return "while [ ! -e " + f + " ]; do sleep 0.02; done; " }
	prompt := `printf '\033]133;A\007PROMPT> \033]133;B\007'; `
	script := `printf 'out\n'; ` + prompt + wait("erase") + `printf '\r\033[K'; ` + wait("redraw") + `printf '\r'; ` + prompt +
		wait("more") + `printf 'typed\n'; exec sleep 1000`
	id := in.create(t, &terminalv1.CreateTerminalRequest{Directory: dir, Command: []string{"sh", "-c", script}}).GetId()
	in.waitOutput(t, id, "PROMPT>")
	read := func(cursor string) *terminalv1.ReadOutputResponse {
		t.Helper()
		r, err := in.c.ReadOutput(ctx(t), &terminalv1.ReadOutputRequest{TerminalId: id, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := read("").GetNextCursor()
	touch("erase")
	testenv.Eventually(t, "the prompt erased", func() (bool, string) {
		l := read("").GetLines()
		return !slices.Contains(l, "PROMPT>"), ""
	})
	fromBefore := read(before)
	fresh := read("")
	touch("redraw")
	in.waitOutput(t, id, "PROMPT>")
	for name, c := range map[string]string{"a cursor from before the redraw": fromBefore.GetNextCursor(), "a cursor taken while erased": fresh.GetNextCursor()} {
		if l := read(c).GetLines(); len(l) != 0 {
			t.Errorf("read from %s after the prompt came back = %q; want nothing new", name, l)
		}
	}
	touch("more")
	in.waitOutput(t, id, "typed")
	if l := read(fresh.GetNextCursor()).GetLines(); !slices.Contains(l, "typed") || slices.Contains(l, "PROMPT>") {
		t.Errorf("read after more output = %q; want the new line only", l)
	}
}
