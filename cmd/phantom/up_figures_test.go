package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// promptMark is a bash start-up file that says when the shell is about to
// print its first prompt: PROMPT_COMMAND runs just before the prompt, and
// the first run opens the FIFO named by $UP_MARK, which the measuring
// side is blocked reading. Phantom's shell integration keeps the user's
// PROMPT_COMMAND; tmux's login shell reads it through .bash_profile.
const promptMark = `__up_mark() { if [ -n "${UP_MARK-}" ]; then : > "$UP_MARK"; unset UP_MARK; fi; }
PROMPT_COMMAND=__up_mark
PS1='$ '
`

// TestUpFigures measures the time from exec of `phantom up` on a fresh
// instance to the first tab's first prompt, side by side with
// `tmux new-session -d` to its first prompt, in alternating pairs, with
// the same bash and start-up files. It also prints when `phantom up`
// returned (every daemon serving, the gateway seeing them all).
// PHANTOM_BENCH=1 to run it; PHANTOM_BENCH_PAIRS sets the number of pairs
// (default 10). PHANTOM_BENCH_BASELINE=PATH adds an older phantom binary
// to each round, for a before-and-after in the same run.
func TestUpFigures(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux to compare with")
	}
	pairs := 10
	if v := os.Getenv("PHANTOM_BENCH_PAIRS"); v != "" {
		if pairs, err = strconv.Atoi(v); err != nil || pairs < 1 {
			t.Fatalf("PHANTOM_BENCH_PAIRS=%q: want a positive number", v)
		}
	}
	baseline := os.Getenv("PHANTOM_BENCH_BASELINE")
	var ph, phUp, tm, base, baseUp []time.Duration
	for i := range pairs {
		round := []func(){
			func() {
				prompt, returned := upToPrompt(t, phantomBin)
				ph, phUp = append(ph, prompt), append(phUp, returned)
			},
			func() { tm = append(tm, tmuxToPrompt(t, tmux)) },
		}
		if baseline != "" {
			round = append(round, func() {
				prompt, returned := upToPrompt(t, baseline)
				base, baseUp = append(base, prompt), append(baseUp, returned)
			})
		}
		if i%2 == 1 {
			slices.Reverse(round)
		}
		for _, run := range round {
			run()
		}
	}
	row := func(name string, ds []time.Duration) {
		s := slices.Clone(ds)
		slices.Sort(s)
		t.Logf("%-34s median %8s  spread %s – %s", name, msOf(s[len(s)/2]), msOf(s[0]), msOf(s[len(s)-1]))
	}
	t.Logf("start to first prompt, %d alternating pairs, load average %s", pairs, loadAvg1())
	row("phantom up → first prompt", ph)
	row("tmux new-session -d → first prompt", tm)
	row("phantom up returned", phUp)
	if baseline != "" {
		row("baseline up → first prompt", base)
		row("baseline up returned", baseUp)
	}
	t.Logf("ratio phantom/tmux (medians): %.1fx", float64(median(slices.Clone(ph)))/float64(median(slices.Clone(tm))))
}

// markedHome makes env's home start bash with promptMark, and a FIFO for
// it to open; it returns the FIFO.
func markedHome(t *testing.T, home string) string {
	t.Helper()
	for name, text := range map[string]string{".bashrc": promptMark, ".bash_profile": ". ~/.bashrc\n"} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(home, "prompt.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// awaitMark returns a channel that receives the time the FIFO was opened
// by the shell's first prompt. It gives up, and unblocks its reader, after
// a minute.
func awaitMark(t *testing.T, fifo string) <-chan time.Time {
	t.Helper()
	at := make(chan time.Time, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_RDONLY, 0)
		at <- time.Now()
		if err == nil {
			f.Close()
		}
	}()
	t.Cleanup(func() {
		// Unblock the reader if no shell ever opened the FIFO.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return at
}

// waitMark waits for at, failing the test after a minute.
func waitMark(t *testing.T, at <-chan time.Time, what string) time.Time {
	t.Helper()
	select {
	case when := <-at:
		return when
	case <-time.After(time.Minute):
		t.Fatalf("%s: no prompt within a minute", what)
		return time.Time{}
	}
}

// upToPrompt runs `bin up` on a fresh instance and returns the time
// to the first tab's first prompt and to up's return; then stops it.
func upToPrompt(t *testing.T, bin string) (prompt, returned time.Duration) {
	t.Helper()
	env := testenv.New(t)
	at := awaitMark(t, markedHome(t, env.Home))
	vars := append(append([]string(nil), env.Vars...), "SHELL=/bin/bash", "UP_MARK="+filepath.Join(env.Home, "prompt.fifo"))
	c := exec.Command(bin, "up")
	c.Env, c.Dir = vars, env.Home
	start := time.Now()
	out, err := c.CombinedOutput()
	returned = time.Since(start)
	defer runBinIn(t, bin, env, env.Home, nil, "down")
	if err != nil {
		t.Fatalf("phantom up: %v\n%s", err, out)
	}
	return waitMark(t, at, "phantom up").Sub(start), returned
}

// tmuxToPrompt starts a tmux server with a detached session on a private
// socket and returns the time to its first prompt; then kills it.
func tmuxToPrompt(t *testing.T, tmux string) time.Duration {
	t.Helper()
	home := t.TempDir()
	at := awaitMark(t, markedHome(t, home))
	sock := filepath.Join(home, "tmux.sock")
	vars := append(os.Environ(), "HOME="+home, "SHELL=/bin/bash", "UP_MARK="+filepath.Join(home, "prompt.fifo"))
	c := exec.Command(tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d")
	c.Env, c.Dir = vars, home
	start := time.Now()
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	d := waitMark(t, at, "tmux").Sub(start)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = exec.CommandContext(ctx, tmux, "-S", sock, "kill-server").Run()
	return d
}
