package servers

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/phantom-dev/phantom/terminald/sandbox"
)

// Confinement is the sandbox a server's processes run in. Servers are
// keyed by (language, workspace root, confinement): an agent's calls never
// reach a server that runs with more rights than the agent's sandbox, and
// a configuration an agent made stays with the servers of its own
// confinement (see Registry.Configure).
type Confinement struct {
	// Key tells confinements apart in server ids ("" for none): the tab
	// whose calls the server serves, or OutsideTabs.
	Key string
	// Flags are the sandbox launcher's rule flags (sandbox.Rules.Flags);
	// nil runs the server as lspd's own user, outside any sandbox.
	Flags []string
	// Label says in words where the server runs, for
	// list_language_servers and messages.
	Label string
	// readOnly, for a confinement lspd computes itself (ReadOnly), makes
	// each process's rules as it starts: the walls keep that server's
	// workspace and program in view and give it a private /tmp of its
	// own. Flags are then the rules without those, to compare by.
	readOnly *Machine
}

// OutsideTabs is the confinement key of servers for agents that run in
// no tab (a process that left its tab's tree, or an agent the gateway
// placed in none).
const OutsideTabs = "outside-tabs"

// Unconfined is where servers for the human's own calls run: as the
// user, outside any sandbox.
var Unconfined = Confinement{Label: "as you, outside any sandbox"}

// Confined reports whether c runs its servers in a sandbox.
func (c Confinement) Confined() bool { return c.Flags != nil }

// InSandbox is the confinement of a sandboxed tab's calls: its servers run
// under that tab's own rules (terminald's DescribeSandbox), so they can
// write exactly what the tab can and no more.
func InSandbox(tab string, flags []string) (Confinement, error) {
	if _, err := sandbox.ParseFlags(flags); err != nil {
		return Confinement{}, fmt.Errorf("the sandbox rules of tab %s: %w", tab, err)
	}
	if flags == nil {
		flags = []string{}
	}
	return Confinement{Key: tab, Flags: slices.Clone(flags), Label: "in the sandbox of tab " + tab}, nil
}

// realPath is p with symbolic links resolved, if it exists: the launcher
// takes only clean paths free of links.
func realPath(p string) (string, bool) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	return filepath.Clean(r), true
}
