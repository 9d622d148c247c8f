package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestFromBuildInfo(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name     string
		bi       debug.BuildInfo
		want     Info
		wantRev  string
		wantLine string
	}{
		{
			name: "clean tree",
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-11-30T13:20:00Z"}, {Key: "vcs.modified", Value: "false"},
			}},
			want:     Info{Version: "(devel)", Revision: rev, Committed: time.Date(2026, 11, 30, 13, 20, 0, 0, time.UTC), GoVersion: "go1.26.8"},
			wantRev:  "0123456789ab",
			wantLine: "phantom (devel), rev 0123456789ab (committed 2026-11-30 13:20 UTC), go1.26.8",
		},
		{
			name: "modified tree",
			bi: debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"},
			}},
			want:     Info{Version: "v1.2.0", Revision: rev, Modified: true},
			wantRev:  "0123456789ab+modified",
			wantLine: "phantom v1.2.0, rev 0123456789ab+modified",
		},
		{
			name:     "no VCS stamp (-buildvcs=false)",
			bi:       debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want:     Info{Version: "(devel)", GoVersion: "go1.26.8"},
			wantRev:  "unknown",
			wantLine: "phantom (devel), rev unknown, go1.26.8",
		},
		{
			name:     "no main module version",
			bi:       debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "not a time"}}},
			want:     Info{Version: "(unknown)", Revision: "abc"},
			wantRev:  "abc",
			wantLine: "phantom (unknown), rev abc",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromBuildInfo(&tt.bi)
			if got != tt.want {
				t.Errorf("FromBuildInfo = %+v, want %+v", got, tt.want)
			}
			if r := got.Rev(); r != tt.wantRev {
				t.Errorf("Rev = %q, want %q", r, tt.wantRev)
			}
			if s := got.String(); s != tt.wantLine {
				t.Errorf("String = %q, want %q", s, tt.wantLine)
			}
			if !got.Same(tt.want) {
				t.Errorf("Same(%+v) = false for an equal Info", tt.want)
			}
		})
	}
}

func TestSameTellsBuildsApart(t *testing.T) {
	base := Info{Version: "(devel)", Revision: "abc", GoVersion: "go1.26.8"}
	for name, other := range map[string]Info{
		"revision":  {Version: "(devel)", Revision: "abd", GoVersion: "go1.26.8"},
		"modified":  {Version: "(devel)", Revision: "abc", Modified: true, GoVersion: "go1.26.8"},
		"version":   {Version: "v1.0.0", Revision: "abc", GoVersion: "go1.26.8"},
		"toolchain": {Version: "(devel)", Revision: "abc", GoVersion: "go1.27.0"},
	} {
		if base.Same(other) {
			t.Errorf("Same: builds differing in %s compare the same", name)
		}
	}
}

// TestReadFileOfProcess reads the Info of this test binary through
// /proc/self/exe, as status does for a daemon, and checks it against what
// the runtime says of itself.
func TestReadFileOfProcess(t *testing.T) {
	got, err := ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if want := Self(); !got.Same(want) {
		t.Errorf("ReadFile(/proc/self/exe) = %+v, want this binary's %+v", got, want)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("ReadFile of a missing file: error %v does not name the file", err)
	}
}

// TestProcessBinaryReplaced runs a copy of a program, replaces the copy on
// disk as a rebuild does (a new file renamed over it) and checks that the
// running process's binary then reads as deleted and differs from the
// file on disk.
func TestProcessBinaryReplaced(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	copyFile(t, sleep, bin)
	cmd := exec.Command(bin, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	before, err := ProcessBinary(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if before.Path != bin || before.Deleted {
		t.Fatalf("ProcessBinary = %+v, want %s, not deleted", before, bin)
	}
	if disk, err := before.OnDisk(); err != nil || !disk.SameFile(before) {
		t.Fatalf("OnDisk = %+v, %v: want the running file", disk, err)
	}

	copyFile(t, sleep, bin+".new")
	if err := os.Rename(bin+".new", bin); err != nil {
		t.Fatal(err)
	}
	after, err := ProcessBinary(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if after.Path != bin || !after.Deleted {
		t.Errorf("after replacing: ProcessBinary = %+v, want %s, deleted", after, bin)
	}
	if disk, err := after.OnDisk(); err != nil || disk.SameFile(after) {
		t.Errorf("after replacing: OnDisk = %+v, %v: want a file other than the running one", disk, err)
	}
}

// TestExecutable checks this process's own binary.
func TestExecutable(t *testing.T) {
	b, err := Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if b.Path != exe || b.Deleted || b.Written.IsZero() {
		t.Errorf("Executable = %+v, want %s, not deleted, with a write time", b, exe)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
