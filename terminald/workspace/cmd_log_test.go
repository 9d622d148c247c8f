package workspace

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// logScreen is a screen whose marks feed a command log, as a tab's.
func logScreen(typed string) (*screen.Screen, *commandLog) {
	l := &commandLog{typed: typed}
	var s *screen.Screen
	s = screen.New(screen.Options{Cols: 30, Rows: 4, Scrollback: 100, OnEvent: func(e screen.Event) { l.onEvent(s, e) }})
	return s, l
}

// TestCommandLog: the log records the last finished command's text, exit
// status and output range from OSC 133 marks, fed whole and split at
// every byte.
func TestCommandLog(t *testing.T) {
	const (
		a = "\x1b]133;A\a"
		b = "\x1b]133;B\a"
		c = "\x1b]133;C\a"
	)
	d := func(n int) string { return fmt.Sprintf("\x1b]133;D;%d\a", n) }
	e := func(enc string) string { return "\x1b]133;E;cmdline_url=" + enc + "\a" }
	tests := []struct {
		name     string
		typed    string
		in       string
		text     string
		exit     int
		out      []string
		cleared  bool
		started  uint64
		finished bool
	}{
		{"echo", "", a + "$ " + b + "echo hi\r\n" + c + "hi\r\n" + d(0) + a + "$ " + b, "echo hi", 0, []string{"hi"}, false, 1, true},
		{"typed text wins", "echo  'hi'", a + "$ " + b + "echo  'hi'\r\n" + c + "hi\r\n" + d(0) + a + "$ ", "echo  'hi'", 0, []string{"hi"}, false, 1, true},
		{"the shell's report wins", "echo !!", a + "$ " + b + "echo !!\r\n" + e("echo%20echo%20two") + c + "echo two\r\n" + d(0) + a + "$ ",
			"echo echo two", 0, []string{"echo two"}, false, 1, true},
		{"a report for a line not run is dropped", "", a + "$ " + b + "x\r\n" + e("x") + a + "$ " + b + "y\r\n" + c + d(0) + a + "$ ",
			"y", 0, nil, false, 1, true},
		{"a bad report is ignored", "", a + "$ " + b + "z\r\n" + e("%zz") + c + d(0) + a + "$ ", "z", 0, nil, false, 1, true},
		{"exit status", "", a + "$ " + b + "false\r\n" + c + d(1) + a + "$ ", "false", 1, nil, false, 1, true},
		{"signal", "", a + "$ " + b + "sleep 9\r\n" + c + "^C\r\n" + d(130) + a + "$ ", "sleep 9", 130, []string{"^C"}, false, 1, true},
		{"empty line", "", a + "$ " + b + "\r\n" + d(0) + a + "$ ", "", 0, nil, false, 0, false},
		{"two commands, the last kept", "", a + "$ " + b + "one\r\n" + c + "1\r\n" + d(0) + a + "$ " + b + "two\r\n" + c + "2\r\n2\r\n" + d(2) + a + "$ ",
			"two", 2, []string{"2", "2"}, false, 2, true},
		{"cleared", "", "x\r\ny\r\n" + a + "$ " + b + "clear; echo z\r\n" + c + "\x1b[H\x1b[2J\x1b[3Jz\r\n" + d(0) + a + "$ ", "clear; echo z", 0, []string{"z"}, true, 1, true},
		{"running", "", a + "$ " + b + "make\r\n" + c + "building\r\n", "make", 0, nil, false, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < len(tt.in); i++ {
				s, l := logScreen(tt.typed)
				s.Write([]byte(tt.in[:i]))
				s.Write([]byte(tt.in[i:]))
				where := fmt.Sprintf("split at %d", i)
				if l.started != tt.started {
					t.Fatalf("%s: %d commands started, want %d", where, l.started, tt.started)
				}
				if !tt.finished {
					if l.last != nil {
						t.Fatalf("%s: a finished command %+v", where, *l.last)
					}
					if tt.started > 0 && (l.cur == nil || l.cur.Text != tt.text) {
						t.Fatalf("%s: running command %+v, want %q", where, l.cur, tt.text)
					}
					continue
				}
				got := l.last
				if got == nil {
					t.Fatalf("%s: no finished command", where)
				}
				out := s.ReadRange(got.Start, got.End, 0, 1<<20).Lines
				if got.Text != tt.text || got.ExitCode != tt.exit || !got.HasExit || got.Cleared != tt.cleared ||
					strings.Join(out, "\n") != strings.Join(tt.out, "\n") || got.EndedBy != EndedByMark {
					t.Fatalf("%s: %q exit %d (%v) cleared %v output %q; want %q exit %d cleared %v output %q",
						where, got.Text, got.ExitCode, got.HasExit, got.Cleared, out, tt.text, tt.exit, tt.cleared, tt.out)
				}
			}
		})
	}
}
