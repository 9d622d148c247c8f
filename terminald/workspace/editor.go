package workspace

import (
	"path/filepath"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// listenArg returns the address the program pid was told to listen on
// (`--listen ADDR`, as Neovim takes it), or "". A tab whose foreground
// program listens on its window's editor socket is that window's editor
// (editord starts it so, and so does `phantom edit`). The command line is
// the program's to rewrite: this only labels the tab, it decides nothing.
//
// known is false when the command line could not be read or was empty: a
// process in the middle of its exec already has its new name but not yet
// its arguments, so the answer must be asked again, not remembered.
func listenArg(pid int) (listen string, known bool) {
	argv, err := procfs.Default.Cmdline(pid)
	if err != nil || len(argv) == 0 {
		return "", false
	}
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "--listen" {
			return argv[i+1], true
		}
	}
	return "", true
}

// isEditor reports whether a tab of window whose foreground program
// listens on listen is an editor of the window: its own (the human's), or
// the editor of a sandboxed agent tab there.
func (w *Workspace) isEditor(window, listen string) bool {
	if listen == "" {
		return false
	}
	l := w.opts.Layout
	return listen == l.EditorSocket(window) || listen == l.SandboxedEditorSocket(window, filepath.Base(filepath.Dir(listen)))
}
