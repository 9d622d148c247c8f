package terminald

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfile checks the PHANTOM_CPUPROFILE switch: a profile is
// written where it says, nothing without it, and a path that cannot be
// created only logs.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name, path string
		want       bool // a profile file exists afterwards
	}{
		{"unset", "", false},
		{"a file", filepath.Join(dir, "td.prof"), true},
		{"a directory that does not exist", filepath.Join(dir, "missing", "td.prof"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(cpuProfileEnv, tc.path)
			stop := startCPUProfile(logger)
			stop()
			if tc.path == "" {
				return
			}
			fi, err := os.Stat(tc.path)
			switch {
			case tc.want && (err != nil || fi.Size() == 0):
				t.Fatalf("profile %s: %v (size %v)", tc.path, err, fi)
			case !tc.want && err == nil:
				t.Fatalf("profile %s written, want none", tc.path)
			}
		})
	}
}
