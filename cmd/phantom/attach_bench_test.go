package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/pty"
)

// These benchmarks compare attach with a terminal used directly, side by
// side in one run:
//
//	go test ./cmd/phantom -run '^$' -bench Attach -benchtime 200x
//
// BenchmarkAttachKeystroke reports the median keystroke-to-echo time of a
// bash prompt through `phantom attach` and of the same bash on a PTY the
// benchmark reads itself. BenchmarkAttachCat times `cat` of a
// PHANTOM_BENCH_MB (default 200) megabyte file of coloured text in a tab
// with a client attached, against a plain PTY reader.

// ptyProc is a program on a PTY the benchmark owns.
type ptyProc struct {
	ptm *os.File
	cmd *exec.Cmd
}

func startOnPTY(tb testing.TB, env []string, dir string, cols, rows int, argv ...string) *ptyProc {
	tb.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		tb.Fatal(err)
	}
	if err := pty.SetSize(ptm, cols, rows); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	pts.Close()
	p := &ptyProc{ptm: ptm, cmd: cmd}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptm.Close()
	})
	return p
}

// readUntil reads from the PTY until the bytes read (this call) contain
// want, and returns when that happened.
func readUntil(tb testing.TB, r *os.File, want []byte, buf []byte) time.Time {
	tb.Helper()
	var seen []byte
	r.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		n, err := r.Read(buf)
		seen = append(seen, buf[:n]...)
		if bytes.Contains(seen, want) {
			return time.Now()
		}
		if err != nil {
			tb.Fatalf("waiting for %q: %v; read %q", want, err, tail(string(seen), 300))
		}
		if len(seen) > 1<<20 {
			seen = seen[len(seen)-len(want):]
		}
	}
}

// drain reads whatever the PTY has for a moment.
func drain(r *os.File, d time.Duration) {
	buf := make([]byte, 64<<10)
	for {
		r.SetReadDeadline(time.Now().Add(d))
		if _, err := r.Read(buf); err != nil {
			return
		}
	}
}

// keyGap is the pause between two keystrokes: 40 keys a second, faster
// than anyone types.
const keyGap = 25 * time.Millisecond

// keystrokes types n characters (each followed by a backspace) into the
// terminal behind ptm and returns the median time from writing a
// character to seeing it echoed.
func keystrokes(tb testing.TB, ptm *os.File, n int, frames bool) time.Duration {
	tb.Helper()
	buf := make([]byte, 64<<10)
	var times []time.Duration
	for i := range n {
		c := byte('a' + i%26)
		drain(ptm, keyGap)
		start := time.Now()
		if _, err := ptm.Write([]byte{c}); err != nil {
			tb.Fatal(err)
		}
		// Directly, readline echoes the character; attach redraws the
		// row, so the character comes after a space and before an escape.
		want := []byte{c}
		if frames {
			want = []byte{' ', c, 0x1b}
		}
		times = append(times, readUntil(tb, ptm, want, buf).Sub(start))
		if _, err := ptm.Write([]byte{0x7f}); err != nil {
			tb.Fatal(err)
		}
	}
	slices.Sort(times)
	return times[len(times)/2]
}

func BenchmarkAttachKeystroke(b *testing.B) {
	in := startPhantom(b)
	// Straight into a PTY: the same shell, read by the benchmark.
	direct := startOnPTY(b, append(slices.Clone(in.env.Vars), "TERM=xterm-256color"), in.env.Home, 80, 24, "/bin/bash")
	drain(direct.ptm, 300*time.Millisecond)
	// Through attach: the client on a PTY the benchmark owns.
	client := startOnPTY(b, append(slices.Clone(in.env.Vars), "TERM=xterm-256color"), in.env.Home, 80, 24, phantomBin, "attach")
	drain(client.ptm, 300*time.Millisecond)
	n := max(b.N, 20)
	b.ResetTimer()
	// Interleave the two so that both see the same machine load.
	var d, a []time.Duration
	for i := 0; i < n; i += 10 {
		d = append(d, keystrokes(b, direct.ptm, 10, false))
		a = append(a, keystrokes(b, client.ptm, 10, true))
	}
	b.StopTimer()
	md, ma := median(d), median(a)
	b.ReportMetric(float64(md.Microseconds())/1000, "ms-direct")
	b.ReportMetric(float64(ma.Microseconds())/1000, "ms-attach")
	b.ReportMetric(float64((ma-md).Microseconds())/1000, "ms-added")
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// benchFile writes PHANTOM_BENCH_MB megabytes of coloured log-like text.
func benchFile(tb testing.TB) (string, int) {
	tb.Helper()
	mb := 200
	if v := os.Getenv("PHANTOM_BENCH_MB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			tb.Fatalf("PHANTOM_BENCH_MB=%q: want a positive number of megabytes", v)
		}
		mb = n
	}
	path := filepath.Join(tb.TempDir(), "cat.txt")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewSource(1))
	words := []string{"func", "return", "err", "nil", "INFO", "WARN", "request", "handled", "12.3ms", "status=200", "漢字", "/api/v1/users"}
	for size := 0; size < mb<<20; {
		var line []byte
		if rng.Intn(2) == 0 {
			line = fmt.Appendf(line, "\x1b[38;5;%dm", rng.Intn(256))
		}
		for len(line) < 20+rng.Intn(100) {
			line = append(line, words[rng.Intn(len(words))]...)
			line = append(line, ' ')
		}
		line = append(line, "\x1b[0m\n"...)
		w.Write(line)
		size += len(line)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path, mb
}

// catScript times `cat path` from inside the terminal and writes the
// nanoseconds to out.
func catScript(path, out string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`sleep 1; s=$(date +%%s%%N); cat %s; e=$(date +%%s%%N); echo $((e-s)) > %s.tmp; mv %s.tmp %s; exec sleep 1000`, path, out, out, out)}
}

// waitNanos waits for a catScript result.
func waitNanos(tb testing.TB, out string) time.Duration {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(out); err == nil {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
			if err != nil {
				tb.Fatalf("%s: %v", out, err)
			}
			return time.Duration(n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("no result in %s", out)
	return 0
}

func BenchmarkAttachCat(b *testing.B) {
	in := startPhantom(b)
	path, mb := benchFile(b)
	dir := b.TempDir()
	env := append(slices.Clone(in.env.Vars), "TERM=xterm-256color")
	var plain, tabOnly, attached []time.Duration
	b.ResetTimer()
	for i := range b.N {
		// A plain PTY reader that discards.
		out := filepath.Join(dir, fmt.Sprint("plain", i))
		p := startOnPTY(b, env, dir, 80, 24, catScript(path, out)...)
		go func() {
			buf := make([]byte, 64<<10)
			for {
				if _, err := p.ptm.Read(buf); err != nil {
					return
				}
			}
		}()
		plain = append(plain, waitNanos(b, out))

		// A tab nobody watches.
		out = filepath.Join(dir, fmt.Sprint("tab", i))
		if _, err := in.tc.CreateTerminal(tctx(b), &terminalv1.CreateTerminalRequest{Directory: dir, Command: catScript(path, out)}); err != nil {
			b.Fatal(err)
		}
		tabOnly = append(tabOnly, waitNanos(b, out))

		// A tab with a client attached, reading as fast as it can.
		out = filepath.Join(dir, fmt.Sprint("attached", i))
		r, err := in.tc.CreateTerminal(tctx(b), &terminalv1.CreateTerminalRequest{Directory: dir, Command: catScript(path, out)})
		if err != nil {
			b.Fatal(err)
		}
		c := startOnPTY(b, env, dir, 80, 25, phantomBin, "attach", r.GetTerminal().GetId())
		go func() {
			buf := make([]byte, 64<<10)
			for {
				if _, err := c.ptm.Read(buf); err != nil {
					return
				}
			}
		}()
		attached = append(attached, waitNanos(b, out))
	}
	b.StopTimer()
	mbps := func(d time.Duration) float64 { return float64(mb) / d.Seconds() }
	b.ReportMetric(mbps(median(plain)), "MB/s-plain-pty")
	b.ReportMetric(mbps(median(tabOnly)), "MB/s-tab")
	b.ReportMetric(mbps(median(attached)), "MB/s-tab-attached")
	b.ReportMetric(median(attached).Seconds()/median(plain).Seconds(), "x-plain")
}
