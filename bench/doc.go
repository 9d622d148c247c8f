// Package bench measures Phantom's terminal hosting the way a user meets
// it, side by side with a plain PTY reader and with tmux, on the same
// machine in the same run.
//
// It holds only benchmarks (and sanity tests of the input generators);
// there is no non-test code. Benchmarks run only with -bench, so `go test
// ./...` stays fast. Run them through scripts/bench, which prints the
// side-by-side tables against the targets, or directly:
//
//	go test -run '^$' -bench 'IngestSideBySide|StreamSideBySide' -benchtime 1x ./bench/
//
// # Ingest through the real daemons
//
// The Phantom under test is the tree's: the phantom binary is built once
// per run, started with `phantom up` in an isolated environment
// (internal/testenv) and stopped with `phantom down`. A run creates a tab
// running `cat FILE` over terminald's gRPC socket (what `phantom new --
// cat FILE` sends) and ends when the tab reports its program exited (on
// the WatchTerminals stream) and the file's last line is the last line on
// its screen (ReadOutput). Its CPU is terminald's and the holder's (the
// tabs' parent) plus cat's, from /proc/PID/stat around the run.
//
// Against it: the plain reader `script -qfec "cat FILE" /dev/null`, the
// floor any terminal host pays (CPU: script + cat), and a detached tmux
// session until its pane shows the last line (CPU: the tmux server +
// cat).
//
// A deterministic file of mixed plain and SGR-coloured lines (16, 256 and
// truecolor, some CJK) is generated once per process; its size is
// PHANTOM_BENCH_MB megabytes (default 200). The vtebench streams
// (streams_test.go) are generated in the benchmark, never stored: byte
// streams equivalent to alacritty/vtebench's dense_cells, scrolling,
// scrolling_bottom_region, scrolling_top_region, unicode, cursor_motion,
// medium_cells and sync_medium_cells, for the terminal's size: the
// scrolling ones of PHANTOM_BENCH_STREAM_MB megabytes (default 10), the
// others, which a PTY carries several times faster, five times that.
//
// BenchmarkIngestSideBySide (the mixed file) and BenchmarkStreamSideBySide
// (the streams) run, at 80x24 and at 200x50, PHANTOM_BENCH_PAIRS rounds
// (default 3; one op is the whole set, so use -benchtime 1x) of plain,
// Phantom and tmux on the same bytes, rotating which goes first. Each
// reports the median wall seconds of each contender, the median of the
// per-round ratios to plain with their spread (ratio, ratio-min,
// ratio-max, tmux-ratio), CPU seconds per MB of the host plus cat
// (plain-cpus/MB, phantom-cpus/MB, tmux-cpus/MB) and the medians and
// spread of the per-round CPU ratios (cpu-ratio, cpu-ratio-min,
// cpu-ratio-max, tmux-cpu-ratio), the Phantom tab's CPU per MB split
// into terminald-cpus/MB and holder-cpus/MB (cat has the rest), and the
// load average. CPU per MB is far
// steadier than wall time on a shared machine.
//
// BenchmarkIngestPlainPTY, BenchmarkIngestPhantomTab and
// BenchmarkIngestTmux time one contender alone at 80x24 (MB/s, cpus/MB,
// cpus/run); with PHANTOM_BENCH_MB=1, cpus/run is a run's fixed cost.
// BenchmarkScreenOnly and BenchmarkStreamScreen feed the bytes to the
// screen engine alone, in memory (cpuMB/s is per CPU-second of the writing
// thread); TestStreamInstr, run under valgrind, gives instructions per
// byte, independent of the load.
//
// # Memory and reads (in process)
//
//   - BenchmarkIdleTabMemory: Go heap plus goroutine stacks per idle tab
//     (B/tab), for tabs running sleep and tabs running the shell.
//   - BenchmarkScrollbackBytesPerLine: bytes the screen holds per 80-column
//     scrollback line of typical coloured text (B/line).
//   - BenchmarkReadLast1000: the last 1,000 lines of a 100,000-line history,
//     from a bare screen, through Workspace.ReadOutput, and from tmux with
//     `capture-pane -p -S -1000`. The whole-command comparison, `phantom
//     read -n 1000` against tmux's client, is cmd/phantom's TestCLIFigures.
//
// Timings are reported, never asserted: no test fails because the machine
// is slow. Every benchmark cleans up after itself: Phantoms are stopped,
// workspaces shut down, tmux servers killed, temporary files removed.
package bench
