package tabident

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/internal/tabstate"
	"github.com/phantom-dev/phantom/terminald/pty"
)

// startTab starts a shell on a new PTY in its own session, as terminald
// does, whose child leaves the session with setsid; it returns the tab's
// state and the pids of the child that stayed and the one that left.
func startTab(t *testing.T) (st tabstate.State, inSession, escaped int) {
	t.Helper()
	m, s, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	cmd := exec.Command("sh", "-c", "sleep 100 & setsid sleep 101 & wait")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	leader, err := procfs.ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	st = tabstate.State{Version: tabstate.Version, TabID: "t1", PTY: s.Name(), TTYNr: uint64(leader.TTYNr),
		Session: leader.Session, LeaderPID: leader.PID, LeaderStart: leader.StartTime}
	deadline := time.Now().Add(5 * time.Second)
	for (inSession == 0 || escaped == 0) && time.Now().Before(deadline) {
		stats, _ := procfs.Default.AllStats()
		for _, p := range stats {
			if p.PPID == leader.PID && p.Comm == "sleep" {
				if p.Session == leader.Session {
					inSession = p.PID
				} else {
					escaped = p.PID
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if inSession == 0 || escaped == 0 {
		t.Fatal("the tab's children did not start")
	}
	return st, inSession, escaped
}

func TestVerify(t *testing.T) {
	st, inSession, escaped := startTab(t)
	stale := st
	stale.LeaderStart++
	otherTab, _, _ := startTab(t)
	for _, tc := range []struct {
		name string
		st   tabstate.State
		pid  int
		ok   bool
	}{
		{"leader", st, st.LeaderPID, true},
		{"child in the session", st, inSession, true},
		{"child that left the session", st, escaped, true},
		{"process outside the tab", st, os.Getpid(), false},
		{"pid 0", st, 0, false},
		{"leader pid reused (start time differs)", stale, inSession, false},
		{"claiming another tab", otherTab, inSession, false},
		{"claiming another tab from outside the session", otherTab, escaped, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(procfs.Default, tc.st, tc.pid)
			if (err == nil) != tc.ok {
				t.Fatalf("Verify = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrNotInTab) {
				t.Errorf("error %v is not ErrNotInTab", err)
			}
		})
	}
}

func TestFind(t *testing.T) {
	st, inSession, _ := startTab(t)
	dir := t.TempDir()
	if err := tabstate.Write(tabstate.Path(dir, st.TabID), st); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := Find(procfs.Default, dir, inSession); err != nil || !ok || got.TabID != st.TabID {
		t.Errorf("Find(tab child) = %v, %v, %v; want tab %s", got, ok, err, st.TabID)
	}
	if _, ok, err := Find(procfs.Default, dir, os.Getpid()); err != nil || ok {
		t.Errorf("Find(test process) = %v, %v; want not in a tab", ok, err)
	}
	if _, ok, err := Find(procfs.Default, dir+"/missing", inSession); err != nil || ok {
		t.Errorf("Find with no tab dir = %v, %v; want not in a tab, no error", ok, err)
	}
}
