package sandbox

import "slices"

// Within narrows r, the rules computed for a tab opened on behalf of a
// sandboxed caller, to what the caller's own rules outer may write: such a
// tab is no more privileged than the agent that asked for it, wherever its
// directory is. What stays of r's writable paths:
//
//   - those beneath a directory outer may write;
//   - the tab's own private /tmp (r.Tmp), which is nobody else's — and
//     the caller's private /tmp covers nothing of the host's /tmp;
//   - the working tree of a linked worktree whose repository's common git
//     directory outer may write (the agent's own repository's worktrees,
//     as add_worktree makes them): hooks and configuration there already
//     run in that worktree, so writing its files gives the agent nothing
//     its repository does not.
//
// A file outer names itself stays too. Sockets are narrowed to those outer
// allows; everything else (walls, devices) is r's.
func (r Rules) Within(outer Rules) Rules {
	under := func(p string, dirs []string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return within(p, d) })
	}
	// Behind the walls, a writable path in /tmp that is not bound back
	// from the host (Keep) is in the tab's private /tmp: the caller's
	// covers none of the host's /tmp, and the new tab's is its own.
	private := func(rr Rules, p string) bool {
		return rr.Tmp != "" && within(p, "/tmp") && !slices.Contains(rr.Keep, p)
	}
	outerDirs := slices.DeleteFunc(slices.Clone(outer.WriteDirs), func(d string) bool { return private(outer, d) })
	mayWrite := func(p string) bool {
		return private(r, p) || under(p, outerDirs) || r.Tmp != "" && within(p, r.Tmp)
	}
	var dirs []string
	for _, d := range r.WriteDirs {
		if mayWrite(d) {
			dirs = append(dirs, d)
		} else if common := linkedCommonDir(d); common != "" && under(common, outerDirs) {
			dirs = append(dirs, d)
		}
	}
	var files []string
	for _, f := range r.WriteFiles {
		if mayWrite(f) || slices.Contains(outer.WriteFiles, f) {
			files = append(files, f)
		}
	}
	keep := func(list, allowed []string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(p string) bool { return !slices.Contains(allowed, p) })
	}
	r.WriteDirs, r.WriteFiles = dirs, files
	r.Allow, r.Vouch, r.Sockets = keep(r.Allow, outer.Allow), keep(r.Vouch, outer.Vouch), keep(r.Sockets, outer.Sockets)
	return r
}
