package paths

import "path/filepath"

// SandboxedEditorsDir holds the directories of the sandboxed editors of
// window: one per sandboxed agent tab that asked for an editor there
// (see SandboxedEditorSocket). It lies in the runtime directory, out of
// every sandboxed tab's sight but for the one directory its editor keeps.
func (l Layout) SandboxedEditorsDir(window string) string {
	return filepath.Join(l.Runtime, "editors", safeName(window))
}

// SandboxedEditorSocket is where the editor that a sandboxed agent in tab
// drives in window listens. Its directory is created by terminald on the
// host when it opens that editor's tab, and is the one path of the
// runtime directory the editor's sandbox keeps in view and writable: so
// the socket the sandboxed Neovim creates is on the host, where editord
// connects (and finds it again after a restart), and is one that tab made
// itself.
func (l Layout) SandboxedEditorSocket(window, tab string) string {
	return filepath.Join(l.SandboxedEditorsDir(window), safeName(tab), "nvim.sock")
}

// safeName reduces an id to characters safe in a file name.
func safeName(id string) string {
	safe := []byte(id)
	for i, c := range safe {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			safe[i] = '_'
		}
	}
	if len(safe) == 0 {
		return "_"
	}
	return string(safe)
}
