package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Command is the hidden phantom subcommand that launches a sandboxed
// program: phantom Command FLAGS -- PROGRAM ARG…
const Command = "+sandbox"

// The launcher's flags, one path each, always written --flag=PATH so that
// no path can be mistaken for a flag; flagIsolate alone takes no value.
const (
	flagWrite     = "--write"
	flagWriteFile = "--write-file"
	flagDevice    = "--device"
	flagConnect   = "--connect"
	flagIsolate   = "--isolate"
	flagTmp       = "--tmp"
	flagVouch     = "--vouch"
	flagHide      = "--hide"
	flagKeep      = "--keep"
	flagAllow     = "--allow"
	flagScan      = "--scan"
)

// flagInside marks the second stage of an isolating launcher: the child
// it started in the new namespaces (see Run). It is only ever first.
const flagInside = "--inside"

// flagGate follows flagInside when the monitor serves the second stage's
// connects (terminald/sandbox/gate): the stage installs the filter and
// hands its listener over on gateFD before it execs the program.
const flagGate = "--gate"

// gateFD is the descriptor the second stage gets the monitor's end of the
// gate's socket pair on (exec.Cmd.ExtraFiles[0]).
const gateFD = 3

// Argv returns the command line that runs argv under r: launcher (the
// phantom binary), Command, r's flags, "--", then argv. It is the one way
// to start a program in a sandbox: everything the launcher needs is on the
// command line, so a daemon can run it with plain os/exec.
func (r Rules) Argv(launcher string, argv []string) []string {
	out := append([]string{launcher, Command}, r.Flags()...)
	out = append(out, "--")
	return append(out, argv...)
}

// Flags returns r as the launcher's rule flags, the part of Argv between
// Command and "--"; ParseFlags reads them back. They are how a tab's rules
// travel to the daemons that start programs in its sandbox.
func (r Rules) Flags() []string {
	var out []string
	if r.Isolate {
		out = append(out, flagIsolate)
	}
	if r.Tmp != "" {
		out = append(out, flagTmp+"="+r.Tmp)
	}
	for _, f := range r.fields() {
		for _, p := range *f.paths {
			out = append(out, f.flag+"="+p)
		}
	}
	return out
}

// ParseFlags reads rule flags as Flags writes them, as strictly as
// ParseArgs.
func ParseFlags(flags []string) (Rules, error) {
	r, _, err := ParseArgs(append(slices.Clone(flags), "--", "-"))
	return r, err
}

// ParseArgs parses the launcher's arguments (what follows Command): the
// rule flags, "--", then the program and its arguments. It is strict —
// every path absolute and clean, the program present, walls asked for
// only with --isolate — because anything else did not come from Argv.
func ParseArgs(args []string) (Rules, []string, error) {
	var r Rules
	for i, a := range args {
		if a == "--" {
			if i+1 == len(args) || args[i+1] == "" {
				return Rules{}, nil, errors.New("sandbox: no program after --")
			}
			if !r.Isolate && (r.Tmp != "" || len(r.Hide)+len(r.Keep)+len(r.Allow)+len(r.Scan)+len(r.Vouch) > 0) {
				return Rules{}, nil, errors.New("sandbox: --tmp, --hide, --keep, --allow, --scan and --vouch need --isolate")
			}
			return r, args[i+1:], nil
		}
		if a == flagIsolate {
			r.Isolate = true
			continue
		}
		name, p, ok := strings.Cut(a, "=")
		f := r.field(name)
		switch {
		case (f == nil && name != flagTmp) || !ok:
			return Rules{}, nil, fmt.Errorf("sandbox: unknown argument %q; want --isolate, or --write=, --write-file=, --device=, --connect=, --tmp=, --hide=, --keep=, --allow=, --scan= or --vouch= with a path, then -- and the program", a)
		case p == "" || strings.IndexByte(p, 0) >= 0 || !filepath.IsAbs(p) || filepath.Clean(p) != p:
			return Rules{}, nil, fmt.Errorf("sandbox: %s: %q is not a clean absolute path", name, p)
		case name == flagTmp && r.Tmp != "":
			return Rules{}, nil, fmt.Errorf("sandbox: --tmp given twice (%s and %s); a tab has one /tmp", r.Tmp, p)
		case name == flagTmp && p == "/tmp":
			return Rules{}, nil, errors.New("sandbox: --tmp=/tmp would mount /tmp on itself; name the tab's own directory")
		case name == flagTmp:
			r.Tmp = p
		default:
			*f.paths = append(*f.paths, p)
		}
	}
	return Rules{}, nil, errors.New("sandbox: missing -- before the program")
}

// ruleField ties a flag to the list it fills.
type ruleField struct {
	flag  string
	paths *[]string
}

func (r *Rules) fields() []ruleField {
	return []ruleField{
		{flagWrite, &r.WriteDirs},
		{flagWriteFile, &r.WriteFiles},
		{flagDevice, &r.Devices},
		{flagConnect, &r.Sockets},
		{flagHide, &r.Hide},
		{flagKeep, &r.Keep},
		{flagAllow, &r.Allow},
		{flagScan, &r.Scan},
		{flagVouch, &r.Vouch},
	}
}

func (r *Rules) field(flag string) *ruleField {
	for _, f := range r.fields() {
		if f.flag == flag {
			return &f
		}
	}
	return nil
}

// SelfLauncher returns the running executable, the launcher for a
// terminald run by `phantom daemon terminald`; "" when it cannot be
// found, which makes terminald refuse sandboxed tabs rather than guess.
func SelfLauncher() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
