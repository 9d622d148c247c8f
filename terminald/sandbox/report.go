package sandbox

import "fmt"

// Describe says in one line which isolation sandboxed tabs get on a kernel
// with Landlock ABI abi, where ProbeWalls returned walls, and whether they
// are sandboxed at all (false: the line is a warning). Every wall that
// does not hold is named, with the reason: never a silent downgrade.
func Describe(abi int, walls error) (string, bool) {
	if abi < MinABI {
		return "warning: " + Unavailable(abi) + ": agent tabs run NOT sandboxed", false
	}
	if walls != nil {
		return fmt.Sprintf("warning: Landlock ABI %d: agent tabs are sandboxed for writes, signals and abstract sockets, "+
			"but NOT for terminal devices or path sockets (other tabs' terminals, the session bus, docker.sock, ssh-agent, Phantom's own sockets stay reachable) "+
			"and nested sandboxes (bwrap) fail, because the private mount namespace cannot be built: %v", abi, walls), true
	}
	return fmt.Sprintf("Landlock ABI %d and a private mount namespace: agent tabs are sandboxed (writes, signals, abstract sockets, "+
		"terminal devices, path sockets: a private /dev and /tmp, runtime directories hidden, the sockets in /run and the home directory masked); "+
		"not held: a path socket created after the tab started, in a directory the tab can see (an ssh ControlMaster in ~/.ssh), stays connectable", abi), true
}

// Unavailable says why a kernel with Landlock ABI abi (below MinABI)
// cannot sandbox a tab.
func Unavailable(abi int) string {
	if abi <= 0 {
		return fmt.Sprintf("this kernel has no Landlock (Linux 6.12 or later with Landlock enabled gives ABI %d)", MinABI)
	}
	return fmt.Sprintf("this kernel's Landlock ABI %d cannot scope signals and sockets (ABI %d, Linux 6.12, can)", abi, MinABI)
}
