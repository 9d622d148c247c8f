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
)

// TestCLIFigures measures whole CLI commands as the human runs them, a
// process each, side by side in one run with tmux's client (issue 17):
// `phantom read -n 1000` of a 100,000-line tab against `tmux capture-pane
// -p -S -1000` of a pane with the same lines, `phantom ls` against `tmux
// list-windows`, and `phantom --help` alone (process start). Contenders
// run in alternating pairs; it logs medians, the 10th–90th percentile
// spread, the median of the per-pair ratios and the load average. Set
// PHANTOM_BENCH_BASE to another phantom binary (a build of an earlier
// commit) to measure it in the same pairs. Nothing in it depends on
// timing. Set PHANTOM_BENCH=1 to run it.
func TestCLIFigures(t *testing.T) {
	if os.Getenv("PHANTOM_BENCH") == "" {
		t.Skip("set PHANTOM_BENCH=1 to measure")
	}
	const lines = "seq 100000; exec sleep 100000"
	env, _ := up(t)
	tab := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c", lines))
	eventually(t, "the tab's 100,000 lines", func() (bool, string) {
		out := mustPhantom(t, env, "read", tab, "-n", "1")
		return strings.TrimSpace(out) == "100000", out
	})

	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g history-limit 200000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) *exec.Cmd {
		c := exec.Command("tmux", append([]string{"-S", sock, "-f", conf}, args...)...)
		c.Env = env.Vars
		return c
	}
	if out, err := tmux("new-session", "-d", "-x", "80", "-y", "24", "sh -c '"+lines+"'").CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { tmux("kill-server").Run() })
	eventually(t, "tmux's pane to hold the 100,000 lines", func() (bool, string) {
		out, _ := tmux("capture-pane", "-p", "-S", "-1000").Output()
		return strings.Contains(string(out), "100000\n"), string(out)
	})

	bins := []string{phantomBin}
	if base := os.Getenv("PHANTOM_BENCH_BASE"); base != "" {
		bins = append(bins, base)
	}
	phantomCmd := func(bin string, args ...string) func() *exec.Cmd {
		return func() *exec.Cmd {
			c := exec.Command(bin, args...)
			c.Env, c.Dir = env.Vars, env.Home
			return c
		}
	}
	tmuxCmd := func(args ...string) func() *exec.Cmd { return func() *exec.Cmd { return tmux(args...) } }
	groups := []struct {
		name       string
		contenders []cliContender
	}{
		{"read -n 1000 of 100k lines", nil},
		{"ls", nil},
		{"--help", nil},
	}
	for i, bin := range bins {
		label := "phantom"
		if i > 0 {
			label = "phantom (base)"
		}
		groups[0].contenders = append(groups[0].contenders, cliContender{label + " read -n 1000", phantomCmd(bin, "read", tab, "-n", "1000")})
		groups[1].contenders = append(groups[1].contenders, cliContender{label + " ls", phantomCmd(bin, "ls")})
		groups[2].contenders = append(groups[2].contenders, cliContender{label + " --help", phantomCmd(bin, "--help")})
	}
	groups[0].contenders = append(groups[0].contenders, cliContender{"tmux capture-pane -p -S -1000", tmuxCmd("capture-pane", "-p", "-S", "-1000")})
	groups[1].contenders = append(groups[1].contenders, cliContender{"tmux list-windows", tmuxCmd("list-windows")})

	const rounds = 60
	load0, _ := os.ReadFile("/proc/loadavg")
	var report strings.Builder
	for _, g := range groups {
		times := make([][]time.Duration, len(g.contenders))
		cpus := make([][]time.Duration, len(g.contenders))
		for r := 0; r < rounds+3; r++ {
			// Alternate who goes first, so neither always follows the
			// other's cache effects.
			order := make([]int, len(g.contenders))
			for i := range order {
				order[i] = (i + r) % len(order)
			}
			for _, i := range order {
				d, cpu := timeCommand(t, g.contenders[i].cmd())
				if r >= 3 { // the first rounds warm the page cache
					times[i] = append(times[i], d)
					cpus[i] = append(cpus[i], cpu)
				}
			}
		}
		fmt.Fprintf(&report, "\n%s (%d rounds):\n", g.name, rounds)
		last := len(g.contenders) - 1
		for i, c := range g.contenders {
			med, lo, hi := cliQuantiles(times[i])
			fmt.Fprintf(&report, "  %-34s median %6.2f ms  (p10 %5.2f, p90 %5.2f)", c.name, millis(med), millis(lo), millis(hi))
			if i != last && strings.HasPrefix(g.contenders[last].name, "tmux") {
				ratios := make([]float64, rounds)
				for k := range ratios {
					ratios[k] = float64(times[i][k]) / float64(times[last][k])
				}
				slices.Sort(ratios)
				tmuxMed, _, _ := cliQuantiles(times[last])
				fmt.Fprintf(&report, "  %.2fx tmux (pairs: p10 %.2fx, median %.2fx, p90 %.2fx)",
					float64(med)/float64(tmuxMed), ratios[rounds/10], ratios[rounds/2], ratios[rounds*9/10])
			}
			cpuMed, _, _ := cliQuantiles(cpus[i])
			fmt.Fprintf(&report, "\n  %-34s CPU    %6.2f ms (the client process alone)\n", "", millis(cpuMed))
		}
	}
	load1, _ := os.ReadFile("/proc/loadavg")
	t.Logf("whole-command CLI times, a process each:%s\nload average before %s         after %s",
		report.String(), strings.TrimSpace(string(load0)), strings.TrimSpace(string(load1)))
}

// cliContender is one command a figure times: cmd makes a fresh process.
type cliContender struct {
	name string
	cmd  func() *exec.Cmd
}

// timeCommand runs c to its end, its output discarded, and returns how long
// it took from start to exit and the CPU time (user and system) the
// process itself used, which is steadier on a loaded machine (a server's
// share, terminald's or tmux's, is not in it).
func timeCommand(t *testing.T, c *exec.Cmd) (wall, cpu time.Duration) {
	t.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	c.Stdout, c.Stderr = devnull, devnull // a file: no copying goroutine in the way
	start := time.Now()
	if err := c.Run(); err != nil {
		t.Fatalf("%s: %v", strings.Join(c.Args, " "), err)
	}
	return time.Since(start), c.ProcessState.UserTime() + c.ProcessState.SystemTime()
}

// cliQuantiles returns the median, 10th and 90th percentiles of ds.
func cliQuantiles(ds []time.Duration) (med, lo, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)/10], s[len(s)*9/10]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
