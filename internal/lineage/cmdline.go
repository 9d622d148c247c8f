package lineage

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/phantom-dev/phantom/internal/paths"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// ByCommandLine recognises an instance's anchors from outside them: its
// holder (`phantom +holder --terminald ADDR …`, terminald/holder), the
// parent and subreaper of every tab's program, and its terminald
// (`phantom daemon terminald --listen ADDR`), which is the anchor when it
// runs without a holder and is harmless to match when it runs with one
// (it then starts no process). ADDR is the instance's terminald address
// (any path to the binary); a terminald started without --listen listens
// on defaultAddr.
//
// Why the command line can be trusted here: it is the only thing that
// tells two instances apart (a development Phantom may run inside a tab of
// the installed one), and an agent cannot change another process's command
// line — the holder and terminald are not dumpable, so their memory cannot
// be written. An agent can start a holder or terminald of its own, but
// that one runs inside the real holder, whose command line still marks
// the agent's processes as inside.
//
// Every other daemon of the instance is an anchor too (DaemonsByCommandLine):
// what gitd, lspd or editord start for an agent — git and its hooks and
// filters, language servers — is a descendant of that daemon, and must be
// inside Phantom, never the human, however it was started.
func ByCommandLine(addr, defaultAddr string) IsTerminald {
	return Either(HolderByCommandLine(addr), Either(TerminaldByCommandLine(addr, defaultAddr), DaemonsByCommandLine(addr)))
}

// DaemonsByCommandLine recognises the instance's daemons other than
// terminald, by `… daemon NAME --listen unix://DIR/NAME.sock`, where DIR is
// the directory of the instance's terminald socket addr (as `phantom up`
// starts them; a daemon without --listen listens there too). Their
// descendants are processes Phantom ran — for an agent, or for the human
// with input an agent may have written (a repository's hooks) — so they
// count as inside Phantom, in no tab: everything they touch reaches `all`,
// and every act reserved to the human is refused to them.
//
// A daemon listening over TCP (the compose stack) runs in its own
// container, whose processes this machine's tree does not hold.
func DaemonsByCommandLine(addr string) IsTerminald {
	sock, ok := SocketPath(normalizeAddr(addr))
	if !ok {
		return func(procfs.FS, procfs.Stat) bool { return false }
	}
	dir := filepath.Dir(sock)
	return func(fs procfs.FS, st procfs.Stat) bool {
		argv, err := fs.Cmdline(st.PID)
		if err != nil || len(argv) < 3 || argv[1] != "daemon" || argv[2] == "terminald" || !isDaemonName(argv[2]) {
			return false
		}
		listen := normalizeAddr(flagValue(argv[3:], "--listen"))
		if listen == "" {
			return true // the default address, in the instance's runtime directory
		}
		return listen == "unix://"+filepath.Join(dir, argv[2]+".sock")
	}
}

// isDaemonName reports whether name is one of Phantom's daemons.
func isDaemonName(name string) bool { return slices.Contains(paths.Daemons, name) }

// TerminaldByCommandLine recognises only the instance's terminald, by
// `… daemon terminald --listen ADDR`: what the holder checks its peer
// against.
func TerminaldByCommandLine(addr, defaultAddr string) IsTerminald {
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

// HolderByCommandLine recognises only the instance's holder, by
// `… +holder --terminald ADDR`: what terminald checks the holder it
// dialled against.
func HolderByCommandLine(addr string) IsTerminald {
	want := normalizeAddr(addr)
	return func(fs procfs.FS, st procfs.Stat) bool {
		argv, err := fs.Cmdline(st.PID)
		if err != nil {
			return false
		}
		t, ok := holderTerminald(argv)
		return ok && t != "" && normalizeAddr(t) == want
	}
}

// Either recognises a process either test recognises.
func Either(a, b IsTerminald) IsTerminald {
	return func(fs procfs.FS, st procfs.Stat) bool { return a(fs, st) || b(fs, st) }
}

// terminaldListen reads `… daemon terminald [--listen ADDR | --listen=ADDR]`;
// listen is "" when the flag is absent.
func terminaldListen(argv []string) (listen string, ok bool) {
	if len(argv) < 3 || argv[1] != "daemon" || argv[2] != "terminald" {
		return "", false
	}
	return flagValue(argv[3:], "--listen"), true
}

// holderTerminald reads `… +holder [--terminald ADDR | --terminald=ADDR] …`.
// `+holder --background` is not a holder but the short-lived process that
// starts one (and is the new holder's parent for a moment).
func holderTerminald(argv []string) (addr string, ok bool) {
	if len(argv) < 2 || argv[1] != "+holder" || slices.Contains(argv[2:], "--background") {
		return "", false
	}
	return flagValue(argv[2:], "--terminald"), true
}

// flagValue is the last value of a --name flag in args, "" if absent.
func flagValue(args []string, name string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == name && i+1 < len(args):
			v = args[i+1]
			i++
		case strings.HasPrefix(a, name+"="):
			v = strings.TrimPrefix(a, name+"=")
		}
	}
	return v
}

// normalizeAddr cleans the path of a unix:// address, so that two
// spellings of one socket compare equal.
func normalizeAddr(a string) string {
	if p, ok := strings.CutPrefix(a, "unix://"); ok {
		return "unix://" + filepath.Clean(p)
	}
	return a
}
