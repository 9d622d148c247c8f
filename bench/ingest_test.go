package bench

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// ingestTimeout bounds one cat of the ingest file (~0.3 MB/s at the limit).
func ingestTimeout(f *genFile) time.Duration {
	return 2*time.Minute + time.Duration(f.size/(300<<10))*time.Second
}

// BenchmarkIngestPlainPTY is the floor: `script -qfec "cat FILE"
// /dev/null`, a plain PTY reader, until it exits (see plainRun).
func BenchmarkIngestPlainPTY(b *testing.B) {
	f := ingestFile(b)
	b.SetBytes(f.size)
	b.ResetTimer()
	var rs []run
	for range b.N {
		rs = append(rs, plainRun(b, f))
	}
	reportCPU(b, f, rs)
}

// BenchmarkIngestPhantomTab cats the file in an 80x24 tab of a real
// Phantom until the tab reports exit with the last line on screen (see
// phantomInstance.catRun).
func BenchmarkIngestPhantomTab(b *testing.B) {
	f := ingestFile(b)
	ph := startPhantom(b)
	b.SetBytes(f.size)
	b.ResetTimer()
	var rs []run
	for range b.N {
		rs = append(rs, ph.catRun(b, f, 80, 24))
	}
	reportCPU(b, f, rs)
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

// BenchmarkIngestTmux cats the file in a detached 80x24 tmux session
// until the pane shows the last line (see tmuxRun).
func BenchmarkIngestTmux(b *testing.B) {
	f := ingestFile(b)
	s := newTmux(b)
	b.SetBytes(f.size)
	b.ResetTimer()
	var rs []run
	for range b.N {
		rs = append(rs, tmuxRun(b, s, f, 80, 24))
	}
	reportCPU(b, f, rs)
}

// reportCPU reports the median CPU seconds per MB of runs of f, and per
// run: with a small PHANTOM_BENCH_MB, cpus/run is the fixed cost of a run
// (opening the tab, noticing its end).
func reportCPU(b *testing.B, f *genFile, rs []run) {
	cpu := median(mapRuns(rs, func(r run) float64 { return r.cpu }))
	b.ReportMetric(cpu/(float64(f.size)/(1<<20)), "cpus/MB")
	b.ReportMetric(cpu, "cpus/run")
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
