package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// MinABI is the lowest Landlock ABI that sandboxes a tab: ABI 6 (Linux
// 6.12) is the first to scope signals and abstract Unix sockets. Below it
// the tab could still signal the daemons and the human's clients, so a
// write-only sandbox would promise more than it holds.
const MinABI = 6

// ConnectABI is the first Landlock ABI that restricts connecting to path
// (named) Unix sockets.
const ConnectABI = 9

// erratumSignalScope is the Landlock erratum bit for the fix that makes
// signal scoping hold (kernels 6.12 to 6.14 lacked it, as go-landlock
// notes); a kernel reporting ABI 6 or more without it counts as ABI 5.
const erratumSignalScope = 1 << 1

// ABI returns the Landlock ABI this kernel offers, 0 if none, counted as
// go-landlock counts it (see erratumSignalScope).
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= MinABI {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&erratumSignalScope == 0 {
			v = MinABI - 1
		}
	}
	return v
}

// deviceAccess is what a tab may do with its devices: read, write, and
// the terminal ioctls (stty, window size, job control).
const deviceAccess = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev

// landlockConfig is the Landlock configuration for ABI abi (at least MinABI):
// every file-system right and both scopes that abi knows, no network
// rights — agents need their model's API.
func landlockConfig(abi int) landlock.Config {
	presets := []landlock.Config{landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}
	cfg := presets[min(abi, MinABI+len(presets)-1)-MinABI]
	cfg.HandledAccessNet = 0
	return cfg
}

// landlockRules turns r into go-landlock rules for ABI abi. Paths that
// vanished since Compute are skipped: unwritable is the safe side.
func (r Rules) landlockRules(abi int) []landlock.Rule {
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(r.WriteDirs...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(r.WriteFiles...).IgnoreIfMissing(),
		landlock.PathAccess(deviceAccess, r.Devices...).IgnoreIfMissing(),
	}
	if abi >= ConnectABI {
		rules = append(rules, landlock.PathAccess(ll.AccessFSResolveUnix, r.Sockets...).IgnoreIfMissing())
	}
	return rules
}

// Exec confines the calling process with r — inside the namespaces the
// first stage made, after building r's walls (buildWalls) — and replaces it with argv (the
// program looked up in $PATH), keeping env. It returns only on failure,
// and never runs argv unconfined: a kernel below MinABI is an error.
//
// The ruleset is enforced on one locked OS thread, which then calls
// execve: landlock_restrict_self and no_new_privs apply to the calling
// thread, and execve leaves only that thread. This works whether or not
// the binary uses cgo (which rules out go-landlock's all-threads
// enforcement on kernels before ABI 8).
func Exec(r Rules, argv, env []string) error {
	abi := ABI()
	if abi < MinABI {
		return fmt.Errorf("sandbox: this kernel offers Landlock ABI %d; sandboxing needs %d or later, so %s was not started", abi, MinABI, argv[0])
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	// Never unlocked: if exec fails, the thread is confined and must not
	// serve other goroutines; it ends with the process. Capabilities,
	// no_new_privs and Landlock are the calling thread's.
	runtime.LockOSThread()
	if r.Isolate {
		if err := buildWalls(r); err != nil {
			return err
		}
	}
	cfg, rules := landlockConfig(abi), r.landlockRules(abi)
	if r.Isolate {
		// The walls hold writes and devices. A Landlock domain that
		// handles any file-system right forbids every mount, which would
		// break the nested sandboxes agents run (bubblewrap): scopes only.
		cfg.HandledAccessFS, rules = 0, nil
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("sandbox: build the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return fmt.Errorf("sandbox: Landlock ABI %d produced no ruleset", abi)
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: set no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
	}
	if r.Isolate {
		if err := dropCapabilities(); err != nil {
			return err
		}
	}
	if r.gate > 0 {
		if err := handOverGate(r.gate); err != nil {
			return err
		}
	}
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("sandbox: exec %s: %w", path, err)
	}
	return nil
}
