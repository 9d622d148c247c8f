package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/pty"
	"github.com/phantom-dev/phantom/terminald/screen"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// ingestTimeout bounds one cat of the ingest file (~0.3 MB/s at the limit).
func ingestTimeout(f *genFile) time.Duration {
	return 2*time.Minute + time.Duration(f.size/(300<<10))*time.Second
}

// BenchmarkIngestPlainPTY is the floor: cat the file on a PTY whose master
// is read into a 32 KiB buffer and discarded, as fast as the kernel hands
// it out, until the PTY hangs up.
func BenchmarkIngestPlainPTY(b *testing.B) {
	f := ingestFile(b)
	b.SetBytes(f.size)
	buf := make([]byte, 32<<10)
	b.ResetTimer()
	for range b.N {
		plainOnce(b, f, buf)
	}
}

// plainOnce cats f on a fresh 80x24 PTY and reads the master until the
// last holder of the slave closes it: the floor any terminal host is
// measured against.
func plainOnce(b *testing.B, f *genFile, buf []byte) time.Duration {
	start := time.Now()
	master, slave, err := pty.Open()
	if err != nil {
		b.Fatal(err)
	}
	if err := pty.SetSize(master, 80, 24); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("cat", f.path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	var got int64
	for {
		n, err := master.Read(buf)
		got += int64(n)
		if err != nil {
			// EIO once the last holder of the slave closed it.
			if !errors.Is(err, syscall.EIO) && !errors.Is(err, io.EOF) {
				b.Fatal(err)
			}
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	master.Close()
	if got < f.size {
		b.Fatalf("read %d bytes, want at least %d", got, f.size)
	}
	return time.Since(start)
}

func BenchmarkIngestPhantomTab(b *testing.B) {
	f := ingestFile(b)
	ws, home := newWorkspace(b)
	b.SetBytes(f.size)
	// lag is how long after the program's exit was seen its last line
	// showed, summed: output still queued in the PTY or being rendered.
	var lag time.Duration
	b.ResetTimer()
	for range b.N {
		_, l := tabOnce(b, ws, home, f)
		lag += l
	}
	b.ReportMetric(float64(lag.Microseconds())/1e3/float64(b.N), "lag-ms")
}

// tabOnce cats f in a new Phantom tab and waits until the program has
// exited and its last line is rendered. It returns that time (the tab's
// closing is not counted) and the lag from exit to the last line.
func tabOnce(b *testing.B, ws *workspace.Workspace, home string, f *genFile) (took, lag time.Duration) {
	start := time.Now()
	wt := ws.Watch()
	t, err := ws.Create(workspace.CreateSpec{Directory: home, Command: []string{"cat", f.path}, Cols: 80, Rows: 24})
	if err != nil {
		b.Fatal(err)
	}
	exitAt, renderedAt := waitRendered(b, ws, wt, t.ID, f.marker, ingestTimeout(f))
	took = time.Since(start)
	b.StopTimer()
	wt.Stop()
	if err := ws.Close(t.ID); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	return took, max(0, renderedAt.Sub(exitAt))
}

// BenchmarkIngestSideBySide runs the ingest file at 80x24 and 200x50 side
// by side: a plain PTY reader, a Phantom tab and tmux in rounds, rotating
// which goes first so all see the same machine (on a shared 2-core
// machine, runs minutes apart differ by more than the target). It reports
// medians of wall seconds, of CPU seconds per MB (host + cat) and of the
// per-round ratios to plain (see sideBySide).
func BenchmarkIngestSideBySide(b *testing.B) {
	for _, sz := range streamSizes {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			sideBySide(b, ingestFile(b), sz[0], sz[1])
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func BenchmarkIngestTmux(b *testing.B) {
	f := ingestFile(b)
	s := newTmux(b)
	b.SetBytes(f.size)
	b.ResetTimer()
	for range b.N {
		s.run("new-session", "-d", "-x", "80", "-y", "24", "cat "+quote(f.path)+"; "+s.waitFor("done"))
		s.run("wait-for", "done")
		b.StopTimer()
		s.kill()
		b.StartTimer()
	}
}

// BenchmarkScreenOnly feeds the file's bytes, as the PTY delivers them (LF
// turned into CR LF), to a fresh 80x24 screen with 100,000 lines of
// scrollback in 32 KiB chunks: the engine's pure CPU rate.
func BenchmarkScreenOnly(b *testing.B) {
	f := ingestFile(b)
	raw, err := os.ReadFile(f.path)
	if err != nil {
		b.Fatal(err)
	}
	data := ptyBytes(raw)
	raw = nil
	b.SetBytes(f.size)
	b.ResetTimer()
	for range b.N {
		s := screen.New(screen.Options{Cols: 80, Rows: 24, Scrollback: historyLines})
		for p := data; len(p) > 0; {
			n := min(len(p), 32<<10)
			s.Write(p[:n])
			p = p[n:]
		}
		if got := s.LastLines(1); len(got) != 1 || got[0] != f.marker {
			b.Fatalf("last line %q, want %q", got, f.marker)
		}
	}
}
