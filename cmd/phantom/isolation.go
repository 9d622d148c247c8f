package main

import "github.com/phantom-dev/phantom/terminald/sandbox"

// isolation says in one line which isolation sandboxed tabs get from this
// kernel (a line starting "warning:" when they get none), for phantom
// status.
func isolation() string {
	text, _ := sandbox.Describe(sandbox.ABI())
	return text
}
