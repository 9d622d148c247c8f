package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
	"github.com/phantom-dev/phantom/terminald/holder"
)

// holderCmd is `phantom +holder`: the small process that parents every
// tab's program and keeps its PTY and output ring while terminald
// restarts (terminald/holder). terminald starts it when none runs; `phantom
// down` stops it (through terminald, or by signal when terminald is gone).
func holderCmd() *cobra.Command {
	var terminaldAddr, socket, lock string
	var background bool
	cmd := &cobra.Command{
		Use:    "+holder",
		Short:  "Hold the tabs' terminals and processes across terminald restarts (terminald starts it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := paths.Default()
			if err != nil {
				return err
			}
			if terminaldAddr == "" {
				terminaldAddr = l.DaemonAddr("terminald")
			}
			if socket == "" {
				socket = holder.Socket(l.Runtime)
			}
			if lock == "" {
				lock = holder.LockFile(l.Runtime)
			}
			if background {
				// Start the real holder in its own session and return, so
				// that it is nobody's child but init's (or the nearest
				// subreaper's): not terminald's, whose crash it must
				// outlive, and not inside anything.
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("start the holder: find own executable: %w", err)
				}
				c := exec.Command(exe, "+holder", "--terminald", terminaldAddr, "--socket", socket, "--lock", lock)
				c.Stdout, c.Stderr = os.Stdout, os.Stderr
				c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				if err := c.Start(); err != nil {
					return fmt.Errorf("start the holder: %w", err)
				}
				return c.Process.Release()
			}
			// A holder started inside the instance's holder is an agent's:
			// refused here, and refused by terminald if it got this far.
			// (The check is against the holder only: terminald itself
			// starts this command, through --background.)
			p, err := lineage.Tree{FS: procfs.Default, IsTerminald: lineage.HolderByCommandLine(terminaldAddr)}.Locate(os.Getpid())
			if err != nil {
				return fmt.Errorf("cannot tell whether this process runs inside Phantom, so it will not run a holder: %w", err)
			}
			if p.Inside {
				return fmt.Errorf("this process runs inside Phantom (under the holder, pid %d): it will not run another holder", p.Terminald.PID)
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
			err = holder.Serve(context.Background(), holder.Options{Socket: socket, Lock: lock, TerminaldAddr: terminaldAddr, Logger: logger})
			if errors.Is(err, holder.ErrRunning) {
				return nil // the one that runs serves the instance
			}
			return err
		},
	}
	cmd.Flags().StringVar(&terminaldAddr, "terminald", "", "the instance's terminald address (the only peer served)")
	cmd.Flags().StringVar(&socket, "socket", "", "socket path (default: holder.sock in the runtime directory)")
	cmd.Flags().StringVar(&lock, "lock", "", "lock file (default: holder.lock in the runtime directory)")
	cmd.Flags().BoolVar(&background, "background", false, "start the holder in the background and return")
	return cmd
}
