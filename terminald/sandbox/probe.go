package sandbox

import (
	"bytes"
	"errors"
	"fmt"
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
// mount namespace and mount a private devpts, a tmpfs and a read-only
// /proc/sys there, as a tab's launcher would. nil means it can; the error
// says why not. It takes a few milliseconds: call it once.
func ProbeWalls(launcher string) error {
	if launcher == "" {
		return errors.New("no launcher to probe with")
	}
	cmd := exec.Command(launcher, Command, flagInside, flagProbe)
	cmd.SysProcAttr = namespaceAttr()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%s: %w", msg, err)
		}
		return fmt.Errorf("start a process in a new user and mount namespace: %w (%s)", err, NamespaceHint)
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
