package main

import "github.com/phantom-dev/phantom/terminald/sandbox"

// isolation says in one line which isolation sandboxed tabs get on this
// machine — the kernel's Landlock and whether the private mount namespace
// can be built (a line starting "warning:" names what does not hold), for
// phantom status.
func isolation() string {
	text, _ := sandbox.Describe(sandbox.ABI(), sandbox.ProbeWalls(sandbox.SelfLauncher()))
	return text
}
