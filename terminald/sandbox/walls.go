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
		if !filepath.IsAbs(s.Tmp) || filepath.Clean(s.Tmp) != s.Tmp || s.Tmp == "/tmp" {
			return fmt.Errorf("sandbox: private /tmp %q must be a clean absolute path other than /tmp", s.Tmp)
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
	// Allowed sockets, then everything the tab works with, stay in view
	// (read-only unless writable anyway).
	if s.Layout.MCPSocket != "" {
		r.Allow = append(r.Allow, resolve(s.Layout.MCPSocket))
		r.Vouch = append(r.Vouch, resolve(s.Layout.MCPSocket))
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
	if s.Layout.Runtime != "" {
		// The shell integration a tab's shell sources at start.
		candidates = append(candidates, resolve(s.Layout.ShellDir()))
	}
	for _, p := range append([]string{s.Launcher}, s.Programs...) {
		if filepath.IsAbs(p) {
			candidates = append(candidates, resolve(p))
		}
	}
	for _, p := range candidates {
		if covered(p) && !slices.Contains(private, p) && !slices.Contains(r.Hide, p) && p != "/tmp" {
			r.Keep = append(r.Keep, p)
		}
	}
	// A fresh runtime directory is the tab's own to write (an editor's
	// socket, a tool's lock). What is bound back beneath it is a mount of
	// its own, read-only unless writable anyway.
	r.WriteDirs = append(r.WriteDirs, r.Hide...)
	// Scanned even when covered: a home bound back is in view again.
	for _, root := range append([]string{s.Home}, ScanRoots...) {
		r.Scan = append(r.Scan, resolve(root))
	}
	// A writable path bound back beneath the private /tmp stays a rule of
	// its own: tidy would drop it as covered by /tmp, but the bind is a
	// mount of its own, read-only unless named.
	var keptDirs, keptFiles []string
	for _, k := range r.Keep {
		switch {
		case slices.Contains(r.WriteDirs, k):
			keptDirs = append(keptDirs, k)
		case slices.Contains(r.WriteFiles, k):
			keptFiles = append(keptFiles, k)
		}
	}
	r.tidy()
	// So do the temporary directories inside the private /tmp ($TMPDIR
	// under /tmp): the launcher creates them there, from this list.
	r.WriteDirs = append(r.WriteDirs, private...)
	r.WriteDirs = append(r.WriteDirs, keptDirs...)
	r.WriteFiles = append(r.WriteFiles, keptFiles...)
	for _, l := range []*[]string{&r.WriteDirs, &r.WriteFiles, &r.Hide, &r.Keep, &r.Allow, &r.Scan, &r.Sockets} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return nil
}
