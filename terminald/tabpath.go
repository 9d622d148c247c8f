package terminald

import (
	"path/filepath"
	"slices"
	"strings"
)

// defaultPath is what a shell searches when PATH is unset (Debian's
// login default); kept behind the binary's directory so that a tab
// without PATH still finds the usual programs.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// tabEnviron is the environment every tab starts from: terminald's own
// (that of whoever ran `phantom up`) with the directory of the phantom
// binary terminald runs from first in PATH. `phantom` in a tab is then
// the running Phantom, whatever the PATH of `phantom up` held: an agent
// config's `phantom +mcp-server` bridge starts, and a tab's CLI never
// talks to a different build. exe empty leaves env as it is.
func tabEnviron(env []string, exe string) []string {
	if exe == "" {
		return env
	}
	dir := filepath.Dir(exe)
	path, i := defaultPath, -1
	for j, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, i = v, j
		}
	}
	// The directory once, first: a later copy would only be searched
	// again for nothing.
	parts := slices.DeleteFunc(strings.Split(path, ":"), func(p string) bool { return filepath.Clean(p) == dir })
	kv := "PATH=" + strings.Join(append([]string{dir}, parts...), ":")
	out := slices.Clone(env)
	if i < 0 {
		return append(out, kv)
	}
	out[i] = kv
	return out
}
