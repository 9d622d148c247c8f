package servers

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// Scope is which servers a caller may see, restart and name by id. An
// agent's scope is its own confinement's servers alone: another tab's
// servers run in that tab's sandbox, and their ids, roots and commands
// say what that tab works on; restarting one would disturb that tab's
// agent. The human (outside Phantom) sees and restarts every server.
type Scope struct {
	all bool
	key string
}

// Everyone is the human's scope: every server.
var Everyone = Scope{all: true}

// Own is the scope of an agent whose calls run in c: the servers of c
// alone (those whose ids end in "@" + c.Key).
func Own(c Confinement) Scope { return Scope{key: c.Key} }

// ScopeOf is the scope of a call in conf: an agent's own confinement, or
// every server for the human's call.
func ScopeOf(conf Confinement, forAgent bool) Scope {
	if forAgent {
		return Own(conf)
	}
	return Everyone
}

// covers reports whether s is in the scope.
func (sc Scope) covers(s *Server) bool { return sc.all || s.conf.Key == sc.key }

// List describes the servers of scope, by id.
func (r *Registry) List(sc Scope) []Info {
	var out []Info
	for _, s := range r.snapshot(sc) {
		out = append(out, s.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// snapshot is the servers of scope, in no order.
func (r *Registry) snapshot(sc Scope) []*Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Server
	for _, s := range r.servers {
		if sc.covers(s) {
			out = append(out, s)
		}
	}
	return out
}

// get finds the server id within scope. A server outside it is reported
// as missing, and the list of running ones names only those within it:
// an agent learns nothing of other confinements' servers.
func (r *Registry) get(id string, sc Scope) (*Server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.servers[id]; ok && sc.covers(s) {
		return s, nil
	}
	var ids []string
	for _, k := range slices.Sorted(maps.Keys(r.servers)) {
		if sc.covers(r.servers[k]) {
			ids = append(ids, k)
		}
	}
	return nil, fmt.Errorf("no language server %q among yours (running: %v): %w", id, ids, errdefs.ErrNotFound)
}
