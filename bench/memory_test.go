package bench

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// idleTabs is how many tabs BenchmarkIdleTabMemory opens at once.
const idleTabs = 50

// liveBytes is the Go heap in use plus goroutine stacks, after a full GC.
func liveBytes() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}

// BenchmarkIdleTabMemory opens idleTabs idle tabs and reports the growth of
// the Go heap plus goroutine stacks per tab (B/tab), for tabs running
// `sleep` and tabs at a bash prompt. Kernel PTY buffers and the child
// processes are not counted.
func BenchmarkIdleTabMemory(b *testing.B) {
	for _, kind := range []string{"sleep", "shell"} {
		b.Run(kind, func(b *testing.B) {
			ws, home := newWorkspace(b)
			spec := workspace.CreateSpec{Directory: home, Cols: 80, Rows: 24}
			if kind == "sleep" {
				spec.Command = []string{"sleep", "1000"}
			}
			var perTab float64
			b.ResetTimer()
			for range b.N {
				wt := ws.Watch()
				before := liveBytes()
				ids := make([]string, 0, idleTabs)
				for range idleTabs {
					t, err := ws.Create(spec)
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, t.ID)
				}
				waitIdleTabs(b, ws, wt, ids, kind == "shell")
				after := liveBytes()
				perTab += float64(after-before) / idleTabs
				b.StopTimer()
				wt.Stop()
				for _, id := range ids {
					if err := ws.Close(id); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
			}
			b.ReportMetric(perTab/float64(b.N), "B/tab")
		})
	}
}

// waitIdleTabs waits until every tab's program runs: a shell tab shows its
// prompt (the tab turns idle), a sleep tab has sleep in the foreground.
func waitIdleTabs(tb testing.TB, ws *workspace.Workspace, wt *workspace.Watcher, ids []string, shell bool) {
	tb.Helper()
	left := map[string]bool{}
	for _, id := range ids {
		left[id] = true
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(left) > 0 {
		if time.Now().After(deadline) {
			tb.Fatalf("%d tabs not ready after 30s", len(left))
		}
		for id := range left {
			t, err := ws.Get(id)
			if err != nil {
				tb.Fatal(err)
			}
			if t.Exited {
				tb.Fatalf("tab %s exited (status %d)", id, t.ExitCode)
			}
			if (shell && t.Idle) || (!shell && t.ForegroundName == "sleep") {
				delete(left, id)
			}
		}
		select {
		case <-wt.Events():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// historyBytes is generated output of at least historyLines lines, as a
// PTY delivers it.
func historyBytes(tb testing.TB) []byte {
	f := historyFile(tb)
	raw, err := os.ReadFile(f.path)
	if err != nil {
		tb.Fatal(err)
	}
	return ptyBytes(raw)
}

// fullScreen returns an 80x24 screen whose 100,000-line scrollback is full.
func fullScreen(data []byte) *screen.Screen {
	s := screen.New(screen.Options{Cols: 80, Rows: 24, Scrollback: historyLines})
	for s.ScrollbackLen() < historyLines {
		s.Write(data)
	}
	return s
}

// BenchmarkScrollbackBytesPerLine fills a 100,000-line scrollback with
// typical coloured output at 80 columns and reports what the screen says it
// holds per line (B/line, from MemoryUsage) and what the Go heap grew by
// per line (heapB/line).
func BenchmarkScrollbackBytesPerLine(b *testing.B) {
	data := historyBytes(b)
	var perLine, heapPerLine float64
	b.ResetTimer()
	for range b.N {
		before := liveBytes()
		s := fullScreen(data)
		after := liveBytes()
		n := float64(s.ScrollbackLen())
		perLine += float64(s.MemoryUsage()) / n
		heapPerLine += float64(after-before) / n
		runtime.KeepAlive(s)
	}
	b.ReportMetric(perLine/float64(b.N), "B/line")
	b.ReportMetric(heapPerLine/float64(b.N), "heapB/line")
}

// readReps is how many reads one benchmark iteration makes, so that a
// short -benchtime still averages many reads; ms/read is per read.
const readReps = 50

// BenchmarkReadLast1000 reads the last 1,000 lines of a 100,000-line
// history: from a bare screen, through Workspace.ReadOutput of a tab that
// cat'ed the history (in process: no RPC), and from a tmux pane with
// `capture-pane -p -S -1000` (a client process and a round trip each; the
// bare round trip, `display -p`, is reported as rtt-ms).
func BenchmarkReadLast1000(b *testing.B) {
	b.Run("screen", func(b *testing.B) {
		s := fullScreen(historyBytes(b))
		b.ResetTimer()
		timeReads(b, func() int { return len(s.LastLines(1000)) })
	})
	b.Run("workspace", func(b *testing.B) {
		f := historyFile(b)
		ws, home := newWorkspace(b)
		wt := ws.Watch()
		t, err := ws.Create(workspace.CreateSpec{Directory: home, Command: []string{"cat", f.path}, Cols: 80, Rows: 24})
		if err != nil {
			b.Fatal(err)
		}
		waitRendered(b, ws, wt, t.ID, f.marker, time.Minute)
		wt.Stop()
		b.ResetTimer()
		timeReads(b, func() int {
			lines, err := ws.ReadOutput(t.ID, 1000)
			if err != nil {
				b.Fatal(err)
			}
			return len(lines)
		})
	})
	b.Run("tmux", func(b *testing.B) {
		f := historyFile(b)
		s := newTmux(b)
		s.run("new-session", "-d", "-s", "h", "-x", "80", "-y", "24",
			"cat "+quote(f.path)+"; "+s.waitFor("done")+"; exec sleep 100000")
		s.run("wait-for", "done")
		hist, _ := strconv.Atoi(strings.TrimSpace(string(s.run("display", "-p", "-t", "h", "#{history_size}"))))
		if hist < historyLines*9/10 {
			b.Fatalf("tmux history holds %d lines, want about %d", hist, historyLines)
		}
		out := s.run("capture-pane", "-p", "-t", "h", "-S", "-1000")
		if !bytes.Contains(out, []byte(f.marker)) {
			b.Fatalf("capture-pane output lacks the end marker %q", f.marker)
		}
		b.ResetTimer()
		timeReads(b, func() int {
			return bytes.Count(s.run("capture-pane", "-p", "-t", "h", "-S", "-1000"), []byte("\n"))
		})
		b.StopTimer()
		t0 := time.Now()
		for range readReps {
			s.run("display", "-p", "-t", "h", "x")
		}
		b.ReportMetric(float64(time.Since(t0).Microseconds())/1e3/readReps, "rtt-ms")
	})
}

// timeReads runs read readReps times per iteration and reports ms/read; a
// read must return at least 1,000 lines.
func timeReads(b *testing.B, read func() int) {
	t0 := time.Now()
	for range b.N {
		for range readReps {
			if n := read(); n < 1000 {
				b.Fatalf("read returned %d lines, want 1000", n)
			}
		}
	}
	b.ReportMetric(float64(time.Since(t0).Microseconds())/1e3/float64(b.N*readReps), "ms/read")
}

// BenchmarkScrollbackBytesPerLineTmux is the peer figure: how much the tmux
// server's resident memory grows per history line when a pane's 100,000-line
// history fills with the same output (B/line; RSS, so malloc overhead is
// included).
func BenchmarkScrollbackBytesPerLineTmux(b *testing.B) {
	f := historyFile(b)
	s := newTmux(b)
	var perLine float64
	for range b.N {
		s.run("new-session", "-d", "-s", "h", "-x", "80", "-y", "24",
			s.waitFor("ready")+"; tmux -L "+s.name+" wait-for go; cat "+quote(f.path)+"; "+s.waitFor("done")+"; exec sleep 100000")
		s.run("wait-for", "ready")
		pid := strings.TrimSpace(string(s.run("display", "-p", "-t", "h", "#{pid}")))
		before := rssBytes(b, pid)
		s.run("wait-for", "-S", "go")
		s.run("wait-for", "done")
		after := rssBytes(b, pid)
		hist, _ := strconv.Atoi(strings.TrimSpace(string(s.run("display", "-p", "-t", "h", "#{history_size}"))))
		if hist < historyLines*9/10 {
			b.Fatalf("tmux history holds %d lines, want about %d", hist, historyLines)
		}
		perLine += float64(after-before) / float64(hist)
		s.kill()
	}
	b.ReportMetric(perLine/float64(b.N), "B/line")
}

// rssBytes is a process's resident set size.
func rssBytes(tb testing.TB, pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no VmRSS in /proc/%s/status", pid)
	return 0
}
