package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/screen"
)

// TestAttachEchoFigures measures keystroke echo the way a human feels it:
// a key written to the outer terminal (the PTY master a terminal emulator
// would hold) until its echo is back on that terminal's screen, for a
// program that echoes what it reads (cat on a raw TTY), run three ways:
// on a PTY read directly, in a Phantom tab shown by `phantom attach`, and
// in a tmux pane shown by `tmux attach`. Samples are interleaved so that
// all three see the same machine load. It only reports (t.Log); nothing
// is timed for pass or fail. Run it with
//
//	PHANTOM_BENCH=1 go test ./cmd/phantom -run TestAttachEchoFigures -v
func TestAttachEchoFigures(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") != "1" {
		t.Skip("a figure, not a test: set PHANTOM_BENCH=1")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (scripts/setup installs it)")
	}
	in := startPhantom(t)
	dir := t.TempDir()
	env := append(slices.Clone(in.env.Vars), "TERM=xterm-256color")
	const cols, rows = 80, 25
	// The echoing program: every byte read is written back at once (the
	// TTY is raw, so a carriage return only moves the cursor home).
	echo := []string{"sh", "-c", "stty raw -echo; exec cat"}

	direct := newEchoTerm(startOnPTY(t, env, dir, cols, rows-1, echo...), cols, rows-1)

	r, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: dir, Command: echo})
	if err != nil {
		t.Fatal(err)
	}
	attached := newEchoTerm(startOnPTY(t, env, dir, cols, rows, phantomBin, "attach", r.GetTerminal().GetId()), cols, rows)

	sock := filepath.Join(dir, "tmux.sock")
	tm := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "e", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows)}, echo...)...)
	tm.Env, tm.Dir = env, dir
	if b, err := tm.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, b)
	}
	t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
	viaTmux := newEchoTerm(startOnPTY(t, env, dir, cols, rows, tmux, "-S", sock, "attach", "-t", "e"), cols, rows)

	terms := []*echoTerm{direct, attached, viaTmux}
	names := []string{"direct PTY", "phantom attach", "tmux attach"}
	// Warm up: every path has drawn its first frame and echoes.
	for _, e := range terms {
		e.settle()
		for range 5 {
			e.sample(t)
		}
	}
	const n = 300
	times := make([][]time.Duration, len(terms))
	load := loadAverage()
	for i := range n {
		// A different order each round: none always goes first.
		for k := range terms {
			j := (i + k) % len(terms)
			times[j] = append(times[j], terms[j].sample(t))
		}
	}
	load = (load + loadAverage()) / 2
	var lines []string
	med0 := quantile(times[0], 0.5)
	for j, ts := range times {
		med, p99 := quantile(ts, 0.5), quantile(ts, 0.99)
		added := ""
		if j > 0 {
			added = fmt.Sprintf(", added over direct %.3f ms", ms(med-med0))
		}
		lines = append(lines, fmt.Sprintf("%-15s median %.3f ms, p99 %.3f ms%s", names[j], ms(med), ms(p99), added))
	}
	t.Logf("keystroke echo, %d interleaved samples each, load average %.2f:\n%s", n, load, strings.Join(lines, "\n"))
}

// echoTerm is an outer terminal: the PTY master of a program (the echo
// program itself, or an attach client showing it), read into a screen
// model as a terminal emulator would.
type echoTerm struct {
	p    *ptyProc
	scr  *screen.Screen
	buf  []byte
	next byte // the key to type next
}

func newEchoTerm(p *ptyProc, cols, rows int) *echoTerm {
	return &echoTerm{p: p, scr: screen.New(screen.Options{Cols: cols, Rows: rows}), buf: make([]byte, 64<<10), next: 'a'}
}

// settle reads what the terminal shows for a moment: the first frame.
func (e *echoTerm) settle() {
	for {
		e.p.ptm.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := e.p.ptm.Read(e.buf)
		e.scr.Write(e.buf[:n])
		if err != nil {
			return
		}
	}
}

// sample types one key and returns the time until the screen shows it in
// the top left corner; then it types a carriage return, which brings the
// cursor back there for the next key, and waits for that too.
func (e *echoTerm) sample(t *testing.T) time.Duration {
	t.Helper()
	c := e.next
	e.next = 'a' + (e.next-'a'+1)%26
	start := time.Now()
	if _, err := e.p.ptm.Write([]byte{c}); err != nil {
		t.Fatal(err)
	}
	e.await(t, func() bool { return e.corner() == rune(c) })
	d := time.Since(start)
	if _, err := e.p.ptm.Write([]byte{'\r'}); err != nil {
		t.Fatal(err)
	}
	e.await(t, func() bool { c := e.scr.Cursor(); return c.X == 0 && c.Y == 0 })
	// A pause between keys, as between a human's (40 keys a second is
	// faster than anyone types), and for anything still in flight.
	time.Sleep(keyGap)
	return d
}

// corner is the rune shown in the top left corner.
func (e *echoTerm) corner() rune {
	if row := e.scr.Row(0); len(row) > 0 {
		return row[0].Rune
	}
	return 0
}

// await reads into the screen until cond holds.
func (e *echoTerm) await(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		e.p.ptm.SetReadDeadline(deadline)
		n, err := e.p.ptm.Read(e.buf)
		e.scr.Write(e.buf[:n])
		if err != nil && !cond() {
			t.Fatalf("waiting for the echo: %v; the terminal shows %q", err, rowText(e.scr.Row(0)))
		}
	}
}

// quantile is the q-quantile of ds (sorted in place).
func quantile(ds []time.Duration, q float64) time.Duration {
	slices.Sort(ds)
	return ds[min(int(float64(len(ds))*q), len(ds)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadAverage is the one-minute load average, or -1 when unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var v float64
	if _, err := fmt.Sscan(string(b), &v); err != nil {
		return -1
	}
	return v
}
