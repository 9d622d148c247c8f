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
	return fmt.Sprintf("Landlock ABI %d, a private mount namespace and a connect gate: agent tabs are sandboxed (writes, signals, abstract sockets, "+
		"terminal devices: a private /dev and /tmp; path sockets: only the MCP socket, the tab's own and those allowed in config.json, "+
		"whenever they were made); no Unix datagram sockets, no io_uring", abi), true
}

// Unavailable says why a kernel with Landlock ABI abi (below MinABI)
// cannot sandbox a tab.
func Unavailable(abi int) string {
	if abi <= 0 {
		return fmt.Sprintf("this kernel has no Landlock (Linux 6.12 or later with Landlock enabled gives ABI %d)", MinABI)
	}
	return fmt.Sprintf("this kernel's Landlock ABI %d cannot scope signals and sockets (ABI %d, Linux 6.12, can)", abi, MinABI)
}
