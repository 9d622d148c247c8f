package workspace

import (
	"errors"
	"os/exec"
	"syscall"

	"github.com/phantom-dev/phantom/terminald/holder"
)

// process is a tab's program as the tab sees it: started either by
// terminald itself (execProc, when it runs without a holder) or by the
// holder (heldProc), which outlives terminald.
type process interface {
	// pid is the program's process id: the tab's leader.
	pid() int
	// wait blocks until the program has been reaped and returns its exit
	// code (128 and the signal for a killed one, -1 when unknown).
	wait() int
}

// execProc is a program terminald started and waits for itself.
type execProc struct {
	cmd     *exec.Cmd
	spawner Spawner
}

func (p execProc) pid() int { return p.cmd.Process.Pid }

func (p execProc) wait() int {
	awaitExit(p.cmd.Process.Pid) // on the netpoller: no thread per tab (cost_exit.go)
	err := p.cmd.Wait()
	p.spawner.Done(p.cmd.Process.Pid)
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	case err != nil:
		return -1
	}
	return 0
}

// heldProc is a program the holder started: the holder reaps it and
// reports its exit over the holder connection, so no thread of
// terminald's blocks waiting for it. If the holder is lost, the exit is
// unknowable and reported as -1.
type heldProc struct {
	leader int
	start  uint64
	tab    string
	hc     *holder.Client
}

func (p heldProc) pid() int { return p.leader }

func (p heldProc) wait() int {
	select {
	case code := <-p.hc.Exit(p.tab):
		p.hc.Forget(p.tab)
		return code
	case <-p.hc.Lost():
		return -1
	}
}

// exitedProc is a restored tab whose program ended while no terminald ran:
// the holder reaped it and kept its exit code.
type exitedProc struct{ leader, code int }

func (p exitedProc) pid() int  { return p.leader }
func (p exitedProc) wait() int { return p.code }
