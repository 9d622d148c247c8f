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
