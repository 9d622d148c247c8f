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

// fullView says, tab by tab of a list, whether the caller sees it in
// full; nil means every tab (the human).
type fullView []bool

// at reports whether the caller sees the list's i-th tab in full.
func (f fullView) at(i int) bool { return f == nil || f[i] }

// sees says which of the tabs ts (every tab, for the opened_by chains) v
// sees in full: its own, those whose opened_by is its tab, or a tab
// opened for it, and so on. A list is cheap to judge: no map unless a tab
// was opened for the agent of a tab opened for v's.
func (v viewer) sees(ts []workspace.Terminal) fullView {
	if v.all {
		return nil
	}
	out := make(fullView, len(ts))
	if v.tab == "" {
		return out
	}
	deeper := false
	for i, t := range ts {
		switch {
		case t.ID == v.tab, t.OpenedBy == v.tab:
			out[i] = true
		case t.OpenedBy != "":
			deeper = true
		}
	}
	if deeper {
		v.chains(ts, out)
	}
	return out
}

// chains settles the tabs of ts whose opener is neither none nor v's tab
// by following opened_by up: to a tab seen in full (seen), to a tab the
// human opened or one that is gone (not). A chain longer than the tabs
// loops, which opened_by cannot, and is not seen.
func (v viewer) chains(ts []workspace.Terminal, out fullView) {
	index := make(map[string]int, len(ts))
	settled := make([]bool, len(ts))
	for i, t := range ts {
		index[t.ID] = i
		settled[i] = out[i] || t.OpenedBy == ""
	}
	var chain []int
	for i := range ts {
		chain = chain[:0]
		cur, mine := i, false
		for range len(ts) + 1 {
			if settled[cur] {
				mine = out[cur]
				break
			}
			chain = append(chain, cur)
			p, ok := index[ts[cur].OpenedBy]
			if !ok {
				break
			}
			cur = p
		}
		for _, c := range chain {
			out[c], settled[c] = mine, true
		}
	}
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
	if !viewerOf(ctx).seesOne(t, s.ws.List) {
		return toTerminal(redact(t))
	}
	out := toTerminal(t)
	if last {
		out.LastCommand = s.lastCommandSummary(t.ID)
	}
	return out
}

// seesOne reports whether v sees tab t in full, calling list for every
// tab only when an opened_by chain may lead from t to v's tab.
func (v viewer) seesOne(t workspace.Terminal, list func() []workspace.Terminal) bool {
	switch {
	case v.all:
		return true
	case v.tab == "":
		return false
	case t.ID == v.tab || t.OpenedBy == v.tab:
		return true
	case t.OpenedBy == "":
		return false
	}
	ts := list()
	full := v.sees(ts)
	for i := range ts {
		if ts[i].ID == t.ID {
			return full.at(i)
		}
	}
	return false
}
