package lineage

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// Program names the program process pid runs, as a standing grant records
// it: the executable the kernel says it runs (/proc/PID/exe, which the
// process cannot rewrite), and for an interpreter — node, python, a shell —
// the script it was started on, since the interpreter alone would name
// every script alike ("/usr/bin/node /usr/lib/node_modules/@openai/codex/
// bin/codex.js"). The script comes from the argument vector, which the
// process can rewrite: for an interpreted agent the name is only as strong
// as that (the README's security model says so). "" when the process
// cannot be read.
func Program(fs procfs.FS, pid int) string {
	exe, err := fs.Exe(pid)
	if err != nil || exe == "" {
		return ""
	}
	if !interpreter.MatchString(filepath.Base(exe)) {
		return exe
	}
	argv, err := fs.Cmdline(pid)
	if err != nil {
		return exe
	}
	script := scriptArg(argv)
	if script == "" {
		return exe
	}
	if !filepath.IsAbs(script) {
		if cwd, err := os.Readlink(filepath.Join(fs.Root, strconv.Itoa(pid), "cwd")); err == nil {
			script = filepath.Join(cwd, script)
		}
	}
	return exe + " " + script
}

// ClientProgram is the program behind an MCP connection from pid. When pid
// runs Phantom's own bridge — its executable is bridgeExe and its first
// argument "+mcp-server" — the program is the bridge's parent's: the MCP
// client that started it (claude, codex, …), which is what asked; but only
// when that parent alone holds the other ends of the bridge's standard
// input and output (talksOnlyTo): otherwise it is "", which no standing
// grant covers. Any other peer is its own program. A process that only
// names itself as a client ("--client=claude") therefore shows as the
// program it is, and one that starts the bridge and then execs a granted
// agent's binary in its place shows as none.
func ClientProgram(fs procfs.FS, pid int, bridgeExe string) string {
	exe, err := fs.Exe(pid)
	if err != nil {
		return ""
	}
	argv, _ := fs.Cmdline(pid)
	if bridgeExe == "" || exe != bridgeExe || len(argv) < 2 || argv[1] != "+mcp-server" {
		return Program(fs, pid)
	}
	st, err := fs.Stat(pid)
	if err != nil || st.PPID <= 1 {
		return Program(fs, pid)
	}
	if !talksOnlyTo(fs, pid, st.PPID) {
		return ""
	}
	return Program(fs, st.PPID)
}

// interpreter matches the executables that run a script named on their
// command line.
var interpreter = regexp.MustCompile(`^(node|nodejs|bun|deno|python[0-9.]*|pypy[0-9.]*|ruby|perl|php|lua[0-9.]*|sh|bash|dash|zsh|fish|ksh|tclsh|java)$`)

// scriptArg is the first argument of an interpreter's argv that is not an
// option: the script (or, for java, the class or -jar's file).
func scriptArg(argv []string) string {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-jar" && i+1 < len(argv):
			return argv[i+1]
		case a == "--":
			if i+1 < len(argv) {
				return argv[i+1]
			}
			return ""
		case strings.HasPrefix(a, "-"):
			continue
		}
		return a
	}
	return ""
}
