package holder

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/lineage"
	"github.com/phantom-dev/phantom/internal/procfs"
)

// fakeProcess is one process of a fake /proc.
type fakeProcess struct {
	pid, ppid int
	start     uint64
	argv      []string
}

func fakeProcFS(t *testing.T, procs ...fakeProcess) procfs.FS {
	t.Helper()
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, fmt.Sprint(p.pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (x) S %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", p.pid, p.ppid, p.pid, p.pid, p.start)
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Join(p.argv, "\x00")+"\x00"), 0o644)
	}
	return procfs.FS{Root: root}
}

const testAddr = "unix:///run/ph/terminald.sock"

var (
	holderArgv    = []string{"/usr/bin/phantom", "+holder", "--terminald", testAddr, "--socket", "/run/ph/holder.sock"}
	terminaldArgv = []string{"/usr/bin/phantom", "daemon", "terminald", "--listen", testAddr}
)

// trustScene is an instance as /proc shows it, with the fakes an agent
// could start inside it.
func trustScene(t *testing.T) procfs.FS {
	return fakeProcFS(t,
		fakeProcess{1, 0, 1, []string{"init"}},
		fakeProcess{90, 1, 40, holderArgv},     // the holder
		fakeProcess{100, 1, 50, terminaldArgv}, // terminald
		fakeProcess{200, 90, 60, []string{"bash"}},
		fakeProcess{300, 200, 70, []string{"claude"}},
		fakeProcess{310, 300, 71, terminaldArgv}, // an agent's terminald
		fakeProcess{320, 300, 72, holderArgv},    // an agent's holder
		fakeProcess{330, 90, 73, terminaldArgv},  // double-forked out of its tab, then exec'd
		fakeProcess{400, 1, 80, []string{"/usr/bin/phantom", "daemon", "terminald", "--listen", "unix:///other/terminald.sock"}},
		fakeProcess{410, 1, 81, []string{"/usr/bin/phantom", "+holder", "--terminald", "unix:///other/terminald.sock"}},
		fakeProcess{500, 1, 90, []string{"/usr/bin/phantom", "daemon", "authz", "--listen", testAddr}},
	)
}

// TestHolderTrustsOnlyTheInstancesTerminald: the holder serves the
// instance's terminald, and no process an agent can start.
func TestHolderTrustsOnlyTheInstancesTerminald(t *testing.T) {
	fs := trustScene(t)
	tree := lineage.Tree{FS: fs, IsTerminald: lineage.Either(lineage.Self(90, 40), lineage.ByCommandLine(testAddr, testAddr))}
	tests := []struct {
		pid  int
		want bool
	}{
		{100, true},
		{310, false}, // inside the holder
		{330, false}, // inside, in no tab
		{400, false}, // another instance's terminald
		{500, false}, // not terminald
		{200, false},
		{90, false}, // the holder itself is not terminald
		{0, false},
		{999, false}, // gone
	}
	for _, tt := range tests {
		err := checkTerminald(tree, testAddr, tt.pid)
		if (err == nil) != tt.want {
			t.Errorf("checkTerminald(pid %d) = %v; want trusted %v", tt.pid, err, tt.want)
		}
	}
}

// TestTerminaldTrustsOnlyTheInstancesHolder: terminald hands its tabs
// only to the instance's holder, never to one an agent started.
func TestTerminaldTrustsOnlyTheInstancesHolder(t *testing.T) {
	fs := trustScene(t)
	tree := lineage.Tree{FS: fs, IsTerminald: lineage.ByCommandLine(testAddr, testAddr)}
	tests := []struct {
		pid  int
		want bool
	}{
		{90, true},
		{320, false}, // an agent's holder, inside the real one
		{410, false}, // another instance's holder
		{100, false}, // terminald is not a holder
		{200, false},
		{0, false},
		{999, false},
	}
	for _, tt := range tests {
		_, err := checkHolder(tree, testAddr, tt.pid)
		if (err == nil) != tt.want {
			t.Errorf("checkHolder(pid %d) = %v; want trusted %v", tt.pid, err, tt.want)
		}
	}
}
