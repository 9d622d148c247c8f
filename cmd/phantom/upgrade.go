package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/phantom-dev/phantom/internal/daemon"
	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/terminald"
)

// handoverTimeout bounds how long upgrade waits for the old terminald to
// leave its tabs to the holder and exit.
const handoverTimeout = 15 * time.Second

func upgradeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "upgrade",
		Short: "Restart terminald on the phantom binary now on disk; every tab keeps running",
		Long: `Hand terminald's tabs to the holder and start terminald again from the
phantom binary on disk (after a rebuild or a package upgrade). Every shell,
agent and running command keeps running; tab ids, names, groups and windows
stay; attach clients and MCP bridges reconnect by themselves.

The holder (the small process that parents the tabs' programs) is not
replaced: it keeps running from the binary it started from. The other
daemons are not restarted either; phantom down && phantom up restarts
everything, hanging up every tab.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			if err := refuseInside(l, "upgrade Phantom"); err != nil {
				return err
			}
			lk, err := lockInstance(l, "upgrade")
			if err != nil {
				return err
			}
			defer lk.unlock()
			addr := l.DaemonAddr("terminald")
			holders := instanceProcesses(l, lineage.HolderByCommandLine(addr))
			if len(holders) == 0 {
				return errors.New("no holder runs for this instance, so terminald's tabs would end with it; `phantom down && phantom up` restarts everything (hanging up every tab)")
			}
			old, err := daemon.ReadPIDFile(l.PIDFile("terminald"))
			if err == nil && instanceDaemon(l, "terminald", old) == nil {
				if err := handOver(old); err != nil {
					return err
				}
				fmt.Printf("terminald (pid %d) left its tabs to the holder (pid %d)\n", old.PID, holders[0])
			}
			if _, err := startDaemon(l, "terminald", false); err != nil {
				return err
			}
			if err := waitGatewaySees(l); err != nil {
				return err
			}
			fmt.Printf("terminald upgraded; the holder (pid %d) was not replaced\n", holders[0])
			return nil
		},
	}
}

// handOver sends terminald the hand-over signal through a pidfd (so that
// a reused pid is never signalled) and waits for it to exit.
func handOver(rec daemon.PIDRecord) error {
	pidfd, err := unix.PidfdOpen(rec.PID, 0)
	if err != nil {
		return fmt.Errorf("open terminald (pid %d): %w", rec.PID, err)
	}
	defer unix.Close(pidfd)
	if !rec.Alive() {
		return nil
	}
	if err := unix.PidfdSendSignal(pidfd, terminald.HandoverSignal, nil, 0); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return fmt.Errorf("signal terminald (pid %d) to hand over: %w", rec.PID, err)
	}
	if !waitExit(rec, pidfd, true, handoverTimeout) {
		return fmt.Errorf("terminald (pid %d) did not hand over within %s; it still runs with the tabs", rec.PID, handoverTimeout)
	}
	return nil
}

// instanceProcesses lists the processes is recognises that run outside
// the instance of l: one an agent started inside it is not the
// instance's.
func instanceProcesses(l paths.Layout, is lineage.IsTerminald) []int {
	stats, err := procfs.Default.AllStats()
	if err != nil {
		return nil
	}
	tree := lineage.Instance(l)
	var out []int
	for _, st := range stats {
		if st.PID == os.Getpid() || !is(procfs.Default, st) {
			continue
		}
		if p, err := tree.Locate(st.PID); err == nil && !p.Inside {
			out = append(out, st.PID)
		}
	}
	return out
}

// stopHolder stops the instance's holder when one is left, as after a
// terminald that died: it hangs up every tab and kills what is left of
// them. (A terminald stopped by down has already stopped it.)
func stopHolder(l paths.Layout) error {
	for _, pid := range instanceProcesses(l, lineage.HolderByCommandLine(l.DaemonAddr("terminald"))) {
		st, err := procfs.Default.Stat(pid)
		if err != nil {
			continue
		}
		rec := daemon.PIDRecord{PID: pid, Start: st.StartTime}
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if rec.Alive() && unix.PidfdSendSignal(pidfd, syscall.SIGTERM, nil, 0) == nil {
			if !waitExit(rec, pidfd, true, stopTimeout) {
				_ = unix.PidfdSendSignal(pidfd, syscall.SIGKILL, nil, 0)
			}
			fmt.Printf("stopped holder (pid %d)\n", pid)
		}
		unix.Close(pidfd)
	}
	return nil
}
