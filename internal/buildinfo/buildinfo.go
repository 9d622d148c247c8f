// Package buildinfo says which Phantom a binary is: the revision the Go
// toolchain stamped into it (runtime/debug.BuildInfo), when the binary was
// written, and where it is. `phantom --version` prints it for this binary;
// `phantom status` and `phantom up` read it from a running daemon's
// /proc/PID/exe to tell whether the daemon still runs the binary on disk.
package buildinfo

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Info is what a phantom binary says about itself.
type Info struct {
	// Version is the main module's version: "(devel)" for a build from a
	// source tree, a tag for `go install ...@version`.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from; empty when the
	// build did not record one (-buildvcs=false, a tree without .git).
	Revision string `json:"revision,omitempty"`
	// Modified is true when the tree had changes not committed in
	// Revision.
	Modified bool `json:"modified,omitempty"`
	// Committed is the time of Revision; zero when unknown.
	Committed time.Time `json:"committed,omitzero"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version,omitempty"`
}

// Self is this binary's Info, read once.
var Self = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(unknown)"}
	}
	return FromBuildInfo(bi)
})

// FromBuildInfo picks what Info holds out of bi.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if in.Version == "" {
		in.Version = "(unknown)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		case "vcs.time":
			in.Committed, _ = time.Parse(time.RFC3339, s.Value)
		}
	}
	return in
}

// ReadFile reads the Info of the Go binary at path. It works on
// /proc/PID/exe of a process whose binary has since been replaced or
// removed: the process keeps the old file open.
func ReadFile(path string) (Info, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return Info{}, fmt.Errorf("read the build information of %s: %w", path, err)
	}
	return FromBuildInfo(bi), nil
}

// Rev is the revision in short form, as people quote it: the first 12
// hex digits, "+modified" when the tree had uncommitted changes, and
// "unknown" when the build recorded none.
func (in Info) Rev() string {
	if in.Revision == "" {
		return "unknown"
	}
	r := in.Revision[:min(12, len(in.Revision))]
	if in.Modified {
		r += "+modified"
	}
	return r
}

// Same reports whether a and b name the same build as far as the
// toolchain recorded it. Two builds of one modified tree look the same:
// compare the binaries themselves (see Binary) to tell those apart.
func (in Info) Same(other Info) bool {
	return in.Version == other.Version && in.Revision == other.Revision &&
		in.Modified == other.Modified && in.GoVersion == other.GoVersion
}

// String is one line: version, revision, commit time and toolchain.
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "phantom %s, rev %s", in.Version, in.Rev())
	if !in.Committed.IsZero() {
		fmt.Fprintf(&b, " (committed %s)", in.Committed.UTC().Format("2006-01-02 15:04 MST"))
	}
	if in.GoVersion != "" {
		fmt.Fprintf(&b, ", %s", in.GoVersion)
	}
	return b.String()
}

// Binary is a phantom executable file: its path, when it was written (the
// build time, for a binary go build wrote), and its identity on disk.
type Binary struct {
	Path    string    `json:"path"`
	Written time.Time `json:"written"`
	// Deleted is true for a running process's binary that was replaced
	// or removed after the process started.
	Deleted  bool `json:"deleted,omitempty"`
	dev, ino uint64
}

// Executable is the binary this process runs.
func Executable() (Binary, error) {
	return ProcessBinary(os.Getpid())
}
