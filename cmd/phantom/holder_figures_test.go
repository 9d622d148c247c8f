package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/procfs"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)

// TestHolderFigures measures what tabs that survive terminald cost and how
// soon they are usable again after `kill -9` of terminald. It prints
// figures and checks nothing about time; it runs only with
// PHANTOM_FIGURES=1:
//
//	PHANTOM_FIGURES=1 go test -run TestHolderFigures -v ./cmd/phantom/
func TestHolderFigures(t *testing.T) {
	if os.Getenv("PHANTOM_FIGURES") == "" {
		t.Skip("set PHANTOM_FIGURES=1 to measure")
	}
	in := startPhantom(t)
	h := holderPID(in.env)
	if h == 0 {
		t.Fatal("no holder runs")
	}
	waitIdle(t, in, in.list(t)[0].GetId())
	rss0, anon0 := rssKiB(t, h), procStatusKiB(t, h, "RssAnon")
	const n = 100
	for i := range n {
		// Each tab writes ~20 KB, like a shell with some history.
		newTab(t, in, "--name", fmt.Sprint("f", i), "--", "sh", "-c", `seq 1 4000; exec sleep 100000`)
	}
	for _, tm := range in.list(t) {
		if strings.HasPrefix(tm.GetName(), "f") {
			waitOutput(t, in, tm.GetId(), "4000")
		}
	}
	rss1, anon1 := rssKiB(t, h), procStatusKiB(t, h, "RssAnon")
	tdPID := func() int {
		rec, err := daemon.ReadPIDFile(in.env.Layout.PIDFile("terminald"))
		if err != nil {
			t.Fatal(err)
		}
		return rec.PID
	}
	td := tdPID()
	t.Logf("holder RSS: %d KiB with 1 tab, %d KiB with %d tabs: %.1f KiB per tab (anonymous memory %d → %d KiB; the rest is the binary's shared pages)",
		rss0, rss1, n+1, float64(rss1-rss0)/n, anon0, anon1)
	t.Logf("terminald RSS %d KiB, of it shared memory (the rings it maps) %d KiB", rssKiB(t, td), shmemKiB(t, td))

	killAndUp := func(label string) {
		t.Helper()
		td := tdPID()
		start := time.Now()
		syscall.Kill(td, syscall.SIGKILL)
		for {
			if st, err := procfs.Default.Stat(td); err != nil || st.State == 'Z' {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if out, err := in.run("up"); err != nil {
			t.Fatalf("phantom up: %v\n%s", err, out)
		}
		upDone := time.Since(start)
		tabs := in.list(t)
		for _, tm := range tabs {
			if _, err := in.tc.ReadOutput(tctx(t), &terminalv1.ReadOutputRequest{TerminalId: tm.GetId()}); err != nil {
				t.Fatal(err)
			}
		}
		usable := time.Since(start)
		restore := ""
		for _, l := range strings.Split(daemonLog(in.env), "\n") {
			if strings.Contains(l, "took back") {
				restore = l[strings.Index(l, "took="):]
			}
		}
		t.Logf("%s: %d tabs: kill -9 terminald → `phantom up` returned in %s, every tab listed and read in %s (terminald's restore: %s)",
			label, len(tabs), upDone.Round(time.Millisecond), usable.Round(time.Millisecond), restore)
	}
	defer func() {
		// Then 20 of the tabs with full rings (3 MB of output each).
		for i := range 20 {
			newTab(t, in, "--name", fmt.Sprint("full", i), "--", "sh", "-c", `head -c 3000000 /dev/zero | tr '\0' x | fold -w 100; echo full-done; exec sleep 100000`)
		}
		for _, tm := range in.list(t) {
			if strings.HasPrefix(tm.GetName(), "full") {
				waitOutput(t, in, tm.GetId(), "full-done")
			}
		}
		t.Logf("terminald shared memory with 20 full rings: %d KiB", shmemKiB(t, tdPID()))
		killAndUp("with 20 full 1 MiB rings")
	}()
	for round := range 3 {
		td = tdPID()
		start := time.Now()
		syscall.Kill(td, syscall.SIGKILL)
		for {
			if st, err := procfs.Default.Stat(td); err != nil || st.State == 'Z' {
				break
			}
			time.Sleep(time.Millisecond)
		}
		out, err := in.run("up")
		if err != nil {
			t.Fatalf("phantom up: %v\n%s", err, out)
		}
		upDone := time.Since(start)
		// Usable: every tab listed and its output readable.
		for _, tm := range in.list(t) {
			if _, err := in.tc.ReadOutput(tctx(t), &terminalv1.ReadOutputRequest{TerminalId: tm.GetId()}); err != nil {
				t.Fatal(err)
			}
		}
		usable := time.Since(start)
		restore := ""
		for _, l := range strings.Split(daemonLog(in.env), "\n") {
			if strings.Contains(l, "took back") {
				restore = l[strings.Index(l, "took="):]
			}
		}
		t.Logf("round %d: %d tabs: kill -9 terminald → `phantom up` returned in %s, every tab listed and read in %s (terminald's restore: %s)",
			round, n+1, upDone.Round(time.Millisecond), usable.Round(time.Millisecond), restore)
	}
}

func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return -1
}

func rssKiB(t *testing.T, pid int) int   { return procStatusKiB(t, pid, "VmRSS") }
func shmemKiB(t *testing.T, pid int) int { return procStatusKiB(t, pid, "RssShmem") }
