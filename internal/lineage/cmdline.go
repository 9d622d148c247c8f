package lineage

import (
	"path/filepath"
	"strings"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// ByCommandLine recognises an instance's terminald from outside it: a
// process running `phantom daemon terminald --listen ADDR` (any path to the
// binary) whose ADDR is the instance's terminald address. A terminald
// started without --listen listens on defaultAddr.
//
// Why the command line can be trusted here: it is the only thing that
// tells two instances apart (a development Phantom may run inside a tab of
// the installed one), and an agent cannot change another process's command
// line — terminald is not dumpable, so its memory cannot be written. An
// agent can start a terminald of its own, but that one runs inside the
// real one, whose command line still marks the agent's processes as
// inside.
func ByCommandLine(addr, defaultAddr string) IsTerminald {
	want := normalizeAddr(addr)
	return func(fs procfs.FS, st procfs.Stat) bool {
		argv, err := fs.Cmdline(st.PID)
		if err != nil {
			return false
		}
		listen, ok := terminaldListen(argv)
		if !ok {
			return false
		}
		if listen == "" {
			listen = defaultAddr
		}
		return normalizeAddr(listen) == want
	}
}

// terminaldListen reads `… daemon terminald [--listen ADDR | --listen=ADDR]`;
// listen is "" when the flag is absent.
func terminaldListen(argv []string) (listen string, ok bool) {
	if len(argv) < 3 || argv[1] != "daemon" || argv[2] != "terminald" {
		return "", false
	}
	for i := 3; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "--listen" && i+1 < len(argv):
			listen = argv[i+1]
			i++
		case strings.HasPrefix(a, "--listen="):
			listen = strings.TrimPrefix(a, "--listen=")
		}
	}
	return listen, true
}

// normalizeAddr cleans the path of a unix:// address, so that two
// spellings of one socket compare equal.
func normalizeAddr(a string) string {
	if p, ok := strings.CutPrefix(a, "unix://"); ok {
		return "unix://" + filepath.Clean(p)
	}
	return a
}
