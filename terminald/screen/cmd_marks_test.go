package screen

import (
	"fmt"
	"strings"
	"testing"
)

// markRec records, at each OSC 133 mark and clear, the cursor's history
// position, as the workspace's command log does.
type markRec struct {
	s     *Screen
	marks []string // "B@seq.off", "C@…", "D0@…", "X@…" (cleared: ScreenStart)
	pos   map[string]Pos
	cmd   string // the command line, read at C from B
}

func newMarkScreen(cols, rows, sb int) *markRec {
	r := &markRec{pos: map[string]Pos{}}
	r.s = New(Options{Cols: cols, Rows: rows, Scrollback: sb, OnEvent: func(e Event) {
		var k string
		p := r.s.CursorPos()
		switch e.Kind {
		case EventCommandStart:
			k = "B"
		case EventCommandExecuted:
			k = "C"
			r.cmd = strings.Join(r.s.ReadRange(r.pos["B"], Pos{Seq: p.Seq}, 0, 1<<20).Lines, "")
		case EventCommandFinished:
			k = fmt.Sprintf("D%d", e.ExitCode)
		case EventCleared:
			k, p = "X", r.s.ScreenStart()
		default:
			return
		}
		r.marks = append(r.marks, fmt.Sprintf("%s@%d.%d", k, p.Seq, p.Off))
		r.pos[k[:1]] = p
	}})
	return r
}

const (
	markB = "\x1b]133;B\a"
	markC = "\x1b]133;C\a"
)

func markD(code int) string { return fmt.Sprintf("\x1b]133;D;%d\a", code) }

// feeds runs f on in fed whole and split at every byte.
func feeds(t *testing.T, in string, f func(t *testing.T, feed func(*Screen))) {
	t.Run("whole", func(t *testing.T) { f(t, func(s *Screen) { s.Write([]byte(in)) }) })
	for i := 1; i < len(in); i++ {
		t.Run(fmt.Sprintf("split%d", i), func(t *testing.T) {
			f(t, func(s *Screen) { s.Write([]byte(in[:i])); s.Write([]byte(in[i:])) })
		})
	}
}

// TestCommandMarks: the output between a command's C and D marks, read
// with ReadRange from the cursor positions at the marks, is exactly what
// the command printed, whatever the chunking; the command text is what
// lies between B and C.
func TestCommandMarks(t *testing.T) {
	tests := []struct {
		name       string
		cols, rows int
		sb         int
		in         string
		cmd        string
		out        []string
		marks      string
	}{
		{"plain", 40, 5, 100, "$ " + markB + "echo hi\r\n" + markC + "hi\r\n" + markD(0) + "$ ", "echo hi", []string{"hi"}, "B@0.2 C@1.0 D0@2.0"},
		{"no output", 40, 5, 100, "$ " + markB + "false\r\n" + markC + markD(1) + "$ ", "false", nil, "B@0.2 C@1.0 D1@1.0"},
		{"no final newline", 40, 5, 100, "$ " + markB + "printf ab\r\n" + markC + "ab" + markD(0) + "$ ", "printf ab", []string{"ab"}, "B@0.2 C@1.0 D0@1.2"},
		{"scrolls into the scrollback", 20, 3, 100, "old\r\n$ " + markB + "seq 5\r\n" + markC + "1\r\n2\r\n3\r\n4\r\n5\r\n" + markD(0) + "$ ",
			"seq 5", []string{"1", "2", "3", "4", "5"}, "B@1.2 C@2.0 D0@7.0"},
		{"wrapped output line", 5, 4, 100, "$ " + markB + "x\r\n" + markC + "abcdefgh\r\n" + markD(0) + "$ ", "x", []string{"abcdefgh"}, "B@0.2 C@1.0 D0@2.0"},
		{"wrapped command line", 6, 4, 100, "$ " + markB + "echo abcdef\r\n" + markC + "abcdef\r\n" + markD(0), "echo abcdef", []string{"abcdef"}, "B@0.2 C@1.0 D0@2.0"},
		{"trailing spaces", 40, 5, 100, "$ " + markB + "x\r\n" + markC + "a   \r\n \r\n" + markD(0) + "$ ", "x", []string{"a", ""}, "B@0.2 C@1.0 D0@3.0"},
		{"cleared mid-command", 20, 4, 100, "a\r\nb\r\n$ " + markB + "clear\r\n" + markC + "gone\r\n\x1b[H\x1b[2J\x1b[3Jafter\r\n" + markD(0),
			"clear", []string{"after"}, "B@2.2 C@3.0 X@1.0 D0@2.0"},
		{"numbers survive trimming", 20, 2, 2, "1\r\n2\r\n3\r\n$ " + markB + "x\r\n" + markC + "o1\r\no2\r\n" + markD(0), "x", []string{"o1", "o2"}, "B@3.2 C@4.0 D0@6.0"},
		{"wide characters", 20, 4, 100, "$ " + markB + "echo 日本\r\n" + markC + "日本\r\n" + markD(0), "echo 日本", []string{"日本"}, "B@0.2 C@1.0 D0@2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feeds(t, tt.in, func(t *testing.T, feed func(*Screen)) {
				r := newMarkScreen(tt.cols, tt.rows, tt.sb)
				feed(r.s)
				if got := strings.Join(r.marks, " "); got != tt.marks {
					t.Errorf("marks %s, want %s", got, tt.marks)
				}
				from := r.pos["C"]
				if x, ok := r.pos["X"]; ok {
					from = x
				}
				p := r.s.ReadRange(from, r.pos["D"], 0, 1<<20)
				if !equalLines(p.Lines, tt.out) {
					t.Errorf("output %q, want %q", p.Lines, tt.out)
				}
				if got := r.cmd; got != tt.cmd {
					t.Errorf("command %q, want %q", got, tt.cmd)
				}
			})
		})
	}
}

// TestReadRange: the newest lines of a range that fit, the first line cut
// where the range starts inside it, and empty ranges.
func TestReadRange(t *testing.T) {
	s := New(Options{Cols: 40, Rows: 10, Scrollback: 100})
	s.Write([]byte("$ one\r\nl1\r\nl2\r\nl3\r\n$ "))
	tests := []struct {
		name     string
		from, to Pos
		lines    int
		want     []string
		more     bool
	}{
		{"all", Pos{Seq: 1}, Pos{Seq: 4}, 0, []string{"l1", "l2", "l3"}, false},
		{"newest that fit", Pos{Seq: 1}, Pos{Seq: 4}, 2, []string{"l2", "l3"}, true},
		{"starts inside a line", Pos{Seq: 0, Off: 2}, Pos{Seq: 2}, 0, []string{"one", "l1"}, false},
		{"ends inside a line", Pos{Seq: 3}, Pos{Seq: 4, Off: 1}, 0, []string{"l3", "$"}, false},
		{"empty", Pos{Seq: 2}, Pos{Seq: 2}, 0, nil, false},
		{"backwards", Pos{Seq: 3}, Pos{Seq: 1}, 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := s.ReadRange(tt.from, tt.to, tt.lines, 1<<20)
			if !equalLines(p.Lines, tt.want) || p.More != tt.more {
				t.Errorf("ReadRange(%v, %v, %d) = %q more %v, want %q more %v", tt.from, tt.to, tt.lines, p.Lines, p.More, tt.want, tt.more)
			}
		})
	}
}

// TestEventCleared: ED 2 on the main screen is reported, on the alternate
// screen it is not.
func TestEventCleared(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"a\x1b[2J", 1},
		{"a\x1b[J\x1b[1J", 0},
		{"\x1b[?1049ha\x1b[2J\x1b[?1049l", 0},
		{"\x1b[2J\x1b[2J", 2},
	} {
		n := 0
		s := New(Options{Cols: 10, Rows: 3, Scrollback: 10, OnEvent: func(e Event) {
			if e.Kind == EventCleared {
				n++
			}
		}})
		s.Write([]byte(tt.in))
		if n != tt.want {
			t.Errorf("%q: %d clear events, want %d", tt.in, n, tt.want)
		}
	}
}

// FuzzCursorPos: whatever a program writes, the cursor's position is in
// the history's numbering (not before its oldest line, not before the
// screen's first row), and ranges read from marks placed with it never
// panic and hold valid text positions.
func FuzzCursorPos(f *testing.F) {
	for _, s := range []string{"abc", "a\r\nb", "$ " + markB + "x\r\n" + markC + "y\r\n" + markD(0), "\x1b[2J\x1b[3Jz", "日本\x1b[3D", "\x1b[?1049hq"} {
		f.Add([]byte(s), uint8(7), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, cols, rows uint8) {
		var marks []Pos
		var s *Screen
		s = New(Options{Cols: int(cols%40) + 2, Rows: int(rows%10) + 1, Scrollback: 5, OnEvent: func(Event) {
			marks = append(marks, s.CursorPos())
		}})
		s.Write(in)
		p := s.CursorPos()
		oldest, _ := s.HistoryBounds()
		if p.Seq < oldest || !s.AltScreen() && p.Seq < s.ScreenStart().Seq {
			t.Fatalf("cursor at %v, before the oldest line %d or the screen's first %v", p, oldest, s.ScreenStart())
		}
		for i := range marks {
			for j := i; j < len(marks); j++ {
				pg := s.ReadRange(marks[i], marks[j], 0, 1<<20)
				if pg.Bytes > 1<<20 {
					t.Fatalf("page of %d bytes", pg.Bytes)
				}
			}
		}
	})
}
