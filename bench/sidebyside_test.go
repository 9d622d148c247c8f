package bench

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/terminald/screen"
)

// run is one contender's run: wall time and CPU seconds of the terminal
// host plus the writer (cat). For a Phantom tab, terminald and holder are
// the two daemons' shares of cpu (cat's is the rest).
type run struct {
	wall, cpu         float64
	terminald, holder float64
}

// childrenCPU is the CPU time of this process's reaped children (and
// theirs, once reaped).
func childrenCPU() float64 {
	var kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(kids.Utime) + tv(kids.Stime)
}

// loadAvg is the one-minute load average, or -1.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// plainRun is the floor any terminal host pays: `script -qfec "cat FILE"
// /dev/null`, a plain PTY reader copying the output to /dev/null, until
// it exits. Its CPU is script's plus cat's (script's reaped child). The
// terminal's size does not matter to a reader that renders nothing.
func plainRun(b *testing.B, f *genFile) run {
	c0, start := childrenCPU(), time.Now()
	cmd := exec.Command("script", "-qfec", "cat "+quote(f.path), "/dev/null")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("script -qfec \"cat %s\": %v %s", f.path, err, stderr.String())
	}
	return run{wall: time.Since(start).Seconds(), cpu: childrenCPU() - c0}
}

// tmuxRun cats f in a new detached cols x rows tmux session until cat has
// exited and the file's last line is the last line in the pane. Its CPU is
// the tmux server's plus cat's: the pane's shell waits after cat (so its
// reaped children, cat, can be read in /proc) until the server is killed.
func tmuxRun(b *testing.B, s *tmuxServer, f *genFile, cols, rows int) run {
	start := time.Now()
	s.run("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		"cat "+quote(f.path)+"; "+s.waitFor("done")+"; exec sleep 600")
	s.run("wait-for", "done")
	// wait-for reaches the server before the pane's last output may have:
	// the run ends when the pane shows the last line.
	for {
		out := strings.TrimRight(string(s.run("capture-pane", "-p")), "\n")
		last := out[strings.LastIndexByte(out, '\n')+1:]
		if last == f.marker {
			break
		}
		if time.Since(start) > ingestTimeout(f) {
			b.Fatalf("tmux: last line %q, want %q", last, f.marker)
		}
		time.Sleep(time.Millisecond)
	}
	wall := time.Since(start)
	out := strings.Fields(string(s.run("display", "-p", "#{pid} #{pane_pid}")))
	if len(out) != 2 {
		b.Fatalf("tmux display: %q", out)
	}
	server, _ := procTimes(out[0])
	_, kids := procTimes(out[1])
	s.kill()
	return run{wall: wall.Seconds(), cpu: server + kids}
}

// procTimes returns a process's own CPU seconds and those of its reaped
// children, from /proc/PID/stat.
func procTimes(pid string) (own, children float64) {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(stat[i+1:]))
	// After the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
	if len(f) < 15 {
		return 0, 0
	}
	tick := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v / 100 } // USER_HZ
	return tick(f[11]) + tick(f[12]), tick(f[13]) + tick(f[14])
}

// pairs is how many rounds a side-by-side benchmark runs:
// PHANTOM_BENCH_PAIRS, default 3.
func pairs(tb testing.TB) int {
	n := 3
	if v := os.Getenv("PHANTOM_BENCH_PAIRS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			tb.Fatalf("PHANTOM_BENCH_PAIRS=%q: want a positive number of rounds", v)
		}
	}
	return n
}

// sideBySide runs a plain PTY reader, a tab of a real Phantom and (when
// installed) tmux on f at cols x rows in pairs(b) rounds, rotating which
// goes first so all see the same machine, and reports each one's median
// wall seconds and CPU seconds per MB, the medians and spreads of the
// per-round ratios to plain, and the load average. One op is the whole
// set of rounds, whatever b.N: run it with -benchtime 1x (testing would
// otherwise run it once more to size b.N).
func sideBySide(b *testing.B, f *genFile, cols, rows int) {
	ph := startPhantom(b)
	var tx *tmuxServer
	if _, err := exec.LookPath("tmux"); err == nil {
		tx = newTmux(b)
	}
	mb := float64(f.size) / (1 << 20)
	var plain, tab, tm []run
	var ratio, cpuRatio, tmRatio, tmCPURatio, load []float64
	load = append(load, loadAvg())
	b.ResetTimer()
	for i := range pairs(b) {
		var p, t, x run
		for k := range 3 {
			switch (i + k) % 3 {
			case 0:
				p = plainRun(b, f)
			case 1:
				t = ph.catRun(b, f, cols, rows)
			case 2:
				if tx != nil {
					x = tmuxRun(b, tx, f, cols, rows)
				}
			}
		}
		plain, tab = append(plain, p), append(tab, t)
		ratio = append(ratio, t.wall/p.wall)
		cpuRatio = append(cpuRatio, t.cpu/p.cpu)
		if tx != nil {
			tm = append(tm, x)
			tmRatio = append(tmRatio, x.wall/p.wall)
			tmCPURatio = append(tmCPURatio, x.cpu/p.cpu)
		}
		load = append(load, loadAvg())
	}
	b.StopTimer()
	wall := func(rs []run) float64 { return median(mapRuns(rs, func(r run) float64 { return r.wall })) }
	cpu := func(rs []run) float64 { return median(mapRuns(rs, func(r run) float64 { return r.cpu / mb })) }
	b.ReportMetric(mb, "MB")
	b.ReportMetric(wall(plain), "plain-s")
	b.ReportMetric(wall(tab), "phantom-s")
	b.ReportMetric(median(ratio), "ratio")
	b.ReportMetric(cpu(plain), "plain-cpus/MB")
	b.ReportMetric(cpu(tab), "phantom-cpus/MB")
	b.ReportMetric(median(cpuRatio), "cpu-ratio")
	b.ReportMetric(median(mapRuns(tab, func(r run) float64 { return r.terminald / mb })), "terminald-cpus/MB")
	b.ReportMetric(median(mapRuns(tab, func(r run) float64 { return r.holder / mb })), "holder-cpus/MB")
	b.ReportMetric(slicesMin(ratio), "ratio-min")
	b.ReportMetric(slicesMax(ratio), "ratio-max")
	b.ReportMetric(slicesMin(cpuRatio), "cpu-ratio-min")
	b.ReportMetric(slicesMax(cpuRatio), "cpu-ratio-max")
	if tx != nil {
		b.ReportMetric(wall(tm), "tmux-s")
		b.ReportMetric(median(tmRatio), "tmux-ratio")
		b.ReportMetric(cpu(tm), "tmux-cpus/MB")
		b.ReportMetric(median(tmCPURatio), "tmux-cpu-ratio")
	}
	b.ReportMetric(median(load), "load")
}

// threadCPU returns the CPU seconds used by the calling OS thread.
func threadCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func mapRuns(rs []run, f func(run) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func slicesMin(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func slicesMax(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// BenchmarkStreamSideBySide runs every vtebench stream at 80x24 and
// 200x50 side by side: plain PTY reader, Phantom tab, tmux (see
// sideBySide for the figures).
func BenchmarkStreamSideBySide(b *testing.B) {
	for _, s := range vtStreams {
		for _, sz := range streamSizes {
			b.Run(fmt.Sprintf("%s/%dx%d", s.name, sz[0], sz[1]), func(b *testing.B) {
				sideBySide(b, streamFile(b, s, sz[0], sz[1]), sz[0], sz[1])
			})
		}
	}
}

// BenchmarkStreamScreen feeds every vtebench stream, as the PTY delivers
// it (LF turned into CR LF), to a fresh screen of the stream's size with
// 100,000 lines of scrollback, in 32 KiB writes: the engine's CPU rate on
// each stream, without PTY or workspace.
func BenchmarkStreamScreen(b *testing.B) {
	for _, s := range vtStreams {
		for _, sz := range streamSizes {
			b.Run(fmt.Sprintf("%s/%dx%d", s.name, sz[0], sz[1]), func(b *testing.B) {
				f := streamFile(b, s, sz[0], sz[1])
				raw, err := os.ReadFile(f.path)
				if err != nil {
					b.Fatal(err)
				}
				data := ptyBytes(raw)
				b.SetBytes(f.size)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				t0 := threadCPU()
				b.ResetTimer()
				for range b.N {
					scr := screen.New(screen.Options{Cols: sz[0], Rows: sz[1], Scrollback: historyLines})
					for p := data; len(p) > 0; {
						n := min(len(p), 32<<10)
						scr.Write(p[:n])
						p = p[n:]
					}
					if got := scr.LastLines(1); len(got) != 1 || got[0] != f.marker {
						b.Fatalf("last line %q, want %q", got, f.marker)
					}
				}
				b.StopTimer()
				// Throughput per CPU-second of this thread: steadier than
				// MB/s when other processes compete for the cores.
				if d := threadCPU() - t0; d > 0 {
					b.ReportMetric(float64(f.size)*float64(b.N)/1e6/d, "cpuMB/s")
				}
			})
		}
	}
}

// TestStreamInstr feeds one vtebench stream (PHANTOM_INSTR_STREAM, at
// PHANTOM_INSTR_SIZE such as 80x24) PHANTOM_INSTR_N times to a fresh
// screen; it is skipped unless those are set. Counting its instructions
// with valgrind at two values of N gives instructions per byte, a figure
// independent of the machine's load (scripts/bench-screen instr).
func TestStreamInstr(t *testing.T) {
	name := os.Getenv("PHANTOM_INSTR_STREAM")
	if name == "" {
		t.Skip("set PHANTOM_INSTR_STREAM, PHANTOM_INSTR_SIZE and PHANTOM_INSTR_N")
	}
	var cols, rows int
	if _, err := fmt.Sscanf(os.Getenv("PHANTOM_INSTR_SIZE"), "%dx%d", &cols, &rows); err != nil {
		t.Fatalf("PHANTOM_INSTR_SIZE: %v", err)
	}
	n, _ := strconv.Atoi(os.Getenv("PHANTOM_INSTR_N"))
	for _, s := range vtStreams {
		if s.name != name {
			continue
		}
		f := streamFile(t, s, cols, rows)
		raw, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		data := ptyBytes(raw)
		for range n {
			scr := screen.New(screen.Options{Cols: cols, Rows: rows, Scrollback: historyLines})
			for p := data; len(p) > 0; {
				k := min(len(p), 32<<10)
				scr.Write(p[:k])
				p = p[k:]
			}
		}
		return
	}
	t.Fatalf("no stream %q", name)
}
