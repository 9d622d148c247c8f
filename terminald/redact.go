package terminald

import (
	"cmp"
	"context"
	"strings"

	"github.com/phantom-dev/phantom/internal/guard"
	terminalv1 "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
	"github.com/phantom-dev/phantom/terminald/workspace"
)

// What an agent sees of the tabs it may not read.
//
// Listing tabs is free, reading one is not (the read permission). Yet some
// fields of a tab are text its programs write, and hold what the human
// typed or saw there: the command lines its shell reports (OSC 133, as
// last_command), the title a program sets (OSC 0/2: shell integrations
// set it to the command that runs, `export API_TOKEN=…` included), the
// directory a shell reports (OSC 7, which may name anything). So a call
// made by or for an agent — relayed by the gateway, whatever its MCP
// client, or made from inside Phantom — sees those fields only of the tabs
// it may read for free: its own, and those opened for it (opened_by,
// transitively). Every other tab leaves terminald as redact makes it. The
// human, a caller outside Phantom that does not act for an agent, sees
// every tab in full.
//
// Kept, as not the programs' text: the name and icon the human or an
// agent gave (update_terminal, create), the foreground process's name (the
// kernel's comm, 15 bytes that any process of the machine can read in
// /proc/PID/stat), the project (Phantom decides it from the kernel), the
// agent client's name (its MCP handshake's), and the numbers and flags.

// viewer says which tabs the caller of one call sees in full.
type viewer struct {
	// all is true for the human.
	all bool
	// tab is the agent's own tab; "" when it runs in none.
	tab string
	// opened are the tabs opened for it, transitively (withOpened).
	opened map[string]bool
}

// viewerOf is the viewer of the call in ctx. A call no guard placed is
// treated as an agent's outside every tab: it sees no tab in full.
func viewerOf(ctx context.Context) viewer {
	c, ok := guard.CallerFrom(ctx)
	if ok && !c.ForAgent {
		return viewer{all: true}
	}
	return viewer{tab: c.TabID}
}

// full reports whether the viewer sees tab id in full.
func (v viewer) full(id string) bool {
	return v.all || v.tab != "" && (id == v.tab || v.opened[id])
}

// withOpened is v knowing which of the tabs ts were opened for its agent:
// those whose opened_by is its tab, or a tab opened for it, and so on.
func (v viewer) withOpened(ts []workspace.Terminal) viewer {
	if v.all || v.tab == "" {
		return v
	}
	var parent map[string]string
	for _, t := range ts {
		if t.OpenedBy != "" {
			if parent == nil {
				parent = make(map[string]string)
			}
			parent[t.ID] = t.OpenedBy
		}
	}
	if parent == nil {
		return v
	}
	// Each chain is walked once (known); it ends at v.tab, at a tab the
	// human opened, or at a tab that is gone. A chain longer than the
	// tabs loops, which opened_by cannot, and counts as not opened for v.
	known := map[string]bool{v.tab: true}
	var chain []string
	for id := range parent {
		chain = chain[:0]
		cur, mine := id, false
		for range len(parent) + 1 {
			if k, ok := known[cur]; ok {
				mine = k
				break
			}
			p, ok := parent[cur]
			if !ok {
				break
			}
			chain = append(chain, cur)
			cur = p
		}
		for _, c := range chain {
			known[c] = mine
		}
	}
	v.opened = known
	return v
}

// redact is t as a caller who may not read its tab sees it: without what
// the tab's programs wrote. The title is the name the tab was given, else
// its foreground program's name; the directory is the leader's working
// directory as the kernel has it (not OSC 7); the worktree is kept only
// when it holds that directory. (The last command is not added to a
// redacted tab: see terminalFor and termCache.convert.)
func redact(t workspace.Terminal) workspace.Terminal {
	t.Title = cmp.Or(t.Name, t.ForegroundName)
	t.Directory = t.KernelDirectory
	if !within(t.Directory, t.Worktree) {
		t.Worktree = ""
	}
	return t
}

// within reports whether directory dir is root or below it.
func within(dir, root string) bool {
	if dir == "" || root == "" {
		return false
	}
	return dir == root || strings.HasPrefix(dir, strings.TrimSuffix(root, "/")+"/")
}

// terminalFor is tab t's message as the caller of ctx may see it: the one
// way a single tab leaves terminald (lists go through termCache.convert,
// which redacts the same way). With last, a tab the caller sees in full
// carries its last finished command.
func (s *Service) terminalFor(ctx context.Context, t workspace.Terminal, last bool) *terminalv1.Terminal {
	v := viewerOf(ctx)
	if !v.full(t.ID) && v.tab != "" && t.OpenedBy != "" {
		v = v.withOpened(s.ws.List())
	}
	if !v.full(t.ID) {
		return toTerminal(redact(t))
	}
	out := toTerminal(t)
	if last {
		out.LastCommand = s.lastCommandSummary(t.ID)
	}
	return out
}
