package servers

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/phantom-dev/phantom/lspd/lsp"
)

// maxWatchedDirs bounds the directories watched per root (inotify watches
// are a per-user resource shared with every other program).
const maxWatchedDirs = 2000

// skipDir says which directories are neither watched nor searched for
// source files: hidden ones (.git), dependencies and build output.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__" || name == "vendor"
}

// watcher follows the files under a root and reports each change.
type watcher struct {
	w    *fsnotify.Watcher
	done chan struct{}
}

// newWatcher watches root's directories and calls changed with each
// changed path and its LSP change type, from one goroutine.
func newWatcher(root string, changed func(path string, kind int)) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{w: fw, done: make(chan struct{})}
	n := 0
	add := func(dir string) {
		_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return nil
			}
			if p != dir && skipDir(e.Name()) || n >= maxWatchedDirs {
				return filepath.SkipDir
			}
			if fw.Add(p) == nil {
				n++
			}
			return nil
		})
	}
	add(root)
	go func() {
		defer close(w.done)
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				kind := lsp.FileChanged
				switch {
				case ev.Has(fsnotify.Create):
					kind = lsp.FileCreated
					if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
						add(ev.Name)
						continue
					}
				case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
					kind = lsp.FileDeleted
				case ev.Has(fsnotify.Write):
				default:
					continue
				}
				changed(ev.Name, kind)
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return w, nil
}

// close stops watching and waits for the goroutine.
func (w *watcher) close() {
	w.w.Close()
	<-w.done
}
