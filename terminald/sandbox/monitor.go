package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Run is the launcher: what `phantom +sandbox ARGS` does. Without
// --isolate it confines itself and execs the program (Exec). With it, it
// is the first stage: it stays as the tab's leader and monitor, and starts
// itself again (--inside, the second stage) in a new user and mount
// namespace, where the walls go up before Landlock and the exec. It
// returns only on failure.
func Run(args, env []string) error {
	if len(args) == 1 && args[0] == flagProbe {
		return probeOutside()
	}
	inside := len(args) > 0 && args[0] == flagInside
	gated := false
	if inside {
		args = args[1:]
		if len(args) == 1 && args[0] == flagProbe {
			return probeInside()
		}
		if len(args) > 0 && args[0] == flagGate {
			gated, args = true, args[1:]
		}
	}
	r, argv, err := ParseArgs(args)
	if err != nil {
		return err
	}
	if gated {
		r.gate = gateFD
	}
	if r.Isolate && !inside {
		return monitor(r, argv, env)
	}
	if inside && !r.Isolate {
		return errors.New("sandbox: the second stage (--inside) needs --isolate")
	}
	return Exec(r, argv, env)
}

// namespaceAttr is how the first stage starts the second: in a new user
// namespace (so that an unprivileged user may mount) mapping only the
// user's own uid and gid, and a new mount namespace. setgroups stays
// denied, so the tab cannot drop a group that denies it access. The
// second stage runs as the user, not as root of the namespace, so it needs
// its capabilities as ambient ones to survive its exec: CAP_SYS_ADMIN to
// mount, CAP_SETPCAP to empty the bounding set; it drops them all before
// the program. The child dies with the monitor, so that killing the tab's
// leader kills the tab.
func namespaceAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
		Pdeathsig:   syscall.SIGKILL,
	}
}

// forwarded are the signals the monitor passes on to the program: those
// Phantom (and whoever else) sends to the tab's leader or its process
// group. Signals from the terminal (Ctrl-C, Ctrl-\, Ctrl-Z, window size)
// reach the program directly, as the foreground group.
var forwarded = []os.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT}

// stopSignals stop a process from the terminal; the monitor never stops.
var stopSignals = []os.Signal{syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// monitor is the first stage. It creates the private /tmp, starts the
// second stage and waits for it. When its standard input is a terminal
// whose foreground group it is in (a tab), the program gets a process
// group of its own and the foreground, so that job control and the
// terminal's signals are the program's alone and the tab shows the
// program's name, not the launcher's. It ends as the program ended: the
// same exit status, or death by the same signal.
//
// The private /tmp is a fresh directory in r.Tmp for each run, removed
// when the program ends: a tab id used again must not find another tab's
// files, and the launcher removes nothing it did not create.
func monitor(r Rules, argv, env []string) error {
	if r.Tmp != "" {
		if err := ownDirOrNothing(r.Tmp); err != nil {
			return err
		}
		if err := os.MkdirAll(r.Tmp, 0o700); err != nil {
			return fmt.Errorf("sandbox: create the private /tmp's directory %s: %w", r.Tmp, err)
		}
		run, err := os.MkdirTemp(r.Tmp, "run-")
		if err != nil {
			return fmt.Errorf("sandbox: create the private /tmp in %s: %w", r.Tmp, err)
		}
		defer os.RemoveAll(run)
		r.Tmp = run
	}
	args := r.Argv("", argv)[2:]
	// Pdeathsig fires when the thread that started the child ends.
	runtime.LockOSThread()
	gateEnd, theirs, err := gatePair()
	if err != nil {
		return err
	}
	defer gateEnd.Close()
	cmd := exec.Command("/proc/self/exe", slices.Concat([]string{Command, flagInside, flagGate}, args)...)
	cmd.Args[0] = os.Args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{theirs} // gateFD
	cmd.Env = env
	cmd.SysProcAttr = namespaceAttr()
	ownGroup := inForeground(0)
	if ownGroup {
		cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Foreground, cmd.SysProcAttr.Ctty = true, true, 0
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	// Stopped from the terminal only with the program, never alone. Caught
	// and dropped rather than ignored: an ignored signal would stay
	// ignored in the program, a caught one is reset by exec.
	signal.Notify(sigs, stopSignals...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: start %s in a new user and mount namespace: %w (%s)", cmd.Args[len(cmd.Args)-1], err, NamespaceHint)
	}
	theirs.Close()
	go serveGate(gateEnd, r, cmd.Process.Pid)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				sig := s.(syscall.Signal)
				if slices.Contains(stopSignals, s) {
					continue
				}
				if !ownGroup && (sig == syscall.SIGINT || sig == syscall.SIGQUIT) {
					continue // the program, in our group, got its own copy
				}
				target := cmd.Process.Pid
				if ownGroup {
					target = -target
				}
				_ = syscall.Kill(target, sig)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	signal.Stop(sigs)
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return fmt.Errorf("sandbox: wait for the program: %w", err)
	}
	if r.Tmp != "" {
		os.RemoveAll(r.Tmp) // exitAs does not return to the deferred call
	}
	exitAs(ws)
	return nil
}

// ownDirOrNothing refuses a path that exists and is not a directory (a
// symbolic link counts as not) owned by the calling user: the private
// /tmp goes in a directory of the user's own, never through a link.
func ownDirOrNothing(p string) error {
	var st unix.Stat_t
	switch err := unix.Lstat(p, &st); {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return fmt.Errorf("sandbox: private /tmp %s: %w", p, err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid():
		return fmt.Errorf("sandbox: private /tmp %s exists and is not a directory of uid %d; refusing to empty it", p, os.Getuid())
	}
	return nil
}

// inForeground reports whether fd is a terminal whose foreground process
// group is the caller's.
func inForeground(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// exitAs ends the monitor as the program ended. A signal the Go runtime
// handles itself (a crash, SIGQUIT) is reported as exit status 128+n,
// which is what the holder records for a signal anyway.
func exitAs(ws syscall.WaitStatus) {
	if !ws.Signaled() {
		os.Exit(ws.ExitStatus())
	}
	sig := ws.Signal()
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGPIPE:
		signal.Reset(sig)
		_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(100 * time.Millisecond)
	}
	os.Exit(128 + int(sig))
}
