package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phantom-dev/phantom/internal/buildinfo"
	"github.com/phantom-dev/phantom/internal/paths"
)

// addVersion gives root both `phantom --version` and `phantom version`,
// which print the same thing (see versionText).
func addVersion(root *cobra.Command) {
	// Cobra adds --version once Version is set; the template is the
	// whole output, so that it matches `phantom version` exactly.
	root.Version = buildinfo.Self().Rev()
	root.SetVersionTemplate(`{{versionText}}`)
	cobra.AddTemplateFunc("versionText", versionText)
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print this phantom's version, revision and binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), versionText())
			return err
		},
	})
}

// versionText is this binary's build (version, revision, commit time,
// toolchain) and the file it runs from, with when that was written: two
// builds of one modified tree differ only there.
func versionText() string {
	var b strings.Builder
	fmt.Fprintln(&b, buildinfo.Self())
	if exe, err := buildinfo.Executable(); err == nil {
		fmt.Fprintf(&b, "binary %s (built %s)\n", exe.Path, exe.Written.UTC().Format(time.DateTime+" MST"))
	}
	return b.String()
}

// runningDaemon is what a running daemon of this instance runs, read from
// the process itself (/proc/PID/exe): the binary it was started from,
// which the kernel marks deleted once a rebuild replaced it, and the build
// that binary records. Nothing the daemon says about itself is needed, so
// a daemon of any older Phantom is described as well.
type runningDaemon struct {
	PID int
	// Since is when it began to serve: the time of its pid file, which a
	// daemon writes once it serves.
	Since  time.Time
	Binary buildinfo.Binary
	Build  buildinfo.Info
}

// inspectDaemon describes the named daemon of l, when it runs.
func inspectDaemon(l paths.Layout, name string) (runningDaemon, error) {
	pid, err := daemonPID(l, name)
	if err != nil {
		return runningDaemon{}, err
	}
	d := runningDaemon{PID: pid}
	if st, err := os.Stat(l.PIDFile(name)); err == nil {
		d.Since = st.ModTime()
	}
	if d.Binary, err = buildinfo.ProcessBinary(pid); err != nil {
		return runningDaemon{}, err
	}
	if d.Build, err = buildinfo.ReadFile("/proc/" + strconv.Itoa(pid) + "/exe"); err != nil {
		return runningDaemon{}, err
	}
	return d, nil
}

// differs says how d runs another phantom than self, or "" when it runs
// self's very file.
func (d runningDaemon) differs(self buildinfo.Binary) string {
	switch {
	case d.Binary.Deleted:
		return fmt.Sprintf("an older phantom (rev %s, binary %s replaced since start)", d.Build.Rev(), d.Binary.Path)
	case !d.Binary.SameFile(self):
		return fmt.Sprintf("another phantom binary (rev %s, %s) than this one (%s)", d.Build.Rev(), d.Binary.Path, self.Path)
	}
	return ""
}

// warnDiffering warns on w about those of the named daemons of l that run
// another phantom than this binary (see differingWarnings).
func warnDiffering(w io.Writer, l paths.Layout, names []string) {
	self, err := buildinfo.Executable()
	if err != nil {
		return
	}
	differs := map[string]string{}
	for _, name := range names {
		if d, err := inspectDaemon(l, name); err == nil {
			differs[name] = d.differs(self)
		}
	}
	for _, line := range differingWarnings(differs) {
		fmt.Fprintln(w, line)
	}
}

// differingWarnings words one warning for each way daemons differ from
// this binary (differs maps a daemon to runningDaemon.differs), naming
// the daemons concerned and how to replace them: after a rebuild that is
// one line for all of them, not one each.
func differingWarnings(differs map[string]string) []string {
	var whys []string
	who := map[string][]string{}
	for _, name := range paths.Daemons {
		why := differs[name]
		if why == "" {
			continue
		}
		if who[why] == nil {
			whys = append(whys, why)
		}
		who[why] = append(who[why], name)
	}
	var out []string
	for _, why := range whys {
		names := who[why]
		verb := "runs"
		if len(names) > 1 {
			verb = "run"
		}
		out = append(out, fmt.Sprintf("phantom: warning: %s %s %s; %s", strings.Join(names, ", "), verb, why, restartHint(names)))
	}
	return out
}

// restartHint says how to put the binary on disk in place of the named
// running daemons: `phantom upgrade` replaces terminald alone and keeps
// every tab; any other daemon needs a down and up.
func restartHint(names []string) string {
	if len(names) == 1 && names[0] == "terminald" {
		return "run `phantom upgrade` (every tab keeps running) or `phantom down && phantom up`"
	}
	return "run `phantom down && phantom up` (this hangs up every tab)"
}
