package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// editorDir prepares the directory a sandboxed editor's socket goes in
// (CreateSpec.EditorSocket) and, when ts is sandboxed, keeps that one
// directory of Phantom's runtime directory in view and writable in its
// sandbox. Inside the walls the runtime directory is a private, empty
// tmpfs, and without them it is protected from writes, so this is the only
// place where the sandboxed Neovim can create a socket that editord, on
// the host, can reach. The directory is made afresh: whatever the socket
// name then leads to is what this tab made itself, never a link to
// another editor's socket left there before.
func (w *Workspace) editorDir(ts *tabSpec, window, sock string) error {
	dir := filepath.Dir(sock)
	if sock != w.opts.Layout.SandboxedEditorSocket(window, filepath.Base(dir)) {
		return invalid("editor_socket", fmt.Sprintf("%q is not a socket of a sandboxed editor of window %s (those are %s)",
			sock, window, w.opts.Layout.SandboxedEditorSocket(window, "TAB")))
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("tab %s: create the editors' directory: %w: %w", ts.id, err, errdefs.ErrFailedPrecondition)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("tab %s: clear the editor's old directory: %w: %w", ts.id, err, errdefs.ErrFailedPrecondition)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("tab %s: create the editor's directory: %w: %w", ts.id, err, errdefs.ErrFailedPrecondition)
	}
	if ts.launcher == "" {
		return nil // not sandboxed: the runtime directory is in reach
	}
	real, err := filepath.EvalSymlinks(dir) // rules name resolved paths
	if err != nil {
		return fmt.Errorf("tab %s: resolve the editor's directory: %w: %w", ts.id, err, errdefs.ErrFailedPrecondition)
	}
	r := &ts.rules
	r.WriteDirs = append(r.WriteDirs, real)
	slices.Sort(r.WriteDirs)
	if r.Isolate {
		r.Keep = append(r.Keep, real)
		slices.Sort(r.Keep)
	}
	return nil
}
