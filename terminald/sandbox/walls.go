package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
)

// ScanRoots are where the launcher masks the sockets that exist when a tab
// starts, besides the home directory: system sockets (the system bus,
// docker.sock, nscd, the journal) live in /run, and /var/run leads there.
var ScanRoots = []string{"/run"}

// wall fills in the namespace walls of rules for s: the private /tmp, the
// hidden runtime directories, what must stay in view, which sockets stay
// connectable and where sockets are masked. dir is the tab's resolved
// directory; private are the temporary directories inside the private
// /tmp.
func (r *Rules) wall(s Spec, dir string, private []string) error {
	r.Isolate = true
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if s.Tmp != "" {
		if !filepath.IsAbs(s.Tmp) || filepath.Clean(s.Tmp) != s.Tmp || within(s.Tmp, "/tmp") {
			return fmt.Errorf("sandbox: private /tmp %q must be a clean absolute path outside /tmp", s.Tmp)
		}
		r.Tmp = s.Tmp
		r.WriteDirs = append(r.WriteDirs, private...)
	}
	covered := func(p string) bool {
		return (r.Tmp != "" && within(p, "/tmp")) || slices.ContainsFunc(r.Hide, func(h string) bool { return within(p, h) })
	}
	for _, h := range []string{getenv("XDG_RUNTIME_DIR"), s.Layout.Runtime} {
		if filepath.IsAbs(h) && !covered(resolve(h)) {
			r.Hide = append(r.Hide, resolve(h))
		}
	}
	// Allowed sockets, then everything the tab works with, stay in view.
	if s.Layout.MCPSocket != "" {
		r.Allow = append(r.Allow, resolve(s.Layout.MCPSocket))
	}
	for _, p := range s.Sockets {
		q, err := expandHome(p, s.Home)
		if err != nil {
			return err
		}
		r.Allow = append(r.Allow, resolve(q))
		r.Sockets = append(r.Sockets, resolve(q))
	}
	candidates := slices.Concat(r.Allow, []string{dir, resolve(s.Home)}, r.WriteDirs, r.WriteFiles)
	for _, p := range candidates {
		if covered(p) && !slices.Contains(private, p) && !slices.Contains(r.Hide, p) && p != "/tmp" {
			r.Keep = append(r.Keep, p)
		}
	}
	// A fresh runtime directory is the tab's own to write (an editor's
	// socket, a tool's lock), unless something kept lies beneath it: a
	// writable root covers what is bound beneath it, too.
	for _, h := range r.Hide {
		if !slices.ContainsFunc(r.Keep, func(k string) bool { return within(k, h) }) {
			r.WriteDirs = append(r.WriteDirs, h)
		}
	}
	for _, root := range append([]string{resolve(s.Home)}, ScanRoots...) {
		if root := resolve(root); !covered(root) {
			r.Scan = append(r.Scan, root)
		}
	}
	for _, l := range []*[]string{&r.Hide, &r.Keep, &r.Allow, &r.Scan, &r.Sockets} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	r.tidy()
	return nil
}
