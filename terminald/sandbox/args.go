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
// no path can be mistaken for a flag.
const (
	flagWrite     = "--write"
	flagWriteFile = "--write-file"
	flagDevice    = "--device"
	flagConnect   = "--connect"
)

// Argv returns the command line that runs argv under r: launcher (the
// phantom binary), Command, r's flags, "--", then argv.
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
// every path absolute and clean, the program present — because anything
// else did not come from terminald.
func ParseArgs(args []string) (Rules, []string, error) {
	var r Rules
	for i, a := range args {
		if a == "--" {
			if i+1 == len(args) || args[i+1] == "" {
				return Rules{}, nil, errors.New("sandbox: no program after --")
			}
			return r, args[i+1:], nil
		}
		name, p, ok := strings.Cut(a, "=")
		f := r.field(name)
		switch {
		case f == nil || !ok:
			return Rules{}, nil, fmt.Errorf("sandbox: unknown argument %q; want --write=, --write-file=, --device= or --connect= with a path, then -- and the program", a)
		case p == "" || strings.IndexByte(p, 0) >= 0 || !filepath.IsAbs(p) || filepath.Clean(p) != p:
			return Rules{}, nil, fmt.Errorf("sandbox: %s: %q is not a clean absolute path", name, p)
		}
		*f.paths = append(*f.paths, p)
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
