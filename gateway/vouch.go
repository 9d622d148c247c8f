package gateway

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// vouched is what a vouch line said: the process a sandbox's connect gate
// connected for (peercred.VouchLine).
type vouched struct {
	pid   int
	start uint64
}

// vouchee checks a vouch from the socket's peer, monitor: that it is the
// monitor of a sandboxed tab — the very process the holder started as the
// tab's leader, which stays outside the sandbox and performs its connects
// (terminald/sandbox/gate) — and that the process it vouches for descends
// from it. It returns that process, placed.
type vouchee func(monitor int, v vouched) (guard.Caller, error)

// instanceVouchee checks vouches in the instance whose terminald serves
// addr.
//
// Why the leader, and only it: a process of the sandbox can write any line
// on a socket it connected itself, and can even run `phantom +sandbox
// --isolate` so that its command line looks like a monitor's; it cannot be
// the process terminald recorded as a tab's leader (pid and start time),
// and a vouch from a leader names only that leader's descendants, so the
// most it could claim is its own tab.
func instanceVouchee(addr string, bs *backends) vouchee {
	tree := lineage.Tree{FS: procfs.Default, IsTerminald: lineage.ByCommandLine(addr, addr)}
	return func(monitor int, v vouched) (guard.Caller, error) {
		b, err := bs.get("terminald")
		if err != nil {
			return guard.Caller{}, err
		}
		tabs := guard.TabsOn(b.cc)
		mp, err := tree.Locate(monitor)
		if err != nil {
			return guard.Caller{}, err
		}
		if !mp.Inside || mp.Top.PID != monitor || !isMonitor(monitor) {
			return guard.Caller{}, fmt.Errorf("process %d, which sent the vouch, is not the sandbox monitor of a tab", monitor)
		}
		tab, err := tabs.TabOf(context.Background(), monitor, mp)
		if err != nil || tab == "" {
			return guard.Caller{}, fmt.Errorf("process %d, which sent the vouch, leads no tab of this Phantom", monitor)
		}
		pidfd, err := unix.PidfdOpen(v.pid, 0)
		if err != nil {
			return guard.Caller{}, fmt.Errorf("the vouched-for process %d is gone: %w", v.pid, err)
		}
		defer unix.Close(pidfd)
		vp, err := tree.Locate(v.pid)
		switch {
		case err != nil:
			return guard.Caller{}, err
		case vp.Self.StartTime != v.start:
			return guard.Caller{}, fmt.Errorf("process %d started at tick %d, not %d as vouched: its pid was reused", v.pid, vp.Self.StartTime, v.start)
		case !vp.Inside || vp.Top.PID != monitor || vp.Top.StartTime != mp.Self.StartTime:
			return guard.Caller{}, fmt.Errorf("process %d does not run below the monitor %d that vouched for it", v.pid, monitor)
		}
		if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
			return guard.Caller{}, fmt.Errorf("the vouched-for process %d is gone: %w", v.pid, err)
		}
		return guard.Caller{Inside: true, ForAgent: true, PID: v.pid, StartTime: v.start, TabID: tab}, nil
	}
}

// isMonitor reports whether process pid runs the sandbox launcher with
// walls: `phantom +sandbox --isolate … -- PROGRAM`, which stays as monitor.
func isMonitor(pid int) bool {
	argv, err := procfs.Default.Cmdline(pid)
	if err != nil || len(argv) < 3 || argv[1] != sandbox.Command {
		return false
	}
	end := slices.Index(argv, "--")
	if end < 0 {
		end = len(argv)
	}
	return slices.Contains(argv[2:end], "--isolate")
}
