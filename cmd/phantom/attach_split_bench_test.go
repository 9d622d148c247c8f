package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestAttachSplitCatFigure measures what splits cost a tab under heavy
// output: `cat` of a PHANTOM_BENCH_MB (default 200) megabyte file of
// coloured text in one pane of four, with an attached client reading as
// fast as it can, against the same cat in one unsplit tab and in one of
// four tmux panes, side by side in one run. It only reports (t.Log);
// nothing is timed for pass or fail. Run it with
//
//	PHANTOM_BENCH=1 go test ./cmd/phantom -run TestAttachSplitCatFigure -v -timeout 30m
func TestAttachSplitCatFigure(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") != "1" {
		t.Skip("a figure, not a test: set PHANTOM_BENCH=1")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (scripts/setup installs it)")
	}
	in := startPhantom(t)
	path, mb := benchFile(t)
	dir := t.TempDir()
	env := append(slices.Clone(in.env.Vars), "TERM=xterm-256color")
	const cols, rows = 161, 49
	// discard reads what p writes as fast as it can, keeping the start
	// for a failure's report.
	var mu sync.Mutex
	var head []byte
	discard := func(p *ptyProc) {
		go func() {
			buf := make([]byte, 64<<10)
			for {
				n, err := p.ptm.Read(buf)
				mu.Lock()
				if len(head) < 4096 {
					head = append(head, buf[:n]...)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	// gatedCat is catScript that waits for the file go to appear, so the
	// panes can be laid out first.
	headOut := func() string {
		mu.Lock()
		defer mu.Unlock()
		return string(head)
	}
	gatedCat := func(out, gate string) []string {
		return []string{"sh", "-c", fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.05; done; s=$(date +%%s%%N); cat %s; e=$(date +%%s%%N); echo $((e-s)) > %s.tmp; mv %s.tmp %s; exec sleep 1000`, gate, path, out, out, out)}
	}
	tabSize := func(id string) (int32, int32) {
		for _, tm := range in.list(t) {
			if tm.GetId() == id {
				return tm.GetCols(), tm.GetRows()
			}
		}
		return 0, 0
	}

	// tabInNewWindow opens a tab running argv in a window of its own:
	// splits belong to a window, so each run starts from one without.
	tabInNewWindow := func(name string, argv []string) *terminalv1.CreateTerminalResponse {
		w, err := in.tc.CreateWindow(tctx(t), &terminalv1.CreateWindowRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		r, err := in.tc.CreateTerminal(tctx(t), &terminalv1.CreateTerminalRequest{Directory: dir, Command: argv, WindowId: w.GetWindow().GetId()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	// One unsplit tab with a client attached.
	unsplit := func(i int) time.Duration {
		out, gate := filepath.Join(dir, fmt.Sprint("unsplit", i)), filepath.Join(dir, fmt.Sprint("gate-unsplit", i))
		r := tabInNewWindow(fmt.Sprint("unsplit", i), gatedCat(out, gate))
		c := startOnPTY(t, env, dir, cols, rows, phantomBin, "attach", r.GetTerminal().GetId())
		discard(c)
		eventually(t, "the tab at the client's size", func() (bool, string) {
			w, h := tabSize(r.GetTerminal().GetId())
			return w == cols && h == rows-1, fmt.Sprintf("%dx%d", w, h)
		})
		os.WriteFile(gate, nil, 0o600)
		d := waitNanos(t, out)
		c.cmd.Process.Kill()
		return d
	}

	// The same tab in the top left of four panes (two columns of two).
	split := func(i int) time.Duration {
		out, gate := filepath.Join(dir, fmt.Sprint("split", i)), filepath.Join(dir, fmt.Sprint("gate-split", i))
		r := tabInNewWindow(fmt.Sprint("split", i), gatedCat(out, gate))
		id := r.GetTerminal().GetId()
		before := len(in.list(t))
		mu.Lock()
		head = nil
		mu.Unlock()
		c := startOnPTY(t, env, dir, cols, rows, phantomBin, "attach", id)
		discard(c)
		// Keys only once attach has the terminal in raw mode: before, the
		// prefix (Ctrl-\\) would be the terminal's SIGQUIT.
		eventually(t, "the tab at the client's size", func() (bool, string) {
			w, h := tabSize(id)
			return w == cols && h == rows-1, fmt.Sprintf("%dx%d", w, h)
		})
		for _, keys := range []string{prefix + "%", prefix + `"`, prefix + "\x1b[D", prefix + `"`, prefix + "\x1b[A"} {
			c.ptm.Write([]byte(keys))
			time.Sleep(300 * time.Millisecond) // one layout change at a time
		}
		eventually(t, "three more tabs and the cat tab in a quarter", func() (bool, string) {
			w, h := tabSize(id)
			return len(in.list(t)) == before+3 && w == 80 && h == 24, fmt.Sprintf("%d tabs (before %d), cat tab %dx%d; the client wrote %q", len(in.list(t)), before, w, h, headOut())
		})
		os.WriteFile(gate, nil, 0o600)
		d := waitNanos(t, out)
		c.cmd.Process.Kill()
		return d
	}

	// tmux: the same four panes, a client attached reading as fast as it
	// can.
	tmuxRun := func(i int) time.Duration {
		out, gate := filepath.Join(dir, fmt.Sprint("tmux", i)), filepath.Join(dir, fmt.Sprint("gate-tmux", i))
		sock := filepath.Join(dir, fmt.Sprint("tmux", i, ".sock"))
		tm := func(args ...string) {
			cmd := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
			cmd.Env, cmd.Dir = env, dir
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, b)
			}
		}
		tm(append([]string{"new-session", "-d", "-s", "b", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows)}, gatedCat(out, gate)...)...)
		t.Cleanup(func() { exec.Command(tmux, "-S", sock, "kill-server").Run() })
		c := startOnPTY(t, env, dir, cols, rows, tmux, "-S", sock, "attach", "-t", "b")
		discard(c)
		tm("split-window", "-h", "-t", "b:0.0")
		tm("split-window", "-v", "-t", "b:0.1")
		tm("split-window", "-v", "-t", "b:0.0")
		tm("select-pane", "-t", "b:0.0")
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(gate, nil, 0o600)
		d := waitNanos(t, out)
		c.cmd.Process.Kill()
		return d
	}

	// Interleaved, so that all three see the same machine load.
	var us, ss, ts []time.Duration
	for i := range 3 {
		us = append(us, unsplit(i))
		ss = append(ss, split(i))
		ts = append(ts, tmuxRun(i))
	}
	mbps := func(ds []time.Duration) float64 { return float64(mb) / median(ds).Seconds() }
	u, s, x := mbps(us), mbps(ss), mbps(ts)
	t.Logf("cat of %d MB, client %dx%d, runs %v / %v / %v", mb, cols, rows, us, ss, ts)
	t.Logf("MB/s: unsplit tab %.1f, one of 4 phantom panes %.1f, one of 4 tmux panes %.1f", u, s, x)
	t.Logf("4 splits vs unsplit: %.2fx the throughput; vs tmux 4 panes: %.2fx", s/u, s/x)
}
