package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/phantom-dev/phantom/internal/testenv"
)

// openTo lists the descriptors of pid that point at path.
func openTo(pid int, path string) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == path {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestInheritedFDsDoNotLeak starts Phantom the way `exec 7>file; phantom
// up` does: with a descriptor open without close-on-exec. No daemon, and
// no process of a tab, may hold it.
func TestInheritedFDsDoNotLeak(t *testing.T) {
	env := testenv.New(t)
	t.Cleanup(func() { phantomSlow(t, env, "down"); killInstance(t, env) })
	leak := filepath.Join(t.TempDir(), "leaked")
	c := exec.Command("sh", "-c", `exec 7>"$0"; exec "$1" up`, leak, phantomBin)
	c.Env, c.Dir = env.Vars, env.Home
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("exec 7>file; phantom up: %v\n%s", err, out)
	}
	live := instanceDaemons(t, env)
	if len(live) == 0 {
		t.Fatal("no daemon runs after up")
	}
	// A tab whose shell and a child of it run, to look at their fds too.
	id := strings.TrimSpace(mustPhantom(t, env, "new", "--", "sh", "-c", "echo ready; sleep 1000"))
	var tabPIDs []int
	eventually(t, "the new tab's sleep to run", func() (bool, string) {
		tabPIDs = tabProcesses(t, env, tabByID(tabs(t, env), id))
		return runs(tabPIDs, "sleep"), fmt.Sprint("tab processes: ", tabPIDs)
	})
	killOnCleanup(t, tabPIDs)
	for _, tb := range tabs(t, env) {
		if tb["id"] != id {
			tabPIDs = append(tabPIDs, tabProcesses(t, env, tb)...)
		}
	}
	if len(tabPIDs) < 3 {
		t.Fatalf("tab processes %v: want the first tab's shell and the new tab's sh and sleep", tabPIDs)
	}
	for name, pids := range live {
		for _, p := range pids {
			if fds := openTo(p, leak); len(fds) > 0 {
				t.Errorf("%s (pid %d) holds the inherited file on fd %v", name, p, fds)
			}
		}
	}
	for _, p := range tabPIDs {
		if fds := openTo(p, leak); len(fds) > 0 {
			t.Errorf("tab process %d holds the inherited file on fd %v", p, fds)
		}
	}
}
