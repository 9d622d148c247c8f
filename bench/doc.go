// Package bench measures Phantom's terminal hosting side by side with a
// plain PTY reader and with tmux, on the same machine in the same run.
//
// It holds only benchmarks (and a sanity test of the input generator); there
// is no non-test code. Run it through scripts/bench, which prints a
// side-by-side table, or directly:
//
//	go test -run '^$' -bench . -benchtime 3x -count 1 ./bench/
//
// # Ingest
//
// A deterministic file of mixed plain and SGR-coloured lines (16, 256 and
// truecolor, some CJK) is generated once per process; its size is
// PHANTOM_BENCH_MB megabytes (default 200). The ingest benchmarks time
// `cat FILE` from start until every byte is consumed:
//
//   - BenchmarkIngestPlainPTY: a reader discarding the PTY master's output,
//     the floor any terminal host pays.
//   - BenchmarkIngestPhantomTab: a real workspace tab, until the tab reports
//     its program exited and the file's last line is rendered.
//   - BenchmarkIngestTmux: a detached tmux session (the peer).
//   - BenchmarkScreenOnly: the screen engine alone, fed the bytes in memory.
//
// All report MB/s of file bytes, so they compare directly.
//
// # Side by side, and the vtebench streams
//
// BenchmarkIngestSideBySide (the ingest file) and BenchmarkStreamSideBySide
// (the vtebench streams) run, at 80x24 and at 200x50, rounds of a plain PTY
// reader, a Phantom tab and tmux on the same bytes, rotating which goes
// first. Each reports the median wall seconds of each contender, the
// median of the per-round ratios to plain (ratio, tmux-ratio, with
// ratio-min and ratio-max), CPU seconds per MB of the terminal host plus
// cat (plain-cpus/MB, phantom-cpus/MB, tmux-cpus/MB, and the per-round
// ratios cpu-ratio, tmux-cpu-ratio), and the load average: CPU per MB is
// far steadier than wall time on a shared machine. The Phantom tab's CPU
// is this process's (the workspace, in process, and the 1 ms polling of
// its last line) plus cat's; tmux's is the server's plus cat's, read from
// /proc.
//
// The streams (streams_test.go) are generated in the benchmark, never
// stored: byte streams equivalent to alacritty/vtebench's dense_cells,
// scrolling, scrolling_bottom_region, scrolling_top_region, unicode,
// cursor_motion, medium_cells and sync_medium_cells, for the terminal's
// size: the scrolling ones of PHANTOM_BENCH_STREAM_MB megabytes (default
// 10), the others, which a PTY carries several times faster, five times
// that, so that no run is short against a tab's start.
// BenchmarkStreamScreen feeds each to the screen engine alone (cpuMB/s is
// per CPU-second of the writing thread); TestStreamInstr, run under
// valgrind, gives instructions per byte, independent of the load.
//
// # Memory and reads
//
//   - BenchmarkIdleTabMemory: Go heap plus goroutine stacks per idle tab
//     (B/tab), for tabs running sleep and tabs running the shell.
//   - BenchmarkScrollbackBytesPerLine: bytes the screen holds per 80-column
//     scrollback line of typical coloured text (B/line).
//   - BenchmarkReadLast1000: the last 1,000 lines of a 100,000-line history,
//     from a bare screen, through Workspace.ReadOutput, and from tmux with
//     `capture-pane -p -S -1000`.
//
// Timings are reported, never asserted: no test fails because the machine
// is slow. Every benchmark cleans up after itself: workspaces are shut
// down, tmux servers killed, temporary files removed.
package bench
