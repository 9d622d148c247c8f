package sandbox

import "fmt"

// Describe says in one line which isolation sandboxed tabs get on a kernel
// with Landlock ABI abi, and whether they are sandboxed at all (false: the
// line is a warning).
func Describe(abi int) (string, bool) {
	switch {
	case abi >= ConnectABI:
		return fmt.Sprintf("Landlock ABI %d: agent tabs are sandboxed (writes, signals, abstract sockets, path-socket connects)", abi), true
	case abi >= MinABI:
		return fmt.Sprintf("Landlock ABI %d: agent tabs are sandboxed (writes, signals, abstract sockets); path-socket connects are not limited before ABI %d", abi, ConnectABI), true
	default:
		return "warning: " + Unavailable(abi) + ": agent tabs run NOT sandboxed", false
	}
}

// Unavailable says why a kernel with Landlock ABI abi (below MinABI)
// cannot sandbox a tab.
func Unavailable(abi int) string {
	if abi <= 0 {
		return fmt.Sprintf("this kernel has no Landlock (Linux 6.12 or later with Landlock enabled gives ABI %d)", MinABI)
	}
	return fmt.Sprintf("this kernel's Landlock ABI %d cannot scope signals and sockets (ABI %d, Linux 6.12, can)", abi, MinABI)
}
