package ports

import (
	"fmt"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	"github.com/phantom-dev/phantom/internal/procfs"
)

func BenchmarkDumpNetlink(b *testing.B) {
	for b.Loop() {
		if _, err := DumpNetlink(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDumpProc(b *testing.B) {
	for b.Loop() {
		if _, err := DumpProc("/proc"); err != nil {
			b.Fatal(err)
		}
	}
}

// fakeTabs lays out 100 tabs of 4 processes (shell, dev server with a
// listening socket, a setsid'd worker, a tool) with 3-5 fds each, plus 300
// processes outside any tab, in a fake /proc.
func fakeTabs(b *testing.B) (*Tracker, map[string]int, []Listener) {
	fp := newFakeProc(b)
	fp.add(1, 0, 1, 1)
	tabs := map[string]int{}
	var ls []Listener
	ino := uint64(10000)
	for i := range 100 {
		leader := 1000 + 10*i
		tabs[fmt.Sprintf("tab%d", i)] = leader
		fp.add(leader, 1, leader, 100)
		ino++
		fp.add(leader+1, leader, leader, 101, ino, ino+50000) // one listening, one connected
		ls = append(ls, lst(uint16(3000+i), ino))
		fp.add(leader+2, leader+1, leader+2, 102)
		fp.add(leader+3, leader, leader, 103)
	}
	for i := range 300 {
		ino++
		fp.add(5000+i, 1, 5000+i, 5, ino)
		ls = append(ls, lst(uint16(20000+i), ino))
	}
	tr := NewTracker(procfs.FS{Root: fp.root})
	return tr, tabs, ls
}

func BenchmarkPortsFake100Tabs(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		tr, tabs, ls := fakeTabs(b)
		tr.dump = func() ([]Listener, error) { return ls, nil }
		for b.Loop() {
			if _, err := tr.Ports(tabs); err != nil {
				b.Fatal(err)
			}
		}
		if tr.Walks() != 1 {
			b.Fatalf("walks = %d", tr.Walks())
		}
	})
	b.Run("uncached", func(b *testing.B) {
		tr, tabs, ls := fakeTabs(b)
		ls2 := append(slices.Clone(ls), lst(1, 1)) // alternate: force a walk every call
		n := 0
		tr.dump = func() ([]Listener, error) {
			n++
			if n%2 == 0 {
				return ls2, nil
			}
			return ls, nil
		}
		for b.Loop() {
			got, err := tr.Ports(tabs)
			if err != nil {
				b.Fatal(err)
			}
			if len(got) != 100 {
				b.Fatalf("%d tabs with ports", len(got))
			}
		}
		b.ReportMetric(float64(tr.Walks())/float64(b.N), "walks/op")
	})
}

// BenchmarkPortsReal100Tabs uses the real /proc and netlink with 100 real
// session leaders (sleep).
func BenchmarkPortsReal100Tabs(b *testing.B) {
	tabs := map[string]int{}
	for i := range 100 {
		cmd := exec.Command("sleep", "600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		tabs[fmt.Sprintf("tab%d", i)] = cmd.Process.Pid
	}
	b.Run("cached", func(b *testing.B) {
		tr := NewTracker(procfs.Default)
		for b.Loop() {
			if _, err := tr.Ports(tabs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(tr.Walks())/float64(b.N), "walks/op")
	})
	b.Run("uncached", func(b *testing.B) {
		tr := NewTracker(procfs.Default)
		other := map[string]int{"extra": 1}
		for k, v := range tabs {
			other[k] = v
		}
		i := 0
		for b.Loop() {
			t := tabs // alternate the tab set: forces a walk every call
			if i++; i%2 == 0 {
				t = other
			}
			if _, err := tr.Ports(t); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(tr.Walks())/float64(b.N), "walks/op")
	})
}
