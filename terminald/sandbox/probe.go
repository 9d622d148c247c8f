package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// flagProbe, after flagInside, makes the second stage check that the
// walls can be built and exit.
const flagProbe = "--probe"

// NamespaceHint says what a machine needs for the walls.
const NamespaceHint = "the walls need unprivileged user namespaces: kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, and no AppArmor restriction on them"

// ProbeWalls reports whether launcher (the phantom binary) can build the
// walls of Rules.Isolate on this machine: start itself in a new user and
// mount namespace and mount a private /dev, a tmpfs and a read-only
// /proc/sys there, as a tab's launcher would. nil means it can; the error
// says why not. It takes a few milliseconds: call it once.
//
// The launcher is started plainly and makes the namespace itself, as a
// tab's does: the daemons are non-dumpable, and the child of a
// non-dumpable process has /proc files its parent may not write — its
// uid_map included — until it execs.
func ProbeWalls(launcher string) error {
	if launcher == "" {
		return errors.New("no launcher to probe with")
	}
	cmd := exec.Command(launcher, Command, flagProbe)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return errors.New(msg)
		}
		return fmt.Errorf("run %s %s %s: %w", launcher, Command, flagProbe, err)
	}
	return nil
}

// probeOutside is the probe's first stage: start the second in the new
// namespaces, as monitor does.
func probeOutside() error {
	cmd := exec.Command("/proc/self/exe", Command, flagInside, flagProbe)
	cmd.SysProcAttr = namespaceAttr()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("sandbox: probe: %w", err) // the second stage said why
		}
		return fmt.Errorf("sandbox: start a process in a new user and mount namespace: %w (%s)", err, NamespaceHint)
	}
	return nil
}

// probeInside is the probe's second stage: the mounts a tab's walls make,
// in this throwaway namespace.
func probeInside() error {
	// Mounts apply to the whole namespace, not just this thread.
	if err := checkOwnNamespace(); err != nil {
		return err
	}
	for _, step := range []func() error{
		func() error { return mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") },
		func() error { return privateDev(Devices) },
		func() error { return hide([]string{"/tmp"}, nil) },
		readOnlyProc,
	} {
		if err := step(); err != nil {
			return fmt.Errorf("sandbox: probe: %w", err)
		}
	}
	return nil
}
