package main

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// undumpable are the subcommands whose process must not be dumpable: every
// daemon, and the human's own clients (attach types into tabs and answers
// sheets; sheet and grants answer and revoke).
var undumpable = map[string]bool{"daemon": true, "attach": true, "sheet": true, "grants": true}

// protectProcess makes this process non-dumpable (prctl PR_SET_DUMPABLE 0)
// when args (os.Args[1:]) run one of the undumpable subcommands. A process
// of the same user — an agent with a shell in some tab — then cannot
// ptrace it, and cannot read its memory, environment or open files through
// /proc: those checks need CAP_SYS_PTRACE for a non-dumpable target. It
// is called first thing in main, before any secret is in memory. (The flag
// is reset by execve, so it must be set by each of these processes
// itself.)
func protectProcess(args []string) error {
	sub := subcommand(args)
	if !undumpable[sub] {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the %s process non-dumpable: %w", sub, err)
	}
	return nil
}

// subcommand is the first word of args that is not a flag: the subcommand
// cobra will run (the root command has no flags that take a value).
func subcommand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}
